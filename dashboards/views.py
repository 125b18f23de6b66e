"""Streamlit pieces the pages share: the card CSS, the step-through replay view, verdict
tables. They render what `game_replay` and the warehouse queries return; no logic here
beyond choosing what to show.

Session-state keys are prefixed by the page that owns the view (`replay_…`, `check_…`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import urlencode

import orjson
import streamlit as st

from dashboards import cache, data
from dashboards import components as ui
from dashboards.game_replay import SETUP_HAND, GameReplay, ReplayStep
from dashboards.report import render_hand_report, score_table_html, totals_html

SUPPORT_VIEW = "Support view (every hand)"
PLAYER_VIEW = "Player view"
VIEWS = (SUPPORT_VIEW, PLAYER_VIEW)


def inject_css() -> None:
    """The cards' stylesheet, once per run (a style-only st.html takes no space)."""
    st.html(ui.style_tag())


def html(body: str) -> None:
    st.html(body)


@dataclass(frozen=True, slots=True)
class ReplayKeys:
    """The session-state keys of one replay view."""

    prefix: str

    @property
    def hand(self) -> str:
        return f"{self.prefix}_hand"

    @property
    def step(self) -> str:
        return f"{self.prefix}_step"

    @property
    def view(self) -> str:
        return f"{self.prefix}_view"

    @property
    def viewer(self) -> str:
        return f"{self.prefix}_viewer"

    @property
    def movers(self) -> str:
        """The move list's player filter."""
        return f"{self.prefix}_movers"

    def move(self, step: ReplayStep) -> str:
        """The move list's button for `step`."""
        return f"{self.prefix}_move_{step.index}"


def hand_label(replay: GameReplay, hand: int) -> str:
    if hand == SETUP_HAND:
        return "Header"
    score = replay.score_of(hand)
    bad = sum(1 for s in replay.hand_steps(hand) if s.flagged)
    text = f"Hand {hand}"
    if score is not None:
        text += f" · won by {', '.join(score.winners)}"
    if bad:
        text += f" · ⚠ {bad}"
    return text


def go_to(keys: ReplayKeys, step: ReplayStep | None) -> None:
    """Point the view at `step` (a widget callback, so it runs before the next render)."""
    if step is None:
        return
    st.session_state[keys.hand] = step.hand
    st.session_state[keys.step] = step.number


def _step_by(keys: ReplayKeys, replay: GameReplay, delta: int) -> None:
    current = current_step(keys, replay)
    if current is None:
        return
    index = current.index + delta
    if 0 <= index < len(replay.steps):
        target = replay.steps[index]
        if target.hand not in replay.hands:  # the setup lines when they hold nothing to see
            return
        go_to(keys, target)


def _next_violation(keys: ReplayKeys, replay: GameReplay) -> None:
    found = replay.next_violation(current_step(keys, replay))
    if found is None:
        st.session_state[f"{keys.prefix}_notice"] = "No violation after this step."
    else:
        go_to(keys, found)


def _reset_step(keys: ReplayKeys) -> None:
    st.session_state[keys.step] = 1


def reset_view(keys: ReplayKeys) -> None:
    """Another game: start at its first hand's first step."""
    st.session_state.pop(keys.hand, None)
    st.session_state[keys.step] = 1


def normalise_state(keys: ReplayKeys, replay: GameReplay) -> None:
    """Bring hand and step into range (a deep link or an old session may point anywhere)."""
    ss = st.session_state
    hands = replay.hands
    if ss.get(keys.hand) not in hands:
        ss[keys.hand] = hands[0]
        ss[keys.step] = 1
    steps = replay.hand_steps(ss[keys.hand])
    try:
        number = int(ss.get(keys.step) or 1)
    except (TypeError, ValueError):
        number = 1
    ss[keys.step] = min(max(number, 1), len(steps))
    if ss.get(keys.view) not in VIEWS:
        ss[keys.view] = SUPPORT_VIEW
    if replay.players and ss.get(keys.viewer) not in replay.players:
        ss[keys.viewer] = replay.players[0]


def current_step(keys: ReplayKeys, replay: GameReplay) -> ReplayStep | None:
    ss = st.session_state
    hand = ss.get(keys.hand)
    number = ss.get(keys.step)
    if not isinstance(hand, int) or not isinstance(number, int):
        return None
    return replay.step_at(hand, number)


