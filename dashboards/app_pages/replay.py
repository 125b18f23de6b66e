"""Replay: step through one hand of a warehouse game. The URL (`?game=…&hand=…&step=…&seq=…`,
plus `view=player&player=…`) always names the view on screen, so any step can be shared; a
link that names only the game opens at its first violation, and one that names something
the game does not have says so, and what it has. Under the step, the support desk opens a
case about it (`ingest.cases`, listed on the Cases page)."""

from __future__ import annotations

from html import escape
from urllib.parse import urlencode

import streamlit as st

from dashboards import cache, views
from engine import render as components
from engine.cards import pretty_cards
from engine.replay import SETUP_HAND, GameReplay, ReplayStep, clean_game_id, step_without_hand
from engine.whatif import BranchStep
from ingest import cases, read
from ingest.store import WarehouseError

KEYS = views.ReplayKeys("replay")
URL_SEEN = "replay_url_seen"  # the query string this session last read or wrote
LAST = "replay_last_params"  # the view last shown, restored when the page is reopened bare
NOTICE = "replay_link_notice"  # what a deep link asked for that the game does not have


def _hands_text(replay: GameReplay) -> str:
    return ", ".join(f"{h} ({len(replay.hand_steps(h))} steps)" if h != SETUP_HAND else "0 (the header)"
                     for h in replay.hands)


def resolve_link(replay: GameReplay, hand: int | None, step: int | None, seq: int | None,
                 asked: dict[str, str]) -> tuple[ReplayStep, str | None]:
    """The step a deep link names, and what to tell the user when it names none (the
    link's own words, then what the game has): never silently another step."""
    what = ", ".join(f"{k}={v}" for k, v in asked.items() if k in ("hand", "step", "seq"))
    first = replay.hand_steps(replay.hands[0])[0]
    bad = [k for k in ("hand", "step", "seq") if k in asked and views.query_int(asked, k) is None]
    if bad:
        return first, (f"The link's {' and '.join(bad)} ({what}) is not a number. Showing "
                       f"{first.label}; game {replay.game} has hands {_hands_text(replay)}.")
    if seq is not None:
        found = replay.by_seq(seq)
        if found is None:
            return first, (f"The link asked for seq {seq}, but game {replay.game}'s lines have seqs "
                           f"{replay.seq_span()}. Showing {first.label}.")
        if step is not None and (hand, step) != (found.hand, found.number):
            return found, (f"The link named both {what}; they disagree, and seq {seq} is "
                           f"{found.label}, shown here.")
        return found, None
    if step is not None and hand is None:  # the CLI's rule too (`replay --step` needs `--hand`)
        shown = replay.next_violation(None) or first
        return shown, (f"The link's step={step} names no hand: {step_without_hand()}. Showing "
                       f"{shown.label}{' (the first violation)' if shown.flagged else ''}.")
    if hand is None and step is None:  # the game alone: where a dispute starts, its first violation
        return replay.next_violation(None) or first, None
    if hand is not None and hand not in replay.hands:
        return first, (f"The link asked for {what}, but game {replay.game} has no hand {hand}: its "
                       f"hands are {_hands_text(replay)}. Showing {first.label}.")
    steps = replay.hand_steps(hand if hand is not None else replay.hands[0])
    if step is not None and not 1 <= step <= len(steps):
        return steps[0], (f"The link asked for {what}, but hand {steps[0].hand} has steps 1–{len(steps)} "
                          f"(seqs {steps[0].seq}–{steps[-1].seq}). Showing {steps[0].label}.")
    return steps[(step or 1) - 1], None


def adopt_url(replay_of: dict[str, GameReplay | None]) -> None:
    """A deep link (or a drill-down from another page) sets game, hand, step and view."""
    ss = st.session_state
    params = st.query_params.to_dict()
    if not params.get("game") and not ss.get("replay_game"):
        params = dict(ss.get(LAST) or {})
    signature = urlencode(sorted(params.items()))
    game = clean_game_id(params.get("game") or "")
    if not game or ss.get(URL_SEEN) == signature:
        return
    ss[URL_SEEN] = signature
    ss["replay_game"] = game
    ss.pop(NOTICE, None)
    replay = replay_of.setdefault(game, cache.replay_game(game))
    if replay is None or not replay.hands:
        return  # the page says there is no such game
    target, notice = resolve_link(replay, views.query_int(params, "hand"), views.query_int(params, "step"),
                                  views.query_int(params, "seq"), params)
    ss[KEYS.hand], ss[KEYS.step] = target.hand, target.number
    if notice:
        ss[NOTICE] = notice
    if params.get("view") == "player":  # a player's view, never the support view
        player = (params.get("player") or "").strip()
        if player in replay.players:
            views.show_view_of(KEYS, player)
        else:
            views.show_view_of(KEYS, views.default_viewer(replay, target))
            if player:
                ss[NOTICE] = (ss.get(NOTICE, "") + f" The link asked for {player!r}'s view; the players are "
                              f"{', '.join(replay.players)}.").strip()
    else:
        views.show_view_of(KEYS, None)


