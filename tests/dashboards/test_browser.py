"""The real thing: `haftkhabis dashboard` on a free port, Debian's chromium driven by
Playwright: a replay deep link stepped through, a support agent's path to a player's
report, and the player view's page DOM read by the leak checker.

Every wait is on the application's own state, never on time: the run marker each script
run draws last, past the number read before an action, with nothing stale and nothing
still loading its code (`dashboards.marker`). Timeouts below are failure deadlines for a
hung server, not waits.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboards.marker import LAST_RUN, LIVE_REDRAWN, SETTLED
from engine.replay import GameReplay
from tests.dashboards.conftest import DISPUTED, dashboard_server
from tests.leakcheck import Sight, leaks

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts"
DEADLINE = 120_000  # ms: a server that answers nothing in this time has hung

pytestmark = pytest.mark.browser


def last_run(page: Any) -> int:
    return int(page.evaluate(LAST_RUN))


def settle(page: Any, after: int) -> int:
    """Wait until a script run later than `after` has drawn its last element, with nothing
    of an earlier run left on the page and nothing still loading; that run's number."""
    page.wait_for_function(SETTLED, arg=after, timeout=DEADLINE)
    return last_run(page)


def rerun(page: Any, action: Callable[[], object]) -> int:
    """Do what makes the app run its script again, and wait for that run to be drawn."""
    before = last_run(page)
    action()
    return settle(page, before)


def open_app(page: Any, url: str) -> None:
    """A new session at `url`, once its first run is drawn."""
    page.goto(url)
    settle(page, 0)
    assert page.locator("[data-testid=stException]").count() == 0


def caption(page: Any) -> str:
    return str(page.locator("[data-testid=stCaptionContainer]", has_text="Step ").first.inner_text())


@pytest.fixture(scope="module")
def server(sample_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with dashboard_server(sample_warehouse, log) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make browser)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
    page.set_default_timeout(DEADLINE)
    yield page
    page.close()


def test_a_deep_link_is_the_first_page_a_fresh_server_shows(server: str, page: Any) -> None:
    """A deep link opened first (no visit to the app before it) shows its page with the
    app's layout, never a "page not found" or the raw file list."""
    open_app(page, f"{server}/replay?game={DISPUTED}&hand=1&step=5")
    assert caption(page).startswith("Step 5 of 21")
    assert page.get_by_text("Page not found").count() == 0
    assert page.locator("[data-testid=stSidebarNav]").get_by_text("Replay").count() == 1


def test_replay_deep_link_steps_forward(server: str, page: Any) -> None:
    open_app(page, f"{server}/replay?game={DISPUTED}&hand=1&step=5")
    assert "seq 5" in caption(page)
    assert page.locator(".hk-card.legal").count() > 0  # the mover's legal moves
    rerun(page, lambda: page.get_by_role("button", name="Next ▶").click())
    assert caption(page).startswith("Step 6 of")
    assert "step=6" in page.url and "hand=1" in page.url and f"game={DISPUTED}" in page.url
    assert page.locator("[data-testid=stException]").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "browser-replay-step6.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000


def test_server_flags(server: str) -> None:
    """Bound to localhost, and an upload without the XSRF cookie is refused."""
    request = urllib.request.Request(server + "/_stcore/upload_file/x/y", data=b"--", method="PUT")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code in (400, 403)


def test_move_list_keyboard_and_player_report(server: str, page: Any, tmp_path: Path) -> None:
    """A support agent's path: a deep link by seq, a click in the move list, → on the
    keyboard, then the player-view dispute report downloaded."""
    open_app(page, f"{server}/replay?game={DISPUTED}&seq=13&view=player&player=bita")
    assert caption(page).startswith("Step 13 of 21")
    assert "step=13" in page.url and "hand=1" in page.url

    rerun(page, lambda: page.get_by_role("button", name=re.compile(r"^\s*19 ✓ cyrus draws 4 cards")).click())
    assert caption(page).startswith("Step 19 of 21") and "seq=19" in page.url

    page.get_by_role("heading", name="Replay").click()  # focus off the clicked button
    rerun(page, lambda: page.keyboard.press("ArrowRight"))
    assert caption(page).startswith("Step 20 of 21") and "seq=20" in page.url
    assert page.locator("[data-testid=stException]").count() == 0

    with page.expect_download() as caught:
        page.get_by_role("button", name=re.compile("Download the dispute report")).click()
    saved = tmp_path / "report.html"
    caught.value.save_as(saved)
    html = saved.read_text(encoding="utf-8")
    assert 'data-view="player"' in html and "hand 1 · step 20 · seq 20" in html
    assert "sample.jsonl" not in html  # no server paths in the player view