def replay_view(
    replay: GameReplay,
    keys: ReplayKeys,
    *,
    link: Callable[[ReplayStep, str | None], str] | None = None,
    report: Callable[[int, int, str | None], str] | None = None,
) -> ReplayStep | None:
    """The step-through view: controls, the event and its verdict, the table, the move list.

    `link(step, viewer)` gives the step's deep link (None: no deep links, an upload);
    `report(hand, seq, viewer)` gives the dispute report (computed only when downloaded).
    """
    if not replay.hands:
        st.info("Nothing to replay: the game has no usable lines.")
        return None
    normalise_state(keys, replay)
    ss = st.session_state

    top = st.columns([2, 2, 2], vertical_alignment="bottom")
    top[0].selectbox(
        "Hand", replay.hands, key=keys.hand, format_func=lambda h: hand_label(replay, h),
        on_change=_reset_step, args=(keys,),
    )
    top[1].radio("View", VIEWS, key=keys.view, horizontal=True)
    player_view = ss[keys.view] == PLAYER_VIEW
    if player_view:
        top[2].selectbox("As player", list(replay.players), key=keys.viewer)
    viewer: str | None = ss.get(keys.viewer) if player_view else None

    steps = replay.hand_steps(ss[keys.hand])
    nav = st.columns([1, 1, 1.4, 5], vertical_alignment="bottom")
    # keyboard stepping: ← and → step, N jumps to the next violation (ignored while typing)
    nav[0].button("◀ Previous", key=f"{keys.prefix}_prev", on_click=_step_by, args=(keys, replay, -1),
                  width="stretch", shortcut="Left", help="Previous step (←)")
    nav[1].button("Next ▶", key=f"{keys.prefix}_next", on_click=_step_by, args=(keys, replay, 1),
                  width="stretch", type="primary", shortcut="Right", help="Next step (→)")
    nav[2].button("Next violation ⚠", key=f"{keys.prefix}_nextbad", on_click=_next_violation,
                  args=(keys, replay), width="stretch", disabled=not any(s.flagged for s in replay.steps),
                  shortcut="N", help="The next step that broke a rule (N)")
    if len(steps) > 1:
        nav[3].slider("Step", 1, len(steps), key=keys.step)
    notice = ss.pop(f"{keys.prefix}_notice", None)
    if notice:
        st.toast(notice)

    step = current_step(keys, replay)
    if step is None:
        return None
    main, moves = st.columns([5, 2], gap="medium")
    with moves:
        move_list(replay, keys, step, viewer)
    with main:
        render_step(replay, step, viewer)

    below = st.columns([3, 2], vertical_alignment="center")
    if link is not None:
        url = link(step, viewer)
        below[0].markdown(f":material/link: [Link to this step]({url})")
        below[0].code(url, language=None)
    if report is not None and step.hand != SETUP_HAND:
        view = f"{viewer}'s player view" if viewer else "support view"
        below[1].download_button(
            f"Download the dispute report ({view})",
            data=lambda: report(step.hand, step.seq, viewer),
            file_name=f"{replay.game}-hand-{step.hand}-seq-{step.seq}{'-' + viewer if viewer else ''}.html",
            mime="text/html",
            key=f"{keys.prefix}_report",
            on_click="ignore",
            help="About this step: a summary with the verdict and its rule, the step and its "
                 "neighbours, the whole hand folded below"
                 + (" — only what this player could see, no server paths" if viewer else ""),
        )
    score = replay.score_of(step.hand)
    if score is not None:
        with st.expander(f"Hand {step.hand} scores", expanded=False):
            html(f'<div class="hk">{score_table_html(score)}</div>')
            if replay.totals and len(replay.scores) > 1:
                html(f'<div class="hk">{totals_html(replay)}</div>')
    return step


def _move_text(step: ReplayStep, viewer: str | None) -> str:
    text = ui.public_text(step.kind, step.raw, step.text, viewer) if viewer else step.text
    return text.replace("[", "(").replace("]", ")")  # no markdown links in a button label


def move_list(replay: GameReplay, keys: ReplayKeys, current: ReplayStep, viewer: str | None) -> None:
    """Every line of the hand, numbered by seq, with its verdict; click one to go there.
    Flagged lines are red; the filter keeps one player's moves (the rest stay a click away)."""
    steps = replay.hand_steps(current.hand)
    actors = list(replay.players) or sorted({s.actor for s in steps if s.actor})
    st.markdown(f"**Moves of hand {current.hand}**" if current.hand != SETUP_HAND else "**Header lines**")
    chosen = st.multiselect("Moves by", actors, key=keys.movers, placeholder="Every player",
                            label_visibility="collapsed")
    shown = [s for s in steps if not chosen or s.actor in chosen or s is current]
    flagged = sum(1 for s in steps if s.flagged)
    st.caption(f"{len(shown)} of {len(steps)} lines · {flagged} flagged · ← → step, N next violation")
    with st.container(height=560, border=True, key=f"{keys.prefix}_moves"):
        for s in shown:
            icon = "✗" if s.violations else ("⚠" if s.set_aside else "✓")
            label = f"{s.seq:>3} {icon} {_move_text(s, viewer)}"
            if s.flagged:
                label = f":red[**{label}**]"
            st.button(label, key=keys.move(s), on_click=go_to, args=(keys, s), width="stretch",
                      type="primary" if s is current else "tertiary",
                      help=f"{s.label}" + (" — " + ", ".join(v.code.value for v in s.violations) if s.violations else ""))


def _private(step: ReplayStep, viewer: str | None) -> bool:
    """Whether the step's details are hidden from `viewer` (another player's cards)."""
    if viewer is None:
        return False
    return step.kind in ("draw", "penalty", "deal", "reshuffle") and step.actor != viewer


