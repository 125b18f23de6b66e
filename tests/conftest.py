"""Shared pytest set-up: hypothesis profiles (`--hypothesis-profile deep` for long runs)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import typer.testing
from hypothesis import settings

from tests.leakcheck import Corpus, corpus

settings.register_profile("deep", max_examples=3000, deadline=None)

_BUILD_COMMAND = typer.testing._get_command
_COMMANDS: dict[int, tuple[Any, Any]] = {}  # id(app) -> (app, its click command)


def _command_once(app: Any) -> Any:
    """The click command typer makes of `app`, made once per app. typer's test runner
    makes it again at every `invoke`, reading every command's signature and type hints:
    0.07–0.2 s an invocation, which was most of an in-process CLI test's time (the CLI's
    what-if leak test: 270 invocations, 57 of its 79 profiled seconds). No test changes
    an app's commands after its first invocation."""
    kept = _COMMANDS.get(id(app))
    if kept is None or kept[0] is not app:
        kept = _COMMANDS[id(app)] = (app, _BUILD_COMMAND(app))
    return kept[1]


typer.testing._get_command = _command_once


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules holding a `slow` test first, each kept whole (its module fixtures are
    made once per worker), the rest after, each group in its own order. pytest-xdist hands
    tests out in this order, so the longest ones start while the other worker has work
    left, not at the end, where one worker ran them while the other waited: 145 s of a
    17.7-minute run (1,829 s of tests on two workers, December 7)."""
    early = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in early)


@pytest.fixture(scope="session", autouse=True)
def _cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Caches (an S3 warehouse's part copies, `ingest.partcache`) in the test's own
    folder, never the user's; servers the tests start inherit it."""
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache-home"))
    yield
    if saved is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = saved


@pytest.fixture(scope="session")
def leak_corpus() -> Corpus:
    """The player-view leak tests' dozen games (tests/leakcheck.py)."""
    return corpus()
