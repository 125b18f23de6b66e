"""Streamlit pieces the pages share: the card CSS, the step-through replay view, verdict
tables. They render what `engine.replay` and the warehouse queries return; no logic here
beyond choosing what to show.

Session-state keys are prefixed by the page that owns the view (`replay_…`, `check_…`).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from functools import partial
from html import escape
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlencode

import orjson
import streamlit as st

from dashboards import cache, marker
from dashboards.settings import ALERTS_FILE, warehouse_dir
from engine import render as ui
from engine.player_view import public_replay
from engine.replay import SETUP_HAND, GameReplay, ReplayStep
from engine.report import played_card, render_hand_report, score_table_html, totals_html
from ingest import audits, read

SUPPORT_VIEW = "Support view (every hand)"
PLAYER_VIEW = "Player view"
VIEWS = (SUPPORT_VIEW, PLAYER_VIEW)


def inject_css() -> None:
    """The cards' stylesheet, once per run (a style-only st.html takes no space)."""
    st.html(ui.style_tag())


def html(body: str) -> None:
    """Render HTML from `engine.render` (escaped there)."""
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
    def seen_by(self) -> str:
        """The view on screen, in one place: the player whose view it is, None for the
        support view. Not a widget's key: Streamlit keeps it as it is (a widget's value is
        the browser's, which reports the widget's default when it never recorded the value
        the server drew, and is dropped when the widget is not drawn). Written only by a
        deep link (the page's adoption of its URL) and by the user's own choice (the View
        and As-player widgets' callbacks); the widgets are drawn from it at every run."""
        return f"{self.prefix}_seen_by"

    @property
    def view(self) -> str:
        """The View radio (drawn from `seen_by`)."""
        return f"{self.prefix}_view"

    @property
    def viewer(self) -> str:
        """The As-player selectbox (drawn from `seen_by`, in the player view only)."""
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


def flagged_player(replay: GameReplay, step: ReplayStep | None) -> str | None:
    """Whose view a support agent most likely wants: the player the step's violation
    names, else the player of the game's first violation (None: nobody is flagged)."""
    for found in (step, replay.next_violation(None)):
        for violation in found.violations if found is not None else ():
            if violation.player in replay.players:
                return violation.player
    return None


def default_viewer(replay: GameReplay, step: ReplayStep | None) -> str | None:
    """The player view a support agent gets when they ask for one without naming the
    player: the flagged player's (`flagged_player`), else the first player's."""
    return flagged_player(replay, step) or (replay.players[0] if replay.players else None)


def show_view_of(keys: ReplayKeys, viewer: str | None) -> None:
    """Show `viewer`'s player view (None: the support view). Called by a deep link, the
    user's choice, and `normalise_state` when the game has no such player."""
    st.session_state[keys.seen_by] = viewer


def view_chosen(keys: ReplayKeys) -> bool:
    """Whether the session holds the view to show (a run that finds none must not draw
    a step: the page's own run decides it first)."""
    return keys.seen_by in st.session_state


def _view_picked(keys: ReplayKeys, replay: GameReplay) -> None:
    """The View radio's callback: the user chose the support or the player view."""
    if st.session_state.get(keys.view) == PLAYER_VIEW:
        show_view_of(keys, default_viewer(replay, current_step(keys, replay)))
    else:
        show_view_of(keys, None)


def _viewer_picked(keys: ReplayKeys, replay: GameReplay) -> None:
    """The As-player selectbox's callback: the user chose whose view to see."""
    player = st.session_state.get(keys.viewer)
    if player in replay.players:
        show_view_of(keys, player)