def render_step(replay: GameReplay, step: ReplayStep, viewer: str | None) -> None:
    n_steps = len(replay.hand_steps(step.hand))
    hidden = _private(step, viewer)
    text = ui.public_text(step.kind, step.raw, step.text, viewer) if viewer else step.text
    left, right = st.columns([2, 3], gap="large")
    with left:
        where = f" · {step.file}:{step.line}" if step.file and step.line else ""
        hand = "header" if step.hand == SETUP_HAND else f"hand {step.hand}"
        st.caption(f"Step {step.number} of {n_steps} · {hand} · seq {step.seq}{where}")
        html(f'<div class="hk"><div class="hk-event">{escape(text)}</div>'
             f"{ui.verdict_html(step.violations, redact=hidden)}"
             f"{ui.why_html(step.why) if not hidden else ''}"
             f"{ui.set_aside_html(step.set_aside, step.seq)}</div>")
        card = step.raw.get("card") if step.raw and step.kind == "play" else None
        card = card if isinstance(card, str) else None
        if step.kind in ("play", "draw", "pass") and (viewer is None or viewer == step.actor):
            decision = ui.decision_html(step.before, step.actor, card, bool(step.violations))
            if decision:
                st.markdown("**Could they have played something else?**")
                html(decision)
        if not hidden:
            with st.expander("The log line"):
                st.code(orjson.dumps(step.raw, option=orjson.OPT_INDENT_2).decode() if step.raw else "-",
                        language="json")
    with right:
        st.markdown("**The table after this step**" + (f" — as **{viewer}** saw it" if viewer else ""))
        html(ui.table_html(step.after, replay.players, viewer=viewer, played=card if not hidden else None,
                           played_by=step.actor))


def verdict_summary(replay: GameReplay) -> None:
    """One line on the game: ruleset, players, status, violations."""
    winners = ", ".join(replay.match_winners) or "—"
    html(
        f'<div class="hk">{ui.status_badge(replay.status)} &nbsp; ruleset <b>{escape(replay.ruleset or "?")}</b>'
        f" · players {escape(', '.join(replay.players))} · {len(replay.steps)} lines · "
        f"{len(replay.violations)} violation{'s' if len(replay.violations) != 1 else ''} · "
        f"match winner{'s' if len(replay.match_winners) != 1 else ''}: {escape(winners)}</div>"
    )
    if replay.game_violations:
        with st.expander(f"{len(replay.game_violations)} finding(s) not tied to a replayed line"):
            html(f'<div class="hk">{ui.verdict_html(replay.game_violations)}</div>')


def report_for(replay: GameReplay) -> Callable[[int, int, str | None], str]:
    return lambda hand, seq, viewer: render_hand_report(replay, hand, seq=seq, viewer=viewer)


def query_int(params: Any, name: str) -> int | None:
    """An integer query parameter, or None when absent or not a number."""
    value = params.get(name)
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def require_warehouse() -> None:
    """Stop the page with an explanation when there is no warehouse to read."""
    problem = cache.warehouse_problem()
    if problem:
        st.warning(problem)
        st.page_link("pages/check_log.py", label="Check a log file instead", icon=":material/upload_file:")
        st.stop()


def game_filter(prefix: str, *, builds: bool = False) -> data.GameFilter:
    """Ruleset, date range (and server build) filters in one row, keys prefixed by page."""
    options: data.Choices = cache.query("choices")
    cols = st.columns([3, 2, 3] if builds else [3, 2])
    rulesets = cols[0].multiselect("Ruleset", options.rulesets, key=f"{prefix}_rulesets",
                                   placeholder="All rulesets")
    start = end = None
    if options.first_day is not None and options.last_day is not None:
        picked = cols[1].date_input(
            "Games started", value=(options.first_day, options.last_day), key=f"{prefix}_dates",
            min_value=options.first_day, max_value=options.last_day,
        )
        if isinstance(picked, tuple) and len(picked) == 2:
            start, end = picked
        # keep the filter open-ended when it spans everything: new games are then included
        if start == options.first_day:
            start = None
        if end == options.last_day:
            end = None
    chosen_builds: list[str] = []
    if builds:
        chosen_builds = cols[2].multiselect("Server build", options.builds, key=f"{prefix}_builds",
                                            placeholder="All builds")
    return data.GameFilter(tuple(rulesets), start, end, tuple(chosen_builds))


def replay_url(game: str, *, hand: int | None = None, step: int | None = None, seq: int | None = None) -> str:
    """A relative link to the Replay page (opens in a new tab from tables)."""
    params: dict[str, str] = {"game": game}
    if seq is not None:
        params["seq"] = str(seq)
    if hand is not None:
        params["hand"] = str(hand)
    if step is not None:
        params["step"] = str(step)
    return "replay?" + urlencode(params)


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def period_axis(frame: Any) -> str:
    """The Altair x field for a per-day or per-week `period` column: bars a whole unit wide."""
    unit = frame["unit"][0] if len(frame) and "unit" in frame.columns else "day"
    return "yearweek(period):T" if unit == "week" else "yearmonthdate(period):T"