def step_params(game: str, step: ReplayStep, viewer: str | None) -> dict[str, str]:
    params = {"game": game, "hand": str(step.hand), "step": str(step.number), "seq": str(step.seq)}
    if viewer is not None:
        params |= {"view": "player", "player": viewer}
    return params


def step_link(game: str, step: ReplayStep, viewer: str | None) -> str:
    base = (st.context.url or "").rstrip("/")
    if not base.endswith("/replay"):
        base = base.rsplit("/", 1)[0] + "/replay" if base else "replay"
    return f"{base}?{urlencode(step_params(game, step, viewer))}"


def _trim_game() -> None:
    st.session_state["replay_game"] = clean_game_id(st.session_state.get("replay_game") or "")
    views.reset_view(KEYS)


views.inject_css()
st.title("Replay")
views.require_warehouse()

loaded: dict[str, GameReplay | None] = {}
adopt_url(loaded)
game = st.text_input("Game id", key="replay_game", placeholder="t41-0007",
                     help="Pick a game on the Games page, or paste its id.",
                     on_change=_trim_game)
game = clean_game_id(game)
if not game:
    st.info("Enter a game id, or open one from the Games or Compliance page.")
    views.done()

replay = loaded.get(game) or cache.replay_game(game)
if replay is None:
    total, like = cache.query("find_games", read.GameSearch(text=game), 5)
    found = like["game_id"].to_list() if total else []
    hint = (f" Games whose id contains it: {', '.join(found)}{' …' if total > len(found) else ''}."
            if found else " Find games by player, date or status on the Games page.")
    st.error(f"No game {game!r} in the warehouse.{hint}")
    st.page_link("app_pages/games.py", label="Find a game", icon=":material/search:")
    views.done()

def _follow_url(game_id: str, shown: ReplayStep) -> None:
    """The URL names the view on screen (and the page reopens it when opened bare)."""
    params = step_params(game_id, shown, shown.viewer)
    if st.query_params.to_dict() != params:
        st.session_state.pop(NOTICE, None)  # said once; the URL now names the view on screen
        st.query_params.from_dict(params)
    st.session_state[URL_SEEN] = urlencode(sorted(params.items()))
    st.session_state[LAST] = params


# ------------------------------------------------------------------------ the step's move quality


def _move_quality(game_id: str, shown: ReplayStep) -> None:
    """The stored move-quality analysis of the step's decision, when there is one."""
    if shown.kind not in ("play", "draw", "pass"):
        return
    quality = cache.step_analysis(game_id, shown.seq)
    # in a player's view, only their own decisions (engine.player_view.public_analysis's rule)
    if quality is not None and (shown.viewer is None or quality["player"] == shown.viewer):
        # the summary names players as logged: their markdown characters are shown, not run
        said = "".join("\\" + c if c in "\\`*_{}[]()#+-.!|<>~$" else c for c in quality["summary"])
        text = f"Move quality ({quality['rollouts']} rollouts a move, policy {quality['policy']}): {said}"
        if quality["mistake"]:
            st.error(text, icon=":material/error:")
        elif quality["significant"]:
            st.warning(text, icon=":material/info:")
        else:
            st.success(text, icon=":material/check_circle:")


# ------------------------------------------------------------------------ what-if at this step

WHATIF = "replay_whatif"  # {"at": (game, seq), "moves": [...]} of the branch on screen
WHATIF_OPEN = "replay_whatif_open"  # whether the what-if panel is open (its expander's state)


def _whatif_play(at: tuple[str, int], move: str) -> None:
    branch = st.session_state.get(WHATIF) or {}
    moves = list(branch.get("moves", [])) if branch.get("at") == at else []
    st.session_state[WHATIF] = {"at": at, "moves": [*moves, move]}