def _expand(page: Any, title: str) -> Any:
    """Open the expander whose summary starts with `title`; its element. (A panel drawn
    only while open — the step's scores, its log line, the what-if — then reruns the step:
    wait for that run with `settle`.)"""
    expander = page.locator("[data-testid=stExpander]", has=page.locator("summary", has_text=title)).first
    # the click event on the summary itself, not a mouse click at coordinates: an expander
    # opened just before still animates its height, moving this one under the pointer
    expander.locator("summary").dispatch_event("click")
    expander.locator("[data-testid=stExpanderDetails]").wait_for(state="visible")
    return expander


@pytest.mark.parametrize(("seq", "player"), [(3, "bita"), (13, "bita"), (19, "ali"), (20, "cyrus")])
def test_the_player_views_page_shows_only_what_they_saw(
    server: str, page: Any, sample_replays: dict[str, GameReplay], seq: int, player: str,
) -> None:
    """The Replay page in a player view, its scores, log line and what-if panels open (and a branch
    played when the move was theirs): the whole DOM against what the player saw in the
    hand, the what-if panel against what they had seen at that step."""
    replay = sample_replays[DISPUTED]
    sight = Sight.of(replay)
    step = replay.by_seq(seq)
    assert step is not None
    open_app(page, f"{server}/replay?game={DISPUTED}&seq={seq}&view=player&player={player}")
    assert caption(page).startswith(f"Step {step.number} of")
    for panel in (f"Hand {step.hand} scores", "The log line"):  # drawn when opened: a run of the step
        before = last_run(page)
        _expand(page, panel)
        settle(page, before)
    before = last_run(page)
    whatif = _expand(page, "What if?")
    settle(page, before)  # the panel computes its what-if when opened: a run of the step
    mine = whatif.locator("button", has_text=re.compile(
        r"^\s*((10|[2-9JQKA])[♣♦♥♠]( declaring [♣♦♥♠])?( to \S+)?|draw( \d+)?|pass)\s*$"))
    if ((step.before or {}).get("legal") or {}).get("player") == player:
        assert mine.count() > 0  # their own move: what they could have done instead
        rerun(page, lambda: mine.first.click())
        whatif = _expand(page, "What if?") if not whatif.locator("[data-testid=stExpanderDetails]").is_visible() \
            else whatif
        assert whatif.get_by_text("The branch:").count() == 1
    else:
        assert mine.count() == 0
    found = leaks(page.content(), sight.in_hand(player, step.hand), player, f"{DISPUTED} seq {seq} page")
    found += leaks(page.inner_text("body"), sight.in_hand(player, step.hand), player, f"{DISPUTED} seq {seq} text")
    found += leaks(whatif.inner_html(), sight.at(player, seq), player, f"{DISPUTED} seq {seq} what-if")
    assert "sample.jsonl" not in page.content()
    assert not found, "\n".join(map(str, found))


def test_the_live_page_redraws_itself(server: str, page: Any) -> None:
    """The Live page renders whole, then redraws its panel by itself (`st.fragment(
    run_every=…)`): its marker passes the first redraw's number with nothing done."""
    open_app(page, f"{server}/live")
    assert page.get_by_role("heading", name="Live").count() == 1
    assert page.locator("[data-testid=stMetric]", has_text="Games / s").count() == 1
    assert page.locator("[data-testid=stSidebarNav]").get_by_text("Live").count() == 1
    page.wait_for_function(LIVE_REDRAWN, arg=1, timeout=DEADLINE)
    assert page.locator("[data-testid=stException]").count() == 0
    assert page.locator("[data-testid=stMetric]", has_text="Last commit").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "browser-live.png"), full_page=True)


# ------------------------------------------------------------------------ each role's path


