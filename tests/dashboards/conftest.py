"""Fixtures for the dashboard's tests: a small sample log (compliant games and games with
planted violations, three rulesets) and, built from it once per session, a warehouse."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from streamlit.testing.v1 import AppTest

from engine.replay import GameReplay, replay_lines
from tests.dashboards.loggen import corrupt, dump, random_game

ROOT = Path(__file__).resolve().parents[2]

DISPUTED = "t41-disputed"  # a persian match of 2 hands with violations planted in hand 1


def sample_lines() -> list[str]:
    games = [
        corrupt(random_game(DISPUTED, "persian", ["ali", "bita", "cyrus"], seed=3, match={"hands": 2},
                            ts="2026-10-02T19:00:00Z", meta={"server_build": "hk-server/2.4.1-rc"})),
        random_game("t41-bazito-1", "bazito", seed=5, ts="2026-10-03T10:00:00Z",
                    meta={"server_build": "hk-server/2.4.0"}),
        random_game("t41-bazito-2", "bazito", ["sara", "omid", "ali", "bita"], seed=8,
                    ts="2026-11-04T10:00:00Z", meta={"server_build": "hk-server/2.4.0"}),
        random_game("t41-pis-1", "pis-yedili", ["sara", "kian", "mina"], seed=11, hands=2,
                    ts="2026-11-05T21:30:00Z", meta={"server_build": "hk-server/2.3.1"}),
        corrupt(random_game("t41-elim-1", "persian", ["ali", "sara", "mina", "kian"], seed=4,
                            mode="elimination", ts="2026-11-06T08:15:00Z",
                            meta={"server_build": "hk-server/2.3.1"}), seed=7, count=1),
    ]
    return [text for game in games for text in dump(game)]


@pytest.fixture(scope="session")
def sample_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("logs") / "sample.jsonl"
    path.write_text("\n".join(sample_lines()) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def sample_replays(sample_log: Path) -> dict[str, GameReplay]:
    """Every game of the sample log, replayed (the support view), by game id."""
    lines = [(raw.encode(), "sample.jsonl", n)
             for n, raw in enumerate(sample_log.read_text(encoding="utf-8").splitlines(), 1)]
    games = dict.fromkeys(orjson.loads(raw)["game"] for raw, _, _ in lines)
    found = {game: replay_lines(lines, game) for game in games}
    return {game: replay for game, replay in found.items() if replay is not None}


@pytest.fixture(scope="session")
def sample_warehouse(tmp_path_factory: pytest.TempPathFactory, sample_log: Path) -> Path:
    """The sample log ingested into a fresh warehouse (ingest's own pipeline)."""
    from ingest.pipeline import ingest

    root = tmp_path_factory.mktemp("warehouse") / "wh"
    ingest([str(sample_log)], str(root), workers=1)
    return root


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def dashboard_server(warehouse: Path, log: Path, *extra: str) -> Iterator[int]:
    """`haftkhabis dashboard` on a free port of 127.0.0.1, ready (its health check
    answers), stopped by its PID afterwards; yields the port."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli.app", "dashboard", "--warehouse", str(warehouse),
             "--port", str(port), *extra],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                            timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the dashboard did not start:\n{log.read_text(errors='replace')}")
            time.sleep(0.2)
        yield port
    finally:
        proc.terminate()  # by PID: `haftkhabis dashboard` execs Streamlit in place
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def open_page(at: AppTest, page: str, **params: str) -> AppTest:
    """Open the dashboard page `page` with these query parameters (a deep link); the page
    must render without an exception."""
    at.run()
    at.query_params.clear()
    at.query_params.update(params)
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at
