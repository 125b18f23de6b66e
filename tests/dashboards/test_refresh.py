"""Issue 14, item 17: the dashboard cached its reader forever, so after `compact` with a
vacuum every page raised (its snapshot's files were gone) until the server was reloaded.
The reader is now reopened when the warehouse commits a newer batch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ingest import read
from tests.dashboards.loggen import dump, random_game

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


def _metric(at: AppTest, label: str) -> str:
    return next(str(m.value) for m in at.metric if m.label == label)


def _ingest_more(root: Path, tmp_path: Path, start: int) -> None:
    from ingest.pipeline import ingest

    log = tmp_path / f"more-{start}.jsonl"
    games = [random_game(f"t43-more-{i}", "bazito", seed=40 + i, ts="2026-10-15T10:00:00Z")
             for i in range(start, start + 3)]
    log.write_text("\n".join(line for g in games for line in dump(g)) + "\n", encoding="utf-8")
    ingest([str(log)], str(root), workers=1)


def test_pages_follow_a_compact_with_vacuum(sample_warehouse: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from ingest.maintenance import compact

    root = tmp_path / "wh"
    shutil.copytree(sample_warehouse, root)
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(root))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert _metric(at, "Games") == "5"
    old_parts = {p for p in root.rglob("*.parquet")}

    _ingest_more(root, tmp_path, 0)
    _ingest_more(root, tmp_path, 3)
    compact(str(root), retain_hours=0, vacuum=True)
    assert old_parts - {p for p in root.rglob("*.parquet")}, "the vacuum deleted nothing"

    at.run()  # the same session, no reload pressed
    assert not at.exception, [e.value for e in at.exception]
    assert _metric(at, "Games") == "11"
    for page in ("games", "players", "compliance", "scoring"):
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])


def test_stale_notices_a_new_batch_only(sample_warehouse: Path, tmp_path: Path) -> None:
    root = tmp_path / "wh"
    shutil.copytree(sample_warehouse, root)
    reader = read.connect(root)
    try:
        assert not reader.stale()
        (root / "games" / "unrelated.txt").write_text("x")  # not a commit
        assert not reader.stale()
        _ingest_more(root, tmp_path, 0)
        assert reader.stale()
        fresh = read.connect(root)
        assert fresh.batch == reader.batch + 1 and not fresh.stale()
        fresh.close()
    finally:
        reader.close()


def test_the_server_opens_the_shared_reader_before_the_first_page(sample_warehouse: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`dashboards.server` imports the pages' modules, opens the warehouse's shared reader
    and asks the landing page's questions while it waits for a browser (`_warm`): the
    first page finds the reader open and the answers cached, and a warehouse not there
    yet is left for the page to report."""
    from streamlit import runtime
    from streamlit.runtime.caching.storage.dummy_cache_storage import MemoryCacheStorageManager

    from dashboards import cache, server

    opened: list[str] = []
    connect = read.connect

    def counted(where: object, *args: object) -> read.Reader:
        opened.append(str(where))
        return connect(where, *args)  # type: ignore[arg-type]

    asked: list[str] = []
    for name in ("choices", "overview_totals", "by_ruleset", "status_counts", "over_time"):
        def ask(*args: object, _name: str = name, _question: object = getattr(read, name)) -> object:
            asked.append(_name)
            return _question(*args)  # type: ignore[operator]

        monkeypatch.setattr(read, name, ask)
    # Streamlit's runtime, as the server has made it by then (its cache storage)
    storage = type("Runtime", (), {"cache_storage_manager": MemoryCacheStorageManager()})()
    monkeypatch.setattr(runtime, "exists", lambda: True)
    monkeypatch.setattr(runtime, "get_instance", lambda: storage)
    monkeypatch.setattr(read, "connect", counted)
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(tmp_path / "not-yet"))
    server._warm()  # nothing to open: no error, nothing cached
    assert opened == [str(tmp_path / "not-yet")]
    root = tmp_path / "wh"
    shutil.copytree(sample_warehouse, root)
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(root))
    cache._reader.clear()
    cache._query.clear()
    try:
        assert not asked
        server._warm()
        assert opened[1:] == [str(root)]
        assert sorted(asked) == ["by_ruleset", "choices", "over_time", "overview_totals", "status_counts"]
        warmed = cache.reader()  # the first page's: the one opened, not opened again
        assert opened[1:] == [str(root)] and warmed.batch == connect(root).batch
        # the landing page's questions, for every game, answered from the cache
        answers = cache.overview(read.GameFilter())
        cache.query("choices")
        assert len(asked) == 5 and answers.totals["games"] > 0
        cache.overview(read.GameFilter(rulesets=("bazito",)))  # another filter: asked
        assert len(asked) == 9
    finally:
        cache._reader.clear()
        cache._query.clear()