def _pick_row(page: Any, grid: Any, row: int = 0) -> int:
    """Select a row of a data grid (its row marker, the grid's first 30 px; rows of 35 px
    under a 35 px header) and wait for the run that answers it; the run's number.

    The click is the grid's own (a locator's, with Playwright's checks), not the mouse's at
    coordinates read once: an expander opened just above still animates its height, and
    a box read mid-animation put the click beside the row (no run followed: a CI failure).
    A locator's click waits until the grid's box is the same on two animation frames, and
    until the point hits the grid."""
    grid.locator("canvas").first.wait_for()
    return rerun(page, lambda: grid.click(position={"x": 18, "y": 35 + 35 * row + 17}))


def _choose(page: Any, label: str, option: str | None = None) -> str:
    """Open the selectbox labelled `label` and pick `option` (None: its first), waiting for
    the run that answers it; the option picked."""
    box = page.get_by_role("combobox", name=label, exact=True)
    box.click()
    if option is not None:
        box.fill(option)  # the list filters as one types
    choice = page.get_by_role("option").first if option is None else \
        page.get_by_role("option", name=option, exact=True)
    picked = str(choice.inner_text()).strip()
    rerun(page, lambda: choice.click())
    return picked


@pytest.fixture
def desk_server(sample_warehouse: Path, tmp_path: Path) -> Iterator[str]:
    """A server over a copy of the sample warehouse: the desk writes cases into it."""
    import shutil

    warehouse = tmp_path / "wh"
    shutil.copytree(sample_warehouse, warehouse)
    with dashboard_server(warehouse, tmp_path / "streamlit.log") as port:
        yield f"http://127.0.0.1:{port}"


def test_support_from_a_complaint_to_a_sent_report_and_a_case(
    desk_server: str, page: Any, sample_replays: dict[str, GameReplay], tmp_path: Path,
) -> None:
    """The desk's path: the player's game found on the Games page, its row opens the replay
    at the game's first violation with the flagged player's view ready; the player's report
    is one click from there; a case opened on the step, found on the Cases page, and its
    evidence bundle verifies."""
    from engine.bundle import verify_bundle

    replay = sample_replays[DISPUTED]
    first = replay.next_violation(None)
    assert first is not None and first.seq != 1
    flagged = next(v.player for v in first.violations if v.player in replay.players)

    open_app(page, f"{desk_server}/games?game={DISPUTED}")
    _pick_row(page, page.locator("[data-testid=stDataFrame]").first)
    assert caption(page).startswith(f"Step {first.number} of") and f"seq {first.seq}" in caption(page)
    assert "/replay?" in page.url and f"seq={first.seq}" in page.url
    moves = page.locator("[class*=st-key-replay_moves] button").all_inner_texts()
    assert moves and not any("**" in m or "\\" in m for m in moves)  # text, not markdown source

    # one click: the report in the flagged player's view
    with page.expect_download() as caught:
        page.get_by_role("button", name=f"Download the dispute report ({flagged}'s player view)").click()
    sent = tmp_path / "sent.html"
    caught.value.save_as(sent)
    html = sent.read_text(encoding="utf-8")
    assert 'data-view="player"' in html and f"seq {first.seq}" in html and "sample.jsonl" not in html

    # the case: opened on the step, then found on the Cases page (its form is drawn when
    # the panel opens: a run of the step)
    before = last_run(page)
    _expand(page, "Open a case about this step")
    settle(page, before)
    # a text field's value reaches the app when it is committed (Enter; Ctrl+Enter in a text
    # area), each commit a run of its own: wait for each, so that the button's run is the last
    name, note = page.get_by_label("Your name", exact=True), page.get_by_label("Note", exact=True)
    name.fill("desk-agent-1")
    rerun(page, lambda: name.press("Enter"))
    note.fill("The player says the draw was forced.")
    rerun(page, lambda: note.press("Control+Enter"))
    rerun(page, lambda: page.get_by_role("button", name=re.compile("^Open the case on")).click())
    opened = page.get_by_text(re.compile(r"^Case case-[0-9a-f]+ opened\.$"))
    opened.wait_for()  # the app's state: the run after the click says so
    assert opened.count() == 1
    rerun(page, lambda: page.get_by_role("link", name=re.compile("^Open case ")).click())
    settle(page, 0)
    assert page.get_by_role("heading", name=re.compile("^Case ")).count() == 1
    assert page.get_by_text("The player says the draw was forced.").count() == 1
    with page.expect_download() as caught:
        page.get_by_role("button", name=re.compile("Download the evidence bundle")).click()
    bundle = tmp_path / "bundle.zip"
    caught.value.save_as(bundle)
    checked = verify_bundle(bundle.read_bytes(), bundle.name)
    assert checked.ok, checked
    assert page.locator("[data-testid=stException]").count() == 0


