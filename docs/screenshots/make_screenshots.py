"""Make the documentation's screenshots from the sample: `make screenshots`.

Serves the dashboard over `make demo`'s warehouse (the sample logs ingested,
`data/warehouse`) on a free port, opens each page of `SHOTS` in Debian's chromium through
Playwright, waits for the page's own state (the run marker `data-hk-run` the entry script
draws last in every run, and no element left stale, as tests/dashboards/test_browser.py
does) and saves the picture. Each shot names the game and line it shows, which the docs
repeat and tests/test_screenshots.py checks against the sample: a screenshot never shows a
game the sample does not have.

    python docs/screenshots/make_screenshots.py [--warehouse data/warehouse] [--only NAME]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
DEADLINE = 180_000  # ms: a page that draws nothing in this time has hung


@dataclass(frozen=True)
class Shot:
    """One screenshot: its file, the page and its query, and what it shows (the game and
    line, and the violation code expected there, when it is about one)."""

    name: str
    page: str
    params: dict[str, str]
    game: str | None = None
    seq: int | None = None
    code: str | None = None
    player: str | None = None  # the player the line's violation names
    height: int = 1000
    open_expanders: tuple[str, ...] = ()


#: every screenshot the docs show (README.md, docs/dashboard.md)
SHOTS = (
    Shot("replay-violation", "replay", {"game": "t-08-bz101-00022", "hand": "1", "step": "2", "seq": "2"},
         game="t-08-bz101-00022", seq=2, code="must_play", player="elif", height=1100),
    Shot("replay-player-view", "replay",
         {"game": "t-08-bz101-00022", "hand": "1", "step": "2", "seq": "2", "view": "player", "player": "elif"},
         game="t-08-bz101-00022", seq=2, code="must_play", player="elif", height=1100),
    Shot("overview", "", {}, height=1150),
    Shot("compliance", "compliance", {}, height=1350),
    Shot("scoring", "scoring", {"game": "t-19-fa202-00005"}, game="t-19-fa202-00005", height=1300),
    Shot("players-targeting", "players", {"players_tab": "2-card targeting"}, height=1200),
    Shot("live", "live", {}, height=1100),
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def dashboard(warehouse: Path) -> Iterator[str]:
    """`haftkhabis dashboard` on a free port until the block ends (stopped by its PID)."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="haftkhabis-screenshots-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "cli.app", "dashboard", "--warehouse", str(warehouse),
                             "--port", str(port)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env=dict(os.environ))
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the dashboard did not start (see {log.name})")
            time.sleep(0.2)  # polling a starting server
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()  # by its PID: `haftkhabis dashboard` execs Streamlit in place
        proc.wait(timeout=20)
        log.close()
    Path(log.name).unlink(missing_ok=True)  # kept when it failed, to read


def shoot(base: str, shots: list[Shot]) -> None:
    from playwright.sync_api import sync_playwright

    from dashboards.marker import PICTURES_DRAWN, SETTLED

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        try:
            for shot in shots:
                page = browser.new_page(viewport={"width": 1440, "height": shot.height})
                page.set_default_timeout(DEADLINE)
                query = f"?{urlencode(shot.params)}" if shot.params else ""
                page.goto(f"{base}/{shot.page}{query}")
                page.wait_for_function(SETTLED, arg=0, timeout=DEADLINE)
                # charts and tables draw after the run (Vega, the data grid): wait for each to have
                page.wait_for_function(PICTURES_DRAWN, timeout=DEADLINE)
                out = HERE / f"{shot.name}.png"
                page.screenshot(path=str(out))
                print(f"{out.relative_to(ROOT)}: {base}/{shot.page}{query}")
                page.close()
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", default=str(ROOT / "data" / "warehouse"))
    parser.add_argument("--only", action="append", help="only this shot (repeatable)")
    args = parser.parse_args()
    warehouse = Path(args.warehouse)
    if not (warehouse / "batches").exists():
        raise SystemExit(f"no warehouse at {warehouse}: run `make warehouse` first (the sample ingested)")
    if not Path(CHROMIUM).exists():
        raise SystemExit("Debian's chromium is not installed: `make browser`")
    shots = [s for s in SHOTS if not args.only or s.name in args.only]
    with dashboard(warehouse) as base:
        shoot(base, shots)


if __name__ == "__main__":
    main()