def normalise_state(keys: ReplayKeys, replay: GameReplay) -> str | None:
    """Bring hand and step into range (a deep link or an old session may point anywhere),
    and the view to this game's players; the view's player (None: the support view).

    Every widget value the server holds is written here at every run, before its widget
    is drawn, so every run sends it to the browser: a browser that had not recorded
    the value an earlier run drew (a step taken while the page was still settling)
    otherwise shows, and then reports as the user's, the widget's default (for the View
    radio, the support view)."""
    ss = st.session_state
    hands = replay.hands
    hand = ss.get(keys.hand)
    if hand not in hands:
        hand = hands[0]
        ss[keys.step] = 1
    ss[keys.hand] = hand
    steps = replay.hand_steps(hand)
    try:
        number = int(ss.get(keys.step) or 1)
    except (TypeError, ValueError):
        number = 1
    ss[keys.step] = min(max(number, 1), len(steps))
    viewer = ss.get(keys.seen_by)
    if viewer is not None and viewer not in replay.players:  # another game's player
        viewer = default_viewer(replay, replay.step_at(hand, ss[keys.step]))
    show_view_of(keys, viewer)
    ss[keys.view] = SUPPORT_VIEW if viewer is None else PLAYER_VIEW
    if viewer is not None:
        ss[keys.viewer] = viewer
    return viewer


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
    view_of: Callable[[str], GameReplay] | None = None,
    link: Callable[[ReplayStep, str | None], str] | None = None,
    report: Callable[[int, int, str | None], str] | None = None,
) -> ReplayStep | None:
    """The step-through view: controls, the event and its verdict, the table, the move list.

    `replay` is the support view; in the player view everything shown is rendered from
    `view_of(player)` (default: `engine.player_view.public_replay`, which the page may
    cache). `link(step, viewer)` gives the step's deep link (None: no deep links, an
    upload); `report(hand, seq, viewer)` gives the dispute report (computed only when
    downloaded).
    """
    if not replay.hands:
        st.info("Nothing to replay: the game has no usable lines.")
        return None
    viewer = normalise_state(keys, replay)  # the view, from its one place (`keys.seen_by`)
    ss = st.session_state

    top = st.columns([2, 2, 2], vertical_alignment="bottom")
    top[0].selectbox(
        "Hand", replay.hands, key=keys.hand, format_func=lambda h: hand_label(replay, h),
        on_change=_reset_step, args=(keys,),
    )
    top[1].radio("View", VIEWS, key=keys.view, horizontal=True, on_change=_view_picked, args=(keys, replay))
    if viewer is not None:
        top[2].selectbox("As player", list(replay.players), key=keys.viewer,
                         on_change=_viewer_picked, args=(keys, replay))
    if viewer is not None:  # from here on, only what the viewer could see
        replay = view_of(viewer) if view_of is not None else public_replay(replay, viewer)

    steps = replay.hand_steps(ss[keys.hand])
    nav = st.columns([1.2, 1, 1.4, 4.6], vertical_alignment="bottom")
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
        move_list(replay, keys, step)
    with main:
        render_step(replay, step, keys)

    below = st.columns([3, 2], vertical_alignment="center")
    if link is not None:
        url = link(step, viewer)
        below[0].markdown(f":material/link: [Link to this step]({url})")
        below[0].code(url, language=None)
    if report is not None and step.hand != SETUP_HAND:
        # one click from the step: the report for the player the step is about (the view
        # chosen, else the flagged player's), and in the support view the support report too
        about = viewer or default_viewer(replay, step)
        with below[1]:
            for who in dict.fromkeys([about, None] if viewer is None else [viewer]):
                view = f"{who}'s player view" if who else "support view"
                make: Callable[[], str] = partial(report, step.hand, step.seq, who)
                st.download_button(
                    f"Download the dispute report ({view})",
                    data=make,
                    file_name=f"{replay.game}-hand-{step.hand}-seq-{step.seq}{'-' + who if who else ''}.html",
                    mime="text/html", key=f"{keys.prefix}_report_{'player' if who else 'support'}",
                    on_click="ignore", type="primary" if who else "secondary", width="stretch",
                    help="About this step: a summary with the verdict and its rule, the step and its "
                         "neighbours, the whole hand folded below"
                         + (f" — only what {who} could see, no server paths: the one to send them" if who else
                            " — every hand, files and lines, for the desk"),
                )
    score = replay.score_of(step.hand)
    if score is not None:
        with st.expander(f"Hand {step.hand} scores", expanded=False, key=f"{keys.prefix}_scores_open",
                         on_change="rerun") as panel:
            if panel.open:  # drawn only while open: a step redraws what it draws
                html(f'<div class="hk">{score_table_html(score)}</div>')
                if replay.totals and len(replay.scores) > 1:
                    html(f'<div class="hk">{totals_html(replay)}</div>')
    return step