def _branch_words(step: BranchStep) -> str:
    """A move of the branch as the replay says a line: `elif plays 7♦`, `mina draws 2 (Q♠ 5♠)`."""
    if step.move.kind == "draw":
        n = len(step.drawn)
        return f"{step.player} draws {n or ''} card{'s' if n != 1 else ''}".replace("  ", " ") + \
            (f" ({pretty_cards(step.drawn)})" if step.drawn else "")
    if step.move.kind == "pass":
        return f"{step.player} passes"
    return f"{step.player} plays {step.move.words()}"


def _whatif_reset(at: tuple[str, int]) -> None:
    st.session_state[WHATIF] = {"at": at, "moves": []}



def _what_if(game_id: str, replay: GameReplay, shown: ReplayStep) -> None:
    """The what-if panel: the moves legal instead of the recorded one, and the branch played on."""
    if shown.kind not in ("play", "draw", "pass") or not shown.seq:
        return
    at = (game_id, shown.seq)
    branch = st.session_state.get(WHATIF) or {}
    moves = tuple(branch.get("moves", [])) if branch.get("at") == at else ()
    viewer = shown.viewer  # the what-if is computed in the same view as the step shown
    title = "What if? — play another move at this step" + (f" (as {viewer} could)" if viewer else "")
    # computed only while the panel is open (its state reruns the step): a what-if reads
    # the game's lines and replays them, 0.2-0.35 s of every step on the million-hand
    # warehouse when it ran for a closed panel
    with st.expander(title, expanded=bool(moves), key=WHATIF_OPEN, on_change="rerun") as panel:
        if not panel.open:
            return
        result = cache.what_if(game_id, shown.seq, moves, viewer)
        if viewer is None and not result.stock_known:
            st.caption("The log does not tell the stock's order: the branch stops at the first draw.")
        if moves:
            st.markdown("**The branch:** " + " → ".join(views.markdown_text(_branch_words(s)) for s in result.steps))
        elif result.before and result.before.get("legal"):
            st.markdown(f"Instead of the recorded move, **{escape(result.before['legal']['player'])}** could: ")
        elif viewer is not None:
            st.markdown(f"In **{escape(viewer)}**'s view a what-if explores their own moves only; "
                        "this move was not theirs to choose.")
        else:
            st.markdown("Nobody was to move here.")
        offer = result.offered(at_end=bool(moves))  # each move in people's words: 10♥, draw 2
        if result.refused is not None:
            st.error(f"{result.refused.player} {result.refused.move.words()} is refused: {result.refused.reason()}")
        if offer and result.refused is None:
            cols = st.columns(min(8, len(offer)))
            for i, (move, words) in enumerate(offer):
                cols[i % len(cols)].button(views.markdown_text(words), key=f"replay_whatif_{i}_{move}",
                                           on_click=_whatif_play, args=(at, str(move)), width="stretch")
        if result.stopped:
            st.info(result.stopped + (f" ({len(result.unknown_cards)} unseen cards)" if result.unknown_cards else ""))
        if result.outcome is not None:
            recorded = result.recorded_outcome or {}
            st.markdown(f"**Branch:** winners {', '.join(result.outcome['winners'])} · scores "
                        f"{result.outcome.get('scores')} — **recorded:** winners "
                        f"{', '.join(recorded.get('winners') or [])} · scores {recorded.get('scores')}")
        if moves:
            st.button("Start the branch again", key="replay_whatif_reset", on_click=_whatif_reset, args=(at,))
            state = result.state
            if state is not None:
                st.markdown("**The table at the branch's end**" + (f" — as **{escape(viewer)}** would see it"
                                                                  if viewer else ""))
                views.html(components.table_html(state, replay.players))


# ------------------------------------------------------------------------ the desk: a case about this step

CASE_AGENT = "desk_agent"  # who the desk agent is, kept for the session (the Cases page's too)
CASE_OPEN = "replay_case_open_panel"  # whether the case panel is open (its expander's state)


def _open_case(game: str, step: ReplayStep) -> None:
    """The form's callback: open the case, then show it on the Cases page."""
    ss = st.session_state
    agent = (ss.get(CASE_AGENT) or "").strip()
    if not agent:
        ss["replay_case_problem"] = "Say who you are (Your name): a case records who opened it."
        return
    tags = [t for t in (ss.get("replay_case_tags") or "").replace(",", " ").split() if t]
    draft = cases.Draft(game, step.hand, step.seq, ss.get("replay_case_player"), tags,
                        ss.get("replay_case_note") or None)
    try:
        opened = cache.open_case(draft, agent)
    except (cases.CaseError, OSError, WarehouseError) as exc:
        ss["replay_case_problem"] = str(exc)
        return
    ss.pop("replay_case_problem", None)
    ss["replay_case_opened"] = opened.case_id
    ss["replay_case_note"] = ""



