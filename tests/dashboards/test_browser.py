"""The real thing: `haftkhabis dashboard` on a free port, Debian's chromium driven by
Playwright, a replay deep link opened, one step forward, a screenshot kept in artifacts/."""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dashboards.conftest import DISPUTED, dashboard_server

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(sample_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with dashboard_server(sample_warehouse, log) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make browser)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


def test_replay_deep_link_steps_forward(server: str, browser: object) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 1000})  # type: ignore[attr-defined]
    try:
        # a fresh server learns its pages from the first session's run of the entry
        # script; open the app once so the deep link below resolves on its own
        page.goto(server + "/")
        page.get_by_role("heading", name="Overview").wait_for(timeout=30_000)

        page.goto(f"{server}/replay?game={DISPUTED}&hand=1&step=5")
        page.get_by_text("Step 5 of", exact=False).wait_for(timeout=30_000)
        before = page.locator("[data-testid=stCaptionContainer]", has_text="Step 5 of").inner_text()
        assert "seq 5" in before
        page.locator(".hk-card.legal").first.wait_for(timeout=10_000)  # the mover's legal moves

        page.get_by_role("button", name="Next ▶").click()
        page.get_by_text("Step 6 of", exact=False).wait_for(timeout=30_000)
        page.wait_for_url(lambda url: "step=6" in url, timeout=10_000)
        assert "hand=1" in page.url and f"game={DISPUTED}" in page.url
        assert page.locator("[data-testid=stException]").count() == 0

        ARTIFACTS.mkdir(exist_ok=True)
        shot = ARTIFACTS / "browser-replay-step6.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 10_000
    finally:
        page.close()


def test_server_flags(server: str) -> None:
    """Bound to localhost, and an upload without the XSRF cookie is refused."""
    request = urllib.request.Request(server + "/_stcore/upload_file/x/y", data=b"--", method="PUT")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code in (400, 403)


def test_move_list_keyboard_and_player_report(server: str, browser: object, tmp_path: Path) -> None:
    """A support agent's path: a deep link by seq, a click in the move list, → on the
    keyboard, then the player-view dispute report downloaded."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000}, accept_downloads=True)  # type: ignore[attr-defined]
    try:
        page.goto(server + "/")
        page.get_by_role("heading", name="Overview").wait_for(timeout=30_000)
        page.goto(f"{server}/replay?game={DISPUTED}&seq=13&view=player&player=bita")
        page.get_by_text("Step 13 of 21", exact=False).wait_for(timeout=30_000)
        page.wait_for_url(lambda url: "step=13" in url and "hand=1" in url, timeout=10_000)

        page.get_by_role("button", name=re.compile(r"^\s*19 ✓ cyrus draws 4 cards")).click()
        page.get_by_text("Step 19 of 21", exact=False).wait_for(timeout=30_000)
        page.wait_for_url(lambda url: "seq=19" in url, timeout=10_000)

        page.get_by_role("heading", name="Replay").click()  # focus off the clicked button
        # the rerun after the click must be over (its shortcuts bound) before a key counts;
        # a key pressed while the page re-renders can still be lost: press again only
        # while the page is still at step 19, so a slow press is never counted twice
        from playwright.sync_api import TimeoutError as NotYet

        page.locator("[data-testid=stStatusWidget]").wait_for(state="hidden", timeout=30_000)
        for _ in range(4):
            page.keyboard.press("ArrowRight")
            try:
                page.get_by_text("Step 20 of 21", exact=False).wait_for(timeout=8_000)
                break
            except NotYet:
                assert page.get_by_text("Step 19 of 21", exact=False).is_visible()
        page.get_by_text("Step 20 of 21", exact=False).wait_for(timeout=30_000)
        page.wait_for_url(lambda url: "seq=20" in url, timeout=10_000)
        assert page.locator("[data-testid=stException]").count() == 0

        with page.expect_download(timeout=30_000) as caught:
            page.get_by_role("button", name=re.compile("Download the dispute report")).click()
        saved = tmp_path / "report.html"
        caught.value.save_as(saved)
        html = saved.read_text(encoding="utf-8")
        assert 'data-view="player"' in html and "hand 1 · step 20 · seq 20" in html
        assert "sample.jsonl" not in html  # no server paths in the player view
    finally:
        page.close()