#: what Streamlit's markdown reads in a label (a button's label is markdown)
_MARKDOWN = frozenset("\\`*_{}[]()#+-.!|~<>:$")


def markdown_text(text: str) -> str:
    """`text` shown as it is in a markdown label: every character markdown would read
    escaped (a player id with `*` or `[…](…)` stays text)."""
    return "".join("\\" + c if c in _MARKDOWN else c for c in text)


def move_label(step: ReplayStep, *, current: bool = False) -> str:
    """A move-list line: seq, verdict mark and the move, as text (flagged lines red, but
    for the current one, whose button is coloured already)."""
    icon = "✗" if step.violations else ("⚠" if step.set_aside else "✓")
    label = markdown_text(f"{step.seq} {icon} {step.text}")
    return f":red[{label}]" if step.flagged and not current else label


#: the move list's lines: those around the current step. A button a line, redrawn at every
#: step, cost a browser ~0.35 s of CPU a step for an 81-line hand and ~0.75 s for the
#: longest (bench/bench_dashboard.py browser), and about 1.5 ms a line still: 41 lines
#: took 270 ms of browser CPU a step, 21 lines 240-250; the slider and the keys reach every line.
MOVE_WINDOW = 21
#: of which at least this many before the current step (more after it: stepping goes forward)
MOVES_BEFORE = 2
#: the window moves this many lines at once, not one a step: between its moves a step
#: leaves the lines as they were but for the two whose highlight changes, and the browser
#: redraws far less (a list that slid a line a step changed every line's button: ~10 ms
#: of the browser's CPU a step). The current line stays among the first MOVES_BEFORE +
#: MOVE_STRIDE, in sight without scrolling the list.
MOVE_STRIDE = 7