def _case(game_id: str, replay: GameReplay, shown: ReplayStep) -> None:
    """The desk's panel: the cases on this game, and a form to open one about the step."""
    if shown.hand == SETUP_HAND:
        return
    existing = cache.query("cases", read.CaseSearch(game=game_id), 50)
    opened_now = st.session_state.pop("replay_case_opened", None)
    if opened_now:
        st.success(f"Case {opened_now} opened.", icon=":material/folder_open:")
        st.page_link("app_pages/cases.py", label=f"Open case {opened_now}", icon=":material/folder_open:",
                     query_params={"case": opened_now})
    # the title does not name the step (its form's button does): a title that changed at
    # every step was one more element for the browser to redraw
    title = "Open a case about this step"
    if existing.height:
        title += f" — {existing.height} case{'s' if existing.height != 1 else ''} on this game"
    # its form is drawn only while the panel is open (its state reruns the step): a closed
    # panel's six widgets were redrawn at every step, ~10 ms of the browser's work; their
    # values are kept while they are not drawn
    with st.expander(title, expanded=bool(opened_now), key=CASE_OPEN, on_change="rerun") as panel:
        if not panel.open:
            return
        for row in existing.iter_rows(named=True):
            st.page_link("app_pages/cases.py", label=f"{row['case_id']} · {row['status']} · seq {row['seq']} · "
                         f"{row['player'] or '—'} · {', '.join(row['tags'] or []) or 'no tag'}",
                         icon=":material/folder:", query_params={"case": row["case_id"]})
        flagged = views.flagged_player(replay, shown) or (shown.actor if shown.actor in replay.players else None)
        if st.session_state.get("replay_case_at") != (game_id, shown.seq):
            st.session_state["replay_case_at"] = (game_id, shown.seq)
            st.session_state["replay_case_player"] = flagged or replay.players[0]
        cols = st.columns([2, 2, 2])
        cols[0].selectbox("Whose complaint", list(replay.players), key="replay_case_player",
                          help="The bundle's report is in this player's view.", persist_state="page")
        cols[1].text_input("Tags", key="replay_case_tags", placeholder="refund app-bug",
                           help="Words separated by spaces or commas.", persist_state="page")
        cols[2].text_input("Your name", key=CASE_AGENT, help="Recorded as who opened the case.",
                           persist_state="page")
        st.text_area("Note", key="replay_case_note", placeholder="What the player says; what you checked.",
                     persist_state="page")
        problem = st.session_state.pop("replay_case_problem", None)
        if problem:
            st.error(problem)
        st.button(f"Open the case on {shown.label}", key="replay_case_open", type="primary",
                  on_click=_open_case, args=(game_id, shown), icon=":material/create_new_folder:")


# ------------------------------------------------------------------------ the page


@st.fragment
def _step_area(replay: GameReplay) -> None:
    """Everything that follows the step on screen. A fragment: a step (a button, a key, the
    slider, a move-list line) reruns this alone, not the page above it."""
    game_id = replay.game
    if not views.view_chosen(KEYS):  # the session lost its view: the page decides it first
        st.rerun(scope="app")
    with views.fragment_run():
        notice = st.session_state.get(NOTICE)  # said once: stepping on takes it away
        if notice:
            st.warning(notice, icon=":material/link_off:")
        shown = views.replay_view(
            replay, KEYS,
            view_of=lambda viewer: cache.player_replay(game_id, viewer),
            link=lambda step, viewer: step_link(game_id, step, viewer),
            report=lambda hand, seq, viewer: cache.hand_report(game_id, hand, seq, viewer),
        )
        if shown is None:
            return
        _follow_url(game_id, shown)
        _move_quality(game_id, shown)
        _what_if(game_id, replay, shown)
        _case(game_id, replay, shown)


if not views.view_chosen(KEYS):  # a game opened without a deep link's view: the support view
    views.show_view_of(KEYS, None)
stored = cache.query("game_row", replay.game)  # the lines the warehouse counts for the game
views.verdict_summary(replay, lines=stored["lines"] if stored else None)
_step_area(replay)