def test_analyst_from_the_leaderboard_to_a_profile_to_the_two_card_drill_down(
    server: str, page: Any, sample_warehouse: Path,
) -> None:
    from ingest import read

    reader = read.connect(sample_warehouse)
    (giver, target, twos), = reader.rows("""
        SELECT player, gift_to, count(*) FROM events WHERE gift_to IS NOT NULL AND gift_to <> player
        GROUP BY ALL ORDER BY count(*) DESC, player, gift_to LIMIT 1""")
    reader.close()
    open_app(page, f"{server}/players")
    at_least = page.locator("[data-testid=stNumberInput]", has=page.get_by_text("At least this many hands"))
    at_least.locator("input").fill("0")
    rerun(page, lambda: at_least.locator("input").press("Enter"))  # the sample's players have few hands
    player = _choose(page, "Open a player's profile", giver)
    # the tab switch from the callback makes the page's tab state change too (a run of its
    # own, bound to the URL): wait for the profile the app draws, not for one run
    page.locator("[data-testid=stMetric]").first.wait_for()
    assert "players_tab=Profile" in page.url
    assert page.locator("[data-testid=stMetric]").count() >= 4
    rerun(page, lambda: page.get_by_role("button", name=f"The 2s {player} gave, in the 2-card matrix").click())
    page.get_by_role("combobox", name="Players shown").wait_for()  # the 2-card tab is drawn
    # the matrix says whether it shows everyone, and the player is the drill-down's giver
    assert page.get_by_text(re.compile(r"^(Every player who gave or drew a 2|Showing \d+ of the)")).count() == 1
    _choose(page, "Target", target)
    said = page.get_by_text(re.compile(rf"2s from {re.escape(player)} to {re.escape(target)}"))
    said.wait_for()
    assert said.count() == 1 and said.inner_text().startswith(f"{twos} 2s from")
    assert page.locator("[data-testid=stException]").count() == 0


def test_auditor_from_compliance_by_build_to_a_replay(server: str, page: Any) -> None:
    open_app(page, f"{server}/compliance")
    by_build = _expand(page, "Violations by code and server build (table)")
    by_build.locator("[data-testid=stDataFrame]").first.wait_for()  # mounted once opened
    assert by_build.locator("[data-testid=stDataFrame]").count() == 1
    grids = page.locator("[data-testid=stDataFrame]")
    drill = grids.last
    _pick_row(page, drill)
    assert "/replay?" in page.url and "seq=" in page.url
    seq = re.search(r"seq=(\d+)", page.url)
    assert seq is not None and f"seq {seq.group(1)}" in caption(page)
    assert page.locator("[data-testid=stException]").count() == 0


def test_check_a_log_deep_link_opens_its_page(server: str, page: Any) -> None:
    open_app(page, f"{server}/check")
    assert page.get_by_role("heading", name="Check a log").count() == 1
    assert page.get_by_text("Page not found").count() == 0


def test_auditor_picks_a_case_in_the_queue_and_reaches_its_steps(
        browser: Any, page: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The Collusion page on tables with a colluding pair: the case queue's row opens the
    pair (its signals, and the steps with their replay links)."""
    from tests.ingest.fairplaykit import PAIR, pair_warehouse

    folder = tmp_path_factory.mktemp("collusion-browser")
    with dashboard_server(pair_warehouse(folder, 1.0), folder / "streamlit.log") as port:
        open_app(page, f"http://127.0.0.1:{port}/collusion")
        assert page.locator("[data-testid=stMetricValue]").nth(3).inner_text() == "1"  # one case
        _pick_row(page, page.locator("[data-testid=stDataFrame]").last)  # the queue's case
        chosen = page.get_by_role("combobox", name="Pair", exact=True).input_value()
        assert set(chosen.split(" + ")) == set(PAIR)
        assert page.get_by_text(f"{chosen}: score").count() == 1 and page.get_by_text("(a case;").count() == 1
        assert page.locator("[data-testid=stDataFrame]").count() == 3  # signals, steps, the queue
        assert page.locator("[data-testid=stException]").count() == 0