def move_window(count: int, at: int) -> tuple[int, int]:
    """The slice [start, end) of `count` lines that the move list shows around line `at`:
    `MOVE_WINDOW` lines (all of them when fewer), starting at a multiple of `MOVE_STRIDE`
    that leaves `MOVES_BEFORE` to `MOVES_BEFORE + MOVE_STRIDE - 1` of them before `at`,
    unless the hand starts or ends first."""
    start = max(0, (at - MOVES_BEFORE) // MOVE_STRIDE * MOVE_STRIDE)
    start = max(0, min(start, count - MOVE_WINDOW))
    return start, min(count, start + MOVE_WINDOW)


def move_list(replay: GameReplay, keys: ReplayKeys, current: ReplayStep) -> None:
    """The hand's lines around the current step, numbered by seq, with their verdicts;
    click one to go there. Flagged lines are red; the filter keeps one player's moves
    (the rest stay a click away)."""
    steps = replay.hand_steps(current.hand)
    actors = list(replay.players) or sorted({s.actor for s in steps if s.actor})
    st.markdown(f"**Moves of hand {current.hand}**" if current.hand != SETUP_HAND else "**Header lines**")
    chosen = st.multiselect("Moves by", actors, key=keys.movers, placeholder="Every player",
                            label_visibility="collapsed")
    shown = [s for s in steps if not chosen or s.actor in chosen or s is current]
    start, end = move_window(len(shown), next(i for i, s in enumerate(shown) if s is current))
    flagged = sum(1 for s in steps if s.flagged)
    listed = "" if end - start == len(shown) else \
        f" · seq {shown[start].seq}–{shown[end - 1].seq} listed (the slider reaches the rest)"
    st.caption(f"{len(shown)} of {len(steps)} lines{listed} · {flagged} flagged · ← → step, N next violation")
    with st.container(height=560, border=True, key=f"{keys.prefix}_moves"):
        for s in shown[start:end]:
            st.button(move_label(s, current=s is current), key=keys.move(s), on_click=go_to, args=(keys, s),
                      width="stretch",
                      type="primary" if s is current else "tertiary",
                      help=f"{s.label} — " + ", ".join(v.code.value for v in s.violations) if s.violations else None)


def render_step(replay: GameReplay, step: ReplayStep, keys: ReplayKeys) -> None:
    """One step as the replay holds it (a player view's replay holds only what its player
    could see). A closed panel's content is not drawn: every step redraws what it draws
    (the log line's highlighted JSON was about a tenth of a step's browser CPU)."""
    n_steps = len(replay.hand_steps(step.hand))
    viewer = step.viewer
    left, right = st.columns([2, 3], gap="large")
    with left:
        where = f" · {step.file}:{step.line}" if step.file and step.line else ""
        hand = "header" if step.hand == SETUP_HAND else f"hand {step.hand}"
        st.caption(f"Step {step.number} of {n_steps} · {hand} · seq {step.seq}{where}")
        card = played_card(step)
        decision = ui.decision_html(step.before, step.actor, card, bool(step.violations)) \
            if step.kind in ("play", "draw", "pass") else None
        # one HTML block for the event, its verdict and the decision: every element a
        # step draws costs the browser its own rendering
        html(f'<div class="hk"><div class="hk-event">{escape(step.text)}</div>'
             f"{ui.verdict_html(step.violations)}"
             f"{ui.why_html(step.why)}"
             f"{ui.set_aside_html(step.set_aside, step.seq)}</div>"
             + (f"<p><strong>Could they have played something else?</strong></p>{decision}" if decision else ""))
        with st.expander("The log line" + (f" (as {viewer} saw it)" if viewer else ""),
                         key=f"{keys.prefix}_line_open", on_change="rerun") as panel:
            if panel.open:
                st.code(orjson.dumps(step.raw, option=orjson.OPT_INDENT_2).decode() if step.raw else "-",
                        language="json")
    with right:
        html("<p><strong>The table after this step</strong>"
             + (f" — as <strong>{escape(viewer)}</strong> saw it" if viewer else "") + "</p>"
             + ui.table_html(step.after, replay.players, played=card, played_by=step.actor))


def verdict_summary(replay: GameReplay, lines: int | None = None) -> None:
    """One line on the game: ruleset, players, status, lines, violations. `lines` is the
    count the page already shows for the game (the lines read for it), so the page says
    one number; the steps replayed are named beside it when they differ (an identical
    repeat of a line is read but not replayed)."""
    winners = ", ".join(replay.match_winners) or "—"
    steps = len(replay.steps)
    if lines is None or lines == steps:
        read = f"{steps:,} lines"
    else:
        read = f"{lines:,} lines ({steps:,} replayed)"
    html(
        f'<div class="hk">{ui.status_badge(replay.status)} &nbsp; ruleset <b>{escape(replay.ruleset or "?")}</b>'
        f" · players {escape(', '.join(replay.players))} · {read} · "
        f"{len(replay.violations)} violation{'s' if len(replay.violations) != 1 else ''} · "
        f"match winner{'s' if len(replay.match_winners) != 1 else ''}: {escape(winners)}</div>"
    )
    if replay.game_violations:
        with st.expander(f"{len(replay.game_violations)} finding(s) not tied to a replayed line"):
            html(f'<div class="hk">{ui.verdict_html(replay.game_violations)}</div>')


def violation_rows(replay: GameReplay) -> list[dict[str, Any]]:
    """Every violation of the game as a table row: where (seq, file line, hand and step of
    the replay), what (code, player) and the validator's message, in line order."""
    rows = []
    for v in replay.violations:
        step = replay.by_seq(v.seq) if v.seq is not None else None
        rows.append({"seq": v.seq, "line": v.line, "hand": step.hand if step else None,
                     "step": step.number if step else None, "code": v.code.value, "player": v.player,
                     "message": v.message})
    rows.sort(key=lambda r: (r["seq"] is not None, r["seq"] or 0, r["line"] or 0))
    return rows


def report_for(replay: GameReplay) -> Callable[[int, int, str | None], str]:
    return lambda hand, seq, viewer: render_hand_report(replay, hand, seq=seq, viewer=viewer)


def query_int(params: Any, name: str) -> int | None:
    """An integer query parameter, or None when absent or not a number."""
    value = params.get(name)
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


# ------------------------------------------------------------------------ the run marker

#: session state: how many script runs this session has made, whole or a fragment's (the
#: run marker's number)
RUNS = "app_runs"
#: session state: True while the entry script runs the page whole (False between runs,
#: so a fragment's rerun knows it is one)
WHOLE_RUN = "app_whole_run"


def whole_run_started() -> int:
    """The entry script starts a run of the whole page: its number."""
    st.session_state[WHOLE_RUN] = True
    return _count_run()


def whole_run_ended() -> None:
    st.session_state[WHOLE_RUN] = False


@contextmanager
def fragment_run() -> Iterator[None]:
    """The body of an `st.fragment` that a browser (and the tests) must see drawn whole
    when it reruns alone: it then counts as a run of the session and draws the run
    marker as its last element, as the entry script does for a whole run. Inside a whole
    run it draws none (the entry script's marker, drawn after the page, says the run is
    whole; one drawn here would say so before the rest of the page is drawn)."""
    alone = not st.session_state.get(WHOLE_RUN, False)
    try:
        yield
    except Exception:
        if alone:
            st.html(marker.html(_count_run()))
        raise
    if alone:
        st.html(marker.html(_count_run()))


def _count_run() -> int:
    run = int(st.session_state.get(RUNS, 0)) + 1
    st.session_state[RUNS] = run
    return run


class PageDone(Exception):
    """Raised by `done()`: the page ends here; the entry script catches it and still draws
    the run marker (after `st.stop()` Streamlit sends nothing more, so a browser could not
    tell that the run is whole)."""


def done() -> NoReturn:
    """End the page's run here (instead of `st.stop()`, which would also drop the run marker)."""
    raise PageDone


def require_warehouse() -> None:
    """Stop the page with an explanation when there is no warehouse to read."""
    problem = cache.warehouse_problem()
    if problem:
        st.warning(problem)
        st.page_link("app_pages/check_log.py", label="Check a log file instead", icon=":material/upload_file:")
        done()


def game_filter(prefix: str, *, builds: bool = False) -> read.GameFilter:
    """Ruleset, date range (and server build) filters in one row, keys prefixed by page."""
    options: read.Choices = cache.query("choices")
    cols = st.columns([3, 2, 3] if builds else [3, 2])
    rulesets = cols[0].multiselect("Ruleset", options.rulesets, key=f"{prefix}_rulesets",
                                   placeholder="All rulesets")
    start = end = None
    if options.first_day is not None and options.last_day is not None:
        dates, span = f"{prefix}_dates", (options.first_day, options.last_day)
        # everything by default (unless a link set the range), and still everything when
        # a newer batch widens the span under a range left at its default
        seeded = st.session_state.get(f"{dates}_span")
        if dates not in st.session_state or (st.session_state[dates] == seeded and seeded != span):
            st.session_state[dates] = span
        st.session_state[f"{dates}_span"] = span
        picked = cols[1].date_input("Games started", key=dates, min_value=options.first_day,
                                    max_value=options.last_day)
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
    return read.GameFilter(tuple(rulesets), start, end, tuple(chosen_builds))


# ------------------------------------------------------------------------ filters in the URL


@dataclass(frozen=True, slots=True)
class UrlFilter:
    """One filter kept in the URL: its query parameter, the widget's session-state key, and
    the values it may take (None: any text). A `many` filter (a multiselect) repeats its
    parameter (`?status=violations&status=invalid`; a comma-separated value is read too)."""

    param: str
    key: str
    many: bool = False
    choices: Sequence[str] | None = None


def _pairs() -> list[tuple[str, str]]:
    return [(name, value) for name in st.query_params for value in st.query_params.get_all(name)]


def _signature(pairs: Sequence[tuple[str, str]]) -> str:
    return urlencode(sorted(pairs))


def filters_from_url(seen: str, filters: Sequence[UrlFilter], dates: str | None = None) -> None:
    """Set the filters' widgets from the URL, before they are drawn, when it names filters
    this session has not read or written yet (a shared link, a reload). A bare URL keeps
    the filters as they are. Values the widget does not offer are dropped; `dates`, the
    key of a `game_filter` date range, takes `from` and `to` (YYYY-MM-DD)."""
    pairs = _pairs()
    signature = _signature(pairs)
    if not pairs or st.session_state.get(seen) == signature:
        return
    st.session_state[seen] = signature
    for flt in filters:
        values = [v.strip() for raw in st.query_params.get_all(flt.param) for v in
                  (raw.split(",") if flt.many else [raw])]
        values = [v for v in values if v and (flt.choices is None or v in flt.choices)]
        if flt.many:
            st.session_state[flt.key] = list(dict.fromkeys(values))
        elif flt.choices is not None:
            st.session_state[flt.key] = values[0] if values else (flt.choices[0] if flt.choices else None)
        else:
            st.session_state[flt.key] = values[0] if values else ""
    if dates is not None:
        options: read.Choices = cache.query("choices")
        first, last = options.first_day, options.last_day
        if first is None or last is None:
            return
        start = _iso_day(st.query_params.get("from"), first, last) or first
        end = _iso_day(st.query_params.get("to"), first, last) or last
        st.session_state[dates] = (start, max(start, end))


def _iso_day(text: str | None, first: date, last: date) -> date | None:
    """A YYYY-MM-DD parameter within [first, last] (clamped), or None."""
    try:
        day = date.fromisoformat(text) if text else None
    except ValueError:
        return None
    return None if day is None else min(max(day, first), last)


def filters_to_url(seen: str, filters: Sequence[UrlFilter], flt: read.GameFilter | None = None) -> None:
    """Write the filters as they are now into the URL (empty ones left out), so the
    address bar can be shared; with `flt`, its date range as `from` and `to`."""
    pairs: list[tuple[str, str]] = []
    for spec in filters:
        value = st.session_state.get(spec.key)
        if spec.many:
            pairs += [(spec.param, str(v)) for v in value or []]
        elif value:
            pairs.append((spec.param, str(value).strip()))
    if flt is not None:
        if flt.start is not None:
            pairs.append(("from", flt.start.isoformat()))
        if flt.end is not None:
            pairs.append(("to", flt.end.isoformat()))
    pairs = [(name, value) for name, value in pairs if value]
    signature = _signature(pairs)
    if _signature(_pairs()) != signature:
        grouped: dict[str, list[str]] = {}
        for name, value in pairs:
            grouped.setdefault(name, []).append(value)
        st.query_params.from_dict({k: v if len(v) > 1 else v[0] for k, v in grouped.items()})
    st.session_state[seen] = signature


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


@dataclass(frozen=True, slots=True)
class AlertStates:
    """The alerts' states as the API service last wrote them (`<state>/alerts.json`)."""

    path: str
    written_at: datetime | None
    alerts: list[dict[str, Any]]

    @property
    def firing(self) -> list[dict[str, Any]]:
        return [a for a in self.alerts if a.get("state") == "firing"]


def alert_states(folder: Path | None) -> AlertStates | str:
    """The alerts' states in the service's state `folder`, or why there are none to show."""
    if folder is None:
        return ("No API state folder is known for this warehouse: start the dashboard with "
                "`--state DIR` (the folder `haftkhabis serve --state` uses) to see its alerts.")
    path = folder / ALERTS_FILE
    try:
        document = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return (f"No alerts file at `{path}`: the API service writes it when started with "
                "`--alerts FILE` over this state folder.")
    except (OSError, orjson.JSONDecodeError) as exc:
        return f"The alerts file `{path}` cannot be read: {exc}"
    alerts = [a for a in document.get("alerts") or () if isinstance(a, dict)]
    return AlertStates(str(path), when(document.get("written_at")), alerts)


def when(text: object) -> datetime | None:
    """A timestamp the service wrote (ISO 8601), None when there is none to read."""
    try:
        return datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        return None


def ago(seconds: float | None) -> str:
    """`12 s`, `4 min`, `3 h`, `2 d`: how long, for people."""
    if seconds is None:
        return "—"
    seconds = max(0.0, seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}" if seconds >= 10 * size else f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


def header_width(label: str) -> int:
    """Pixels a table column needs to show its header whole (Streamlit's grid sizes a
    column by its values, and cuts a longer header)."""
    return max(64, round(7.6 * len(label)) + 30)


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


# ------------------------------------------------------------------------ stored audits

#: a warehouse of at most this many games is audited while its page waits (seconds, once
#: per batch: the answer is cached); a larger one shows the report `haftkhabis audit …
#: --store` kept (docs/fairplay.md), or audits on request
AUDIT_WHILE_WAITING = 20_000
#: the session state key of the audit the user asked for now (its `audits.Params`)
AUDIT_NOW = "audit_now"


def _audit_now(params: audits.Params) -> None:
    st.session_state[AUDIT_NOW] = params


def audit_report(params: audits.Params) -> dict[str, Any]:
    """The report a fair-play page shows: the stored one when it was made from the
    warehouse as it is; else one made now when the warehouse is small or the user asked
    (cached per snapshot); else the stored one, said to be stale, with a button to audit
    again; with none stored, how to make one (and the page ends)."""
    stored = cache.stored_audit(params)
    made = ("" if stored is None else
            f"batch {stored.batch}, {stored.made_at:%Y-%m-%d %H:%M} UTC, {stored.seconds:,.0f} s to make")
    if stored is not None and stored.current:
        st.caption(f"The stored audit ({made}): made from the warehouse as it is now.")
        return stored.report
    games = int(cache.query("game_count"))
    if st.session_state.get(AUDIT_NOW) == params or games <= AUDIT_WHILE_WAITING:
        with st.spinner(f"Auditing {games:,} games…"):
            report: dict[str, Any] = cache.query("audit", params)
        return report
    options = [("--warehouse", warehouse_dir()), ("--build", params.build), ("--ruleset", params.ruleset),
               ("--since", params.since), ("--fdr", params.level), ("--permutations", params.permutations)]
    command = shlex.join(["haftkhabis", "audit", params.kind, "--store",
                          *(part for flag, value in options if value is not None for part in (flag, str(value)))])
    st.button("Audit the warehouse as it is now", icon=":material/play_arrow:", on_click=_audit_now,
              args=(params,), key=f"audit_now_{params.kind}",
              help=f"{games:,} games: a minute or more at a million hands, while this page waits.")
    if stored is not None:
        st.warning(f"This is the stored audit of {made}: games have landed since. Audit again here, or "
                   f"with `{command}`.")
        return stored.report
    st.info(f"No stored audit for these filters. At {games:,} games an audit takes a while: press the "
            f"button, or run `{command}` and reopen this page.")
    done()
