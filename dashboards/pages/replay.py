"""Replay: step through one hand of a warehouse game. The URL (`?game=…&hand=…&step=…`,
plus `view=player&player=…`) always names the view on screen, so any step can be shared."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from dashboards import cache, views
from dashboards.game_replay import GameReplay, ReplayStep

KEYS = views.ReplayKeys("replay")
URL_SEEN = "replay_url_seen"  # the query string this session last read or wrote
LAST = "replay_last_params"  # the view last shown, restored when the page is reopened bare


def adopt_url(replay_of: dict[str, GameReplay | None]) -> None:
    """A deep link (or a drill-down from another page) sets game, hand, step and view."""
    ss = st.session_state
    params = st.query_params.to_dict()
    if not params.get("game") and not ss.get("replay_game"):
        params = dict(ss.get(LAST) or {})
    signature = urlencode(sorted(params.items()))
    if not params.get("game") or ss.get(URL_SEEN) == signature:
        return
    ss[URL_SEEN] = signature
    ss["replay_game"] = params["game"]
    hand = views.query_int(params, "hand")
    step = views.query_int(params, "step")
    seq = views.query_int(params, "seq")
    if seq is not None:  # drill-downs name the line; the replay knows its hand and step
        replay = replay_of.setdefault(params["game"], cache.replay_game(params["game"]))
        found = next((s for s in replay.steps if s.seq == seq), None) if replay else None
        if found is not None:
            hand, step = found.hand, found.number
    ss[KEYS.hand] = hand if hand is not None else 1
    ss[KEYS.step] = step if step is not None else 1
    if params.get("view") == "player":
        ss[KEYS.view] = views.PLAYER_VIEW
        if params.get("player"):
            ss[KEYS.viewer] = params["player"]
    else:
        ss[KEYS.view] = views.SUPPORT_VIEW


def step_params(game: str, step: ReplayStep, viewer: str | None) -> dict[str, str]:
    params = {"game": game, "hand": str(step.hand), "step": str(step.number)}
    if viewer is not None:
        params |= {"view": "player", "player": viewer}
    return params


def step_link(game: str, step: ReplayStep, viewer: str | None) -> str:
    base = (st.context.url or "").rstrip("/")
    if not base.endswith("/replay"):
        base = base.rsplit("/", 1)[0] + "/replay" if base else "replay"
    return f"{base}?{urlencode(step_params(game, step, viewer))}"


views.inject_css()
st.title("Replay")
views.require_warehouse()

loaded: dict[str, GameReplay | None] = {}
adopt_url(loaded)
game = st.text_input("Game id", key="replay_game", placeholder="t41-0007",
                     help="Pick a game on the Games page, or paste its id.",
                     on_change=views.reset_view, args=(KEYS,))
if not game:
    st.info("Enter a game id, or open one from the Games or Compliance page.")
    st.stop()

replay = loaded.get(game) or cache.replay_game(game)
if replay is None:
    st.error(f"No game {game!r} in the warehouse.")
    st.stop()

game_id = replay.game
views.verdict_summary(replay)
shown = views.replay_view(
    replay, KEYS,
    link=lambda step, viewer: step_link(game_id, step, viewer),
    report=lambda hand: cache.hand_report(game_id, hand),
)
if shown is not None:
    viewer = st.session_state.get(KEYS.viewer) if st.session_state.get(KEYS.view) == views.PLAYER_VIEW else None
    params = step_params(game_id, shown, viewer)
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
    st.session_state[URL_SEEN] = urlencode(sorted(params.items()))
    st.session_state[LAST] = params
