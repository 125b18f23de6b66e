"""Dashboard benchmark: each page's first render and the replay's step change, timed with
Streamlit's AppTest against a large warehouse.

    .venv/bin/python bench/bench_dashboard.py build --hands 1000000   # once (minutes)
    .venv/bin/python bench/bench_dashboard.py run                     # the timings

`build` makes the warehouse in two stages. A base of real games: the simulator plays them
and `haftkhabis ingest`'s pipeline stores them (so every row is what ingest writes). Then
copies of the base ("tiles") fill it up to the target: each tile's game ids get a suffix
(`.r0007`), inside the raw log lines too, so a tiled game replays exactly as its original;
tiles are written with ingest's own Parquet part writer and committed as Delta versions and
a `batches` row, so `ingest.queries.open_warehouse` reads it like any other. Simulating and
ingesting a million hands for real would take hours on a small machine; the tiles give the
same row counts and partition layout, with fewer distinct games' *contents* (and the base's
players, ~1,270, each with ~300 times their hands). The `player_stats` summary is computed
whole from the tiled tables, as ingest does for a first batch. The warehouse is written
under `bench/out/` (ignored by git) and reused by `run` and `browser`.

`run` times, per page: a first render with empty query caches (the warehouse already
open: opening it is timed on its own), and a rerun with warm caches; then a replay deep
link's first render (the game's lines read and replayed) and N "Next" clicks.

`browser` times the same views as their users meet them: `haftkhabis dashboard` on the
warehouse, Debian's chromium through Playwright, each view opened in a new session (a cold
first render for that session: Streamlit's caches are the server's, so a view's first
session after the server started is marked *server cold*) until the page is whole — the
app's run marker (`data-hk-run`, drawn last) is there, nothing is stale, every chart and
table has drawn — then the replay's steps (the Next button and the → key, alternately), each timed in the
page from the click or key press to its run drawn, printed as p50/p95. Beside each wall
time it prints the CPU seconds the browser (chromium and Playwright's driver) and the
dashboard server spent, and the load average: on a shared machine wall times stretch
with the load, CPU seconds much less. It prints the figures; nothing is asserted.

    .venv/bin/python bench/bench_dashboard.py browser --warehouse bench/out/wh-1000000
    .venv/bin/python bench/bench_dashboard.py browser --warehouse data/warehouse --sessions 2

`profile` says where a replay step's browser time goes: the same steps under a chromium
trace (the renderer's main thread: its CPU time a step, steadier than the wall time on a
loaded machine, and the work it went to) and the JavaScript sampling profiler (the time
under each of Streamlit's script files: react-dom, emotion, Slider, Html, purify, ...).

    .venv/bin/python bench/bench_dashboard.py profile --warehouse data/warehouse --steps 20
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

from dashboards.marker import LAST_RUN, PICTURES_DRAWN, SETTLED, SETTLED_AT  # noqa: E402

OUT = ROOT / "bench" / "out"
APP = ROOT / "dashboards" / "app.py"
BASE_RUNS: list[tuple[str, dict[str, Any]]] = [
    ("bazito", {"games": 900, "seed": 11, "fault_rate": 0.1}),
    ("persian", {"games": 250, "seed": 12, "players": (2, 8), "match": {"hands": 3}, "fault_rate": 0.15}),
    ("persian", {"games": 120, "seed": 13, "players": (3, 6), "mode": "elimination", "fault_rate": 0.15}),
    ("pis-yedili", {"games": 300, "seed": 14, "players": (2, 7), "fault_rate": 0.15}),
]
#: (label, page, query parameters): each page's default view, then its heavier tabs
VIEWS: list[tuple[str, str, dict[str, str]]] = [
    ("overview", "overview", {}),
    ("games", "games", {}),
    ("scoring (one game)", "scoring", {"game": "{game}"}),
    ("scoring (across games)", "scoring", {"scoring_tab": "Across games"}),
    ("players (leaderboard)", "players", {}),
    ("players (profile)", "players", {"player": "{player}"}),
    ("players (2-card matrix)", "players", {"players_tab": "2-card targeting"}),
    ("compliance", "compliance", {}),
    ("check a log (empty)", "check_log", {}),
]


# ------------------------------------------------------------------------ build


def build_base(folder: Path) -> Path:
    """Simulate the base games and ingest them for real; returns the base warehouse."""
    from engine.simulate import SimConfig, open_output, write_simulation
    from ingest.pipeline import ingest

    logs = folder / "logs"
    base = folder / "base"
    if base.exists():
        return base
    logs.mkdir(parents=True, exist_ok=True)
    for i, (ruleset, options) in enumerate(BASE_RUNS):
        out = open_output(str(logs / f"{i}-{ruleset}.jsonl"))
        try:
            summary = write_simulation(SimConfig(ruleset, **options), out)
        finally:
            out.close()
        print(f"  simulated {ruleset}: {summary.games} games, {summary.hands} hands, {summary.lines} lines")
    started = time.monotonic()
    result = ingest([str(logs)], str(base), workers=os.cpu_count() or 1)
    print(f"  ingested the base: {result.games_new} games, {result.lines} lines in {time.monotonic() - started:.1f}s")
    return base


def _retag(part: pa.Table, suffix: str, delta: timedelta, months: pa.Array, index: pa.Array) -> pa.Table:
    """A tile's copy: game ids (and the ids inside the raw lines) get `suffix`; every
    timestamp moves by `delta` and `month` follows the game's new start."""
    names = part.column_names
    part = part.set_column(names.index("game_id"), "game_id",
                           pc.binary_join_element_wise(part["game_id"], suffix, ""))
    if "raw" in names:
        raw = pc.replace_substring_regex(part["raw"], pattern=r'^(\{"game":"[^"]+)"',
                                         replacement=r"\1" + suffix + '"', max_replacements=1)
        part = part.set_column(names.index("raw"), "raw", raw)
    for i, field in enumerate(part.schema):
        if pa.types.is_timestamp(field.type):
            part = part.set_column(i, field.name, pc.add(part[field.name], pa.scalar(delta)))
    return part.set_column(names.index("month"), "month", pc.take(months, index))


def _split(part: pa.Table, partition_by: tuple[str, ...]) -> list[tuple[tuple[str, ...], pa.Table]]:
    key = pc.binary_join_element_wise(*[part[c] for c in partition_by], "|")
    out = []
    for value in pc.unique(key).to_pylist():
        out.append((tuple(value.split("|")), part.filter(pc.equal(key, value)).drop_columns(list(partition_by))))
    return out


def _as_file(parts: list[pa.Table], schema: pa.Schema) -> pa.Table:
    """Concatenated tile parts with exactly the schema ingest writes (nullability included)."""
    data = pa.concat_tables(parts).select(schema.names)
    return pa.Table.from_arrays([c.cast(f.type) for c, f in zip(data.columns, schema, strict=True)],
                                schema=schema)


def build_tiles(base_root: Path, target: Path, hands: int) -> None:
    """Fill `target` with tiles of the base up to `hands` hands."""
    from engine import ENGINE_VERSION
    from ingest import summaries
    from ingest.schema import TABLES
    from ingest.store import PartWriter, Warehouse, new_token

    base = Warehouse(base_root)
    snapshot = base.snapshot()
    tables = {name: base.dataset(name, snapshot.versions[name]).to_table()
              for name in ("games", "hands", "hand_players", "events", "violations", "decisions")}
    base_hands = tables["hands"].num_rows
    tiles = max(1, -(-hands // base_hands))
    print(f"  base: {tables['games'].num_rows} games, {base_hands} hands, {tables['events'].num_rows} events; "
          f"{tiles} tiles")
    if target.exists():
        shutil.rmtree(target)
    store = Warehouse(target)
    store.ensure()
    # a writer like ingest: the lock held throughout, so a reader opening the warehouse
    # meanwhile reads its (empty) snapshot instead of healing it (deleting the open parts)
    with store.lock():
        store.recover()
        versions = {name: 0 for name in TABLES}
        started = datetime.now(UTC)
        clock = time.monotonic()
        games_ids = tables["games"]["game_id"]
        starts = tables["games"]["start_time"]
        for name, data in tables.items():
            spec = TABLES[name]
            index = pc.index_in(data["game_id"], value_set=games_ids)
            writer = PartWriter(store, name, prefix=f"b000001-{new_token()}")
            pending: dict[tuple[str, ...], list[pa.Table]] = {}
            pending_rows: dict[tuple[str, ...], int] = {}
            for k in range(tiles):
                # a year of games: tile k moves by k mod 12 months (30 days) and a few days more
                delta = timedelta(days=30 * (k % 12) + (k // 12) % 28)
                months = pc.fill_null(pc.strftime(pc.add(starts, pa.scalar(delta)), format="%Y-%m"), "unknown")
                for key, part in _split(_retag(data, f".r{k:04d}", delta, months, index), spec.partition_by):
                    pending.setdefault(key, []).append(part)
                    pending_rows[key] = pending_rows.get(key, 0) + part.num_rows
                    if pending_rows[key] >= 131_072:  # ingest's row-group size
                        writer.add_table(key, _as_file(pending.pop(key), spec.file_schema))
                        pending_rows[key] = 0
            for key, parts in pending.items():
                if parts:
                    writer.add_table(key, _as_file(parts, spec.file_schema))
            written = writer.close()
            versions[name] = store.commit(name, written, [], 1, "bench-tiles")
            print(f"  {name}: {data.num_rows * tiles:,} rows in {len(written)} files ({time.monotonic() - clock:.0f}s)")
            del pending
            gc.collect()
        versions["quarantine"] = store.table("quarantine").version()
        # the summaries ingest keeps with every batch (the leaderboard, the profiles, the
        # first seat, the 2-card matrix read them): computed whole here, as ingest does for
        # a warehouse's first batch
        clock = time.monotonic()
        for name, data in summaries.recompute(store, versions).items():
            versions[name] = summaries.commit(store, name, data, 1, "b000001-bench")
        print(f"  summaries: recomputed and committed ({time.monotonic() - clock:.0f}s)")
        games = tables["games"].num_rows * tiles
        row = {
            "id": 1, "kind": "bench-tiles", "started": started, "ended": datetime.now(UTC), "files": [],
            "lines": tables["events"].num_rows * tiles, "games_new": games, "games_updated": 0,
            "games_unchanged": 0, "violations": tables["violations"].num_rows * tiles, "errors": 0,
            "workers": 1, "engine_version": ENGINE_VERSION,
        }
        store.commit_batch(row, versions)
    (target / "BENCH.json").write_text(json.dumps({
        "base_games": tables["games"].num_rows, "base_hands": base_hands, "tiles": tiles,
        "games": games, "hands": base_hands * tiles, "events": tables["events"].num_rows * tiles,
    }, indent=2))


# ------------------------------------------------------------------------ run


def _timed(run: Any) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def measure(warehouse: Path, steps: int) -> dict[str, Any]:
    os.environ.setdefault("STREAMLIT_LOGGER_LEVEL", "error")  # no "No runtime found" per run
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from dashboards import cache
    from ingest import read

    os.environ["HAFTKHABIS_WAREHOUSE"] = str(warehouse)
    results: dict[str, Any] = {"warehouse": str(warehouse)}
    info = warehouse / "BENCH.json"
    if info.exists():
        results["size"] = json.loads(info.read_text())

    results["open_warehouse_s"] = _timed(lambda: read.connect(warehouse).close())
    reader = read.connect(warehouse)
    results["rows"] = {t: reader.rows(f"SELECT count(*) FROM {t}")[0][0]
                       for t in ("games", "hands", "hand_players", "events", "violations")}
    game, hand = reader.rows("""
        SELECT v.game_id, v.hand FROM violations v JOIN games g USING (game_id)
        WHERE v.hand IS NOT NULL AND g.hands >= 2 ORDER BY v.game_id DESC LIMIT 1""")[0]
    # a typical player (the median number of hands), not the busiest
    player = reader.rows("""
        SELECT player FROM (SELECT player, count(*) AS n FROM hand_players GROUP BY player)
        ORDER BY n, player LIMIT 1 OFFSET (SELECT count(DISTINCT player) // 2 FROM hand_players)""")[0][0]
    reader.close()
    values = {"game": game, "player": player}

    import logging

    for name in list(logging.root.manager.loggerDict):
        if name.startswith("streamlit"):
            logging.getLogger(name).setLevel(logging.ERROR)
    at = AppTest.from_file(str(APP), default_timeout=300)
    results["app_first_run_s"] = _timed(at.run)  # imports, the warehouse opened, Overview
    print(f"  warehouse opened in {results['open_warehouse_s'] * 1000:.0f} ms; the app's first run "
          f"(imports, opening, Overview) {results['app_first_run_s'] * 1000:.0f} ms")
    pages: dict[str, dict[str, float]] = {}
    for label, page, params in VIEWS:
        st.cache_data.clear()
        at.query_params.clear()
        at.query_params.update({k: v.format(**values) for k, v in params.items()})
        at.switch_page(f"app_pages/{page}.py")
        first = _timed(at.run)
        again = _timed(at.run)
        assert not at.exception, (label, [e.value for e in at.exception])
        pages[label] = {"first_render_s": first, "cached_rerun_s": again}
        print(f"  {label:<24} first render {first * 1000:6.0f} ms   cached rerun {again * 1000:5.0f} ms")
    results["pages"] = pages
    results["profile_player"] = player

    cache.reload()  # the replay's game not yet read nor replayed
    at.query_params.clear()
    at.query_params.update({"game": game, "hand": str(hand), "step": "1"})
    at.switch_page("app_pages/replay.py")
    open_replay = _timed(at.run)
    assert not at.exception
    clicks = []
    for _ in range(steps):
        at.button(key="replay_next").click()
        clicks.append(_timed(at.run))
    jump = []
    for _ in range(3):
        at.button(key="replay_nextbad").click()
        jump.append(_timed(at.run))
    assert not at.exception
    replay = cache.replay_game(game)
    results["replay"] = {
        "game": game, "lines": len(replay.steps) if replay else None,
        "first_render_s": open_replay,
        "step_mean_s": statistics.mean(clicks), "step_p95_s": sorted(clicks)[int(0.95 * (len(clicks) - 1))],
        "step_max_s": max(clicks), "next_violation_mean_s": statistics.mean(jump), "steps": steps,
    }
    print(f"  {'replay (deep link)':<24} first render {open_replay * 1000:6.0f} ms   step mean {statistics.mean(clicks) * 1000:.0f} ms, "
          f"p95 {results['replay']['step_p95_s'] * 1000:.0f} ms, max {max(clicks) * 1000:.0f} ms; "
          f"next violation {statistics.mean(jump) * 1000:.0f} ms")
    return results


CHROMIUM = "/usr/bin/chromium"
#: URL paths of the pages (dashboards/app.py's `url_path`s)
URL_PATHS = {"overview": "", "games": "games", "scoring": "scoring", "players": "players",
             "compliance": "compliance", "check_log": "check", "replay": "replay"}


def _serve(warehouse: Path) -> tuple[Any, str]:
    """`haftkhabis dashboard` on a free port, once its health check answers."""
    import socket
    import subprocess
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "cli.app", "dashboard", "--warehouse", str(warehouse),
                             "--port", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    return proc, f"http://127.0.0.1:{port}"
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.terminate()
            raise SystemExit("the dashboard did not start")
        time.sleep(0.2)  # polling a starting server


#: in the page: the time of the next press (pointer, click or key: the page's clock), for a step
#: timed from the user's action rather than from Playwright's (which first waits for the
#: element to be visible, stable and enabled)
ARM = """() => { window.hkActed = null;
  for (const kind of ['pointerdown', 'click', 'keydown'])
    document.addEventListener(kind, () => { window.hkActed ??= performance.now(); }, {capture: true, once: true}); }"""

def _cpu_seconds(root: int) -> dict[int, float]:
    """CPU seconds (user + system) used so far by process `root` and each of its
    descendants, by PID (Linux /proc): with other work on the machine, wall times stretch
    with the load and CPU seconds much less, so both are printed."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    used: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(stat.parent.name)
        children.setdefault(int(fields[1]), []).append(pid)
        used[pid] = (int(fields[11]) + int(fields[12])) / tick
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        found[pid] = used.get(pid, 0.0)
        todo += children.get(pid, [])
    return found


def _spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds between two `_cpu_seconds`, over the processes alive at the end (a
    closed page's renderer that exits meanwhile takes its seconds with it: not counted)."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def _quantile(values: list[float], q: float) -> float:
    return sorted(values)[round(q * (len(values) - 1))]


def _bench_subjects(warehouse: Path) -> dict[str, str]:
    """The browser benches' game (the longest with a violation in a hand: the replay's
    heaviest steps) and player (the median number of hands: a typical profile)."""
    from ingest import read

    reader = read.connect(warehouse)
    try:
        game, hand = reader.rows("""
            SELECT v.game_id, v.hand FROM violations v JOIN games g USING (game_id)
            WHERE v.hand IS NOT NULL ORDER BY g.lines DESC, v.game_id LIMIT 1""")[0]
        player = reader.rows("""
            SELECT player FROM (SELECT player, count(*) AS n FROM hand_players GROUP BY player)
            ORDER BY n, player LIMIT 1 OFFSET (SELECT count(DISTINCT player) // 2 FROM hand_players)""")[0][0]
    finally:
        reader.close()
    return {"game": game, "hand": str(hand), "player": player}


def measure_browser(warehouse: Path, steps: int, sessions: int, returning: bool = False,
                    only: Sequence[str] = ()) -> dict[str, Any]:
    """Each view's time to a whole page in chromium, per session, with the CPU seconds the
    browser and the dashboard server spent on it; the replay's steps. Each session is a
    new browser profile (a first visit: Streamlit's ~3 MB of scripts fetched and compiled),
    or with `returning` one profile for all, its HTTP cache kept (a returning user's
    browser; each view still a new session). `only`: the views whose label starts with one
    of these (all when empty)."""
    from urllib.parse import urlencode

    from playwright.sync_api import sync_playwright

    values = _bench_subjects(warehouse)
    game, hand = values["game"], values["hand"]
    views = [*VIEWS, ("replay (deep link)", "replay", {"game": "{game}", "hand": str(hand), "step": "1"})]
    views = [v for v in views if not only or v[0].startswith(tuple(only))]
    results: dict[str, Any] = {"warehouse": str(warehouse), "mode": "browser", "returning": returning,
                               "game": game, "player": values["player"],
                               "load_before": os.getloadavg(), "pages": {}, "cpu": {}}
    info = warehouse / "BENCH.json"
    if info.exists():
        results["size"] = json.loads(info.read_text())
    proc, base = _serve(warehouse)
    me = os.getpid()

    def cpu() -> tuple[dict[int, float], dict[int, float]]:
        """(browser, server) CPU seconds so far, by process: everything under this process
        but itself and the server is chromium and Playwright's driver."""
        server = _cpu_seconds(proc.pid)
        return {pid: t for pid, t in _cpu_seconds(me).items() if pid not in server and pid != me}, server

    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM)
            profile = browser.new_context(viewport={"width": 1440, "height": 1000}) if returning else None
            if profile is not None:  # the scripts in its cache before the first view is timed
                warm = profile.new_page()
                warm.goto(f"{base}/{URL_PATHS['check_log']}")
                warm.wait_for_function(SETTLED, arg=0)
                warm.close()
            for label, page_name, params in views:
                times, used = [], []
                for _ in range(sessions):
                    page = profile.new_page() if profile is not None else \
                        browser.new_page(viewport={"width": 1440, "height": 1000})
                    page.set_default_timeout(300_000)
                    query = urlencode({k: v.format(**values) for k, v in params.items()})
                    before = cpu()
                    started = time.perf_counter()
                    page.goto(f"{base}/{URL_PATHS[page_name]}" + (f"?{query}" if query else ""))
                    page.wait_for_function(SETTLED, arg=0)
                    page.wait_for_function(PICTURES_DRAWN)
                    times.append(time.perf_counter() - started)
                    after = cpu()
                    used.append((_spent(before[0], after[0]), _spent(before[1], after[1])))
                    if page_name == "replay" and len(times) == sessions:
                        results.update(_steps(page, steps, cpu))
                    page.close()
                results["pages"][label] = times
                results["cpu"][label] = used
                rest = ", ".join(f"{t * 1000:.0f}" for t in times[1:])
                print(f"  {label:<24} server cold {times[0] * 1000:6.0f} ms   later sessions {rest} ms   "
                      f"(CPU: browser {used[-1][0]:.2f} s, server {used[0][1]:.2f} s cold, {used[-1][1]:.2f} s later)")
            browser.close()
    finally:
        proc.terminate()  # by its PID
        proc.wait(timeout=20)
    clicks = results.get("replay_steps_s") or []
    if clicks:
        used = results["replay_steps_cpu"]
        print(f"  {'replay, one step':<24} p50 {_quantile(clicks, 0.5) * 1000:.0f} ms, p95 "
              f"{_quantile(clicks, 0.95) * 1000:.0f} ms, max {max(clicks) * 1000:.0f} ms ({len(clicks)} steps: "
              f"the Next button clicked, then the → key, alternately; from the click or key press to the "
              f"run drawn); CPU a step, p50: browser {_quantile([u[0] for u in used], 0.5) * 1000:.0f} ms, "
              f"server {_quantile([u[1] for u in used], 0.5) * 1000:.0f} ms")
    results["load_after"] = os.getloadavg()
    print(f"  load average {results['load_before'][0]:.1f} before, {results['load_after'][0]:.1f} after "
          f"({os.cpu_count()} CPUs)")
    return results


#: in-app views, in the order a user might walk them: (label, the sidebar link, what the
#: user then does on that page, in order: ("tab", name), ("type", a text input's label, a
#: value) or ("pick", a select box's label, a value); a value "{game}" or "{player}"). The
#: view's time is its last action's, or the link's when there is none; a view whose page is
#: the one on screen is reached without the link.
NAVIGATION: list[tuple[str, str, tuple[tuple[str, ...], ...]]] = [
    ("overview", "Overview", ()),
    ("live", "Live", ()),
    ("games", "Games", ()),
    ("scoring (one game)", "Scoring", (("type", "Game id", "{game}"),)),
    ("scoring (across games)", "Scoring", (("tab", "Across games"),)),
    ("players (leaderboard)", "Players", ()),
    ("players (profile)", "Players", (("tab", "Profile"), ("pick", "Player", "{player}"))),
    ("players (first seat)", "Players", (("tab", "First seat"),)),
    ("players (2-card matrix)", "Players", (("tab", "2-card targeting"),)),
    ("ratings", "Ratings", ()),
    ("compliance", "Compliance", ()),
    ("deal audit", "Deal audit", ()),
    ("collusion", "Collusion", ()),
    ("replay (a game)", "Replay", (("type", "Game id", "{game}"),)),
    ("check a log (empty)", "Check a log", ()),
    ("cases", "Cases", ()),
]
#: the page's last run settled and its pictures drawn (SETTLED and PICTURES_DRAWN),
#: answering the page's clock when both hold (null until then)
NAVIGATED = f"(after) => (({SETTLED})(after) && ({PICTURES_DRAWN})()) ? performance.now() : null"


def _act(page: Any, nav: Any, step: tuple[str, ...], values: dict[str, str]) -> None:
    """One of NAVIGATION's actions (or ("link", name): a sidebar link), the page's clock
    armed to take the time of its click or key press."""
    kind = step[0]
    if kind in ("link", "tab"):
        target = nav.get_by_role("link", name=step[1]) if kind == "link" else page.get_by_role("tab", name=step[1])
        page.evaluate(ARM)
        target.click()
        return
    field = page.get_by_label(step[1], exact=True)  # a game id typed, or a player picked
    field.click()
    field.fill(step[2].format(**values))
    if kind == "pick":
        option = page.get_by_role("option", name=step[2].format(**values), exact=True)
        page.evaluate(ARM)
        option.click()
    else:
        page.evaluate(ARM)
        field.press("Enter")


def measure_navigation(warehouse: Path, passes: int, only: Sequence[str] = ()) -> dict[str, Any]:
    """Each view reached as a user reaches it inside the dashboard: per pass, one browser
    session opened (its time printed apart: Streamlit's page loaded, its websocket opened;
    the browser's HTTP cache kept across passes), then each view's sidebar link clicked and
    its actions done (a tab opened, a game id typed, a player picked), the last timed in
    the page from its click or key press to its run drawn whole, with the CPU seconds of the
    browser and of the server. The first pass is the server's first run of each view's
    queries since it started (their answers not cached yet); later passes read the cache,
    as every session does until the next batch lands."""
    from playwright.sync_api import sync_playwright

    views = [v for v in NAVIGATION if not only or v[0].startswith(tuple(only))]
    values = _bench_subjects(warehouse)
    results: dict[str, Any] = {"warehouse": str(warehouse), "mode": "navigate", **values,
                               "load_before": os.getloadavg(), "passes": []}
    proc, base = _serve(warehouse)
    me = os.getpid()

    def cpu() -> tuple[dict[int, float], dict[int, float]]:
        server = _cpu_seconds(proc.pid)
        return {pid: t for pid, t in _cpu_seconds(me).items() if pid not in server and pid != me}, server

    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM)
            context = browser.new_context(viewport={"width": 1440, "height": 1000})
            for number in range(passes):
                page = context.new_page()  # a new session (the browser's HTTP cache kept)
                page.set_default_timeout(300_000)
                started = time.perf_counter()
                page.goto(f"{base}/{URL_PATHS['check_log']}")
                page.wait_for_function(NAVIGATED, arg=0)
                opened = time.perf_counter() - started
                results.setdefault("session_opened_s", []).append(opened)
                print(f"  pass {number + 1}  the session opened (Check a log, empty) in {opened * 1000:.0f} ms")
                nav = page.get_by_test_id("stSidebarNav")
                figures: dict[str, Any] = {}
                on_screen = "Check a log"
                for label, link, actions in views:
                    steps: list[tuple[str, ...]] = [("link", link)] if link != on_screen or not actions else []
                    steps += actions
                    on_screen = link
                    for step in steps:
                        before = int(page.evaluate(LAST_RUN))
                        spent = cpu()
                        _act(page, nav, step, values)
                        drawn = page.wait_for_function(NAVIGATED, arg=before).json_value()
                    took = (drawn - page.evaluate("window.hkActed")) / 1000  # the last step's
                    now = cpu()
                    figures[label] = {"s": took, "browser_cpu_s": _spent(spent[0], now[0]),
                                      "server_cpu_s": _spent(spent[1], now[1])}
                    print(f"  pass {number + 1}  {label:<24} {took * 1000:6.0f} ms   (CPU: browser "
                          f"{figures[label]['browser_cpu_s']:.2f} s, server {figures[label]['server_cpu_s']:.2f} s)")
                results["passes"].append(figures)
                page.close()
            browser.close()
    finally:
        proc.terminate()  # by its PID
        proc.wait(timeout=20)
    results["load_after"] = os.getloadavg()
    print(f"  load average {results['load_before'][0]:.1f} before, {results['load_after'][0]:.1f} after "
          f"({os.cpu_count()} CPUs)")
    return results


def _steps(page: Any, steps: int, cpu: Any) -> dict[str, Any]:
    """`steps` steps forward, each timed in the page from the user's action (a click on
    Next, or the → key) to its run drawn whole."""
    clicks, used = [], []
    next_button = page.get_by_role("button", name="Next ▶")
    for i in range(steps):
        before = int(page.evaluate(LAST_RUN))
        page.evaluate(ARM)
        spent = cpu()
        if i % 2:
            page.get_by_role("heading", name="Replay").click()  # focus off the buttons first
            page.evaluate(ARM)
            page.keyboard.press("ArrowRight")
        else:
            next_button.click()
        drawn = page.wait_for_function(SETTLED_AT, arg=before).json_value()
        clicks.append((drawn - page.evaluate("window.hkActed")) / 1000)
        now = cpu()
        used.append((_spent(spent[0], now[0]), _spent(spent[1], now[1])))
    return {"replay_steps_s": clicks, "replay_steps_cpu": used}


def _self_times(events: list[dict[str, Any]]) -> tuple[float, dict[str, float]]:
    """A thread's trace events (complete events, `X`): its CPU microseconds in top-level
    events, and each event name's own CPU time (its time less its children's)."""
    events = sorted(events, key=lambda e: (e["ts"], -e["dur"]))
    own: dict[str, float] = {}
    stack: list[dict[str, Any]] = []
    top = 0.0
    for event in events:
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= event["ts"]:
            stack.pop()
        cpu = event.get("tdur", event["dur"])
        if stack:
            own[stack[-1]["name"]] = own.get(stack[-1]["name"], 0.0) - cpu
        else:
            top += cpu
        own[event["name"]] = own.get(event["name"], 0.0) + cpu
        stack.append(event)
    return top, own


def measure_profile(warehouse: Path, steps: int, trace: Path) -> dict[str, Any]:
    """The replay's steps in chromium with two profiles of them: a trace (the renderer's
    main thread: its CPU time a step, which a loaded machine stretches far less than the
    wall time, and what it went to) and, over as many steps again, the JavaScript
    sampling profiler (CDP `Profiler`, every 0.2 ms): the time under each script file,
    counted once a sample (Streamlit's bundles: react-dom, emotion, Slider, Html,
    purify, ...)."""
    from urllib.parse import urlencode

    from playwright.sync_api import sync_playwright

    values = _bench_subjects(warehouse)
    load_before = os.getloadavg()
    proc, base = _serve(warehouse)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.set_default_timeout(300_000)
            page.goto(f"{base}/replay?" + urlencode({"game": values["game"], "hand": values["hand"], "step": "1"}))
            page.wait_for_function(SETTLED, arg=0)
            page.wait_for_function(PICTURES_DRAWN)

            def nothing() -> tuple[dict[int, float], dict[int, float]]:
                return {}, {}  # no CPU counted: the profiles say it

            _steps(page, 3, nothing)  # the step's scripts loaded and compiled
            browser.start_tracing(page=page, path=str(trace), categories=["devtools.timeline", "toplevel"])
            traced = _steps(page, steps, nothing)["replay_steps_s"]
            browser.stop_tracing()
            cdp = page.context.new_cdp_session(page)
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 200})
            cdp.send("Profiler.start")
            _steps(page, steps, nothing)
            profile = cdp.send("Profiler.stop")["profile"]
            browser.close()
    finally:
        proc.terminate()  # by its PID
        proc.wait(timeout=20)
    raw = json.loads(trace.read_text())
    events = raw["traceEvents"] if isinstance(raw, dict) else raw
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    top, own = _self_times([e for e in events if e.get("ph") == "X" and "dur" in e and (e["pid"], e["tid"]) in main])
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    by_file: dict[str, float] = {}
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        seen, at = set(), sample
        while at is not None:
            frame = nodes[at]["callFrame"]
            name = frame["url"].rsplit("/", 1)[-1].split(".")[0] or frame["functionName"]
            if name not in seen:
                seen.add(name)
                by_file[name] = by_file.get(name, 0.0) + delta / 1000
            at = parent.get(at)
    results: dict[str, Any] = {"warehouse": str(warehouse), "game": values["game"], "steps": steps,
               "step_p50_s": _quantile(traced, 0.5), "main_cpu_ms_a_step": top / 1000 / steps,
               "main_own_ms_a_step": {k: v / 1000 / steps for k, v in sorted(own.items(), key=lambda kv: -kv[1])[:15]},
               "js_ms_a_step_by_file": {k: v / steps for k, v in sorted(by_file.items(), key=lambda kv: -kv[1])[:25]},
               "load_before": load_before, "load_after": os.getloadavg()}
    print(f"  replay, one step: p50 {results['step_p50_s'] * 1000:.0f} ms (traced); the renderer's main thread "
          f"{results['main_cpu_ms_a_step']:.0f} ms of CPU a step, of which (own time):")
    for name, ms in results["main_own_ms_a_step"].items():
        print(f"    {ms:6.1f} ms  {name}")
    print("  JavaScript sampled, ms a step under each script file ((program): the browser's own work; (idle)):")
    for name, ms in results["js_ms_a_step_by_file"].items():
        print(f"    {ms:6.1f} ms  {name}")
    print(f"  load average {load_before[0]:.1f} before, {results['load_after'][0]:.1f} after ({os.cpu_count()} CPUs)")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="make the benchmark warehouse")
    build.add_argument("--hands", type=int, default=1_000_000)
    build.add_argument("--out", type=Path, default=None)
    run = sub.add_parser("run", help="time the pages")
    run.add_argument("--warehouse", type=Path, default=OUT / "wh-1000000")
    run.add_argument("--steps", type=int, default=30)
    run.add_argument("--json", type=Path, default=None, help="also write the figures here")
    real = sub.add_parser("browser", help="time the pages in chromium (haftkhabis dashboard, Playwright)")
    real.add_argument("--warehouse", type=Path, default=ROOT / "data" / "warehouse")
    real.add_argument("--steps", type=int, default=20)
    real.add_argument("--sessions", type=int, default=3, help="sessions per view (the first is server cold)")
    real.add_argument("--returning", action="store_true",
                      help="one browser profile for every view, its HTTP cache kept (a returning user)")
    real.add_argument("--json", type=Path, default=None, help="also write the figures here")
    real.add_argument("--only", nargs="+", default=(), metavar="VIEW",
                      help="time only the views whose label starts so (e.g. replay: the deep link and its steps)")
    prof = sub.add_parser("profile", help="profile the replay's steps in chromium (trace and JS sampling)")
    prof.add_argument("--warehouse", type=Path, default=ROOT / "data" / "warehouse")
    prof.add_argument("--steps", type=int, default=20)
    prof.add_argument("--trace", type=Path, default=OUT / "replay-steps.trace.json",
                      help="where the chromium trace is written (open it in chrome://tracing or Perfetto)")
    prof.add_argument("--json", type=Path, default=None, help="also write the figures here")
    walk = sub.add_parser("navigate", help="time each view reached inside one session (sidebar links, tabs)")
    walk.add_argument("--warehouse", type=Path, default=ROOT / "data" / "warehouse")
    walk.add_argument("--passes", type=int, default=2, help="walks through the views (the first is server cold)")
    walk.add_argument("--json", type=Path, default=None, help="also write the figures here")
    walk.add_argument("--only", nargs="+", default=(), metavar="VIEW", help="time only the views whose label starts so")
    args = parser.parse_args()
    if args.command == "build":
        target = args.out or OUT / f"wh-{args.hands}"
        started = time.monotonic()
        base = build_base(OUT / "base")
        build_tiles(base, target, args.hands)
        print(f"built {target} in {time.monotonic() - started:.0f}s")
    elif args.command == "profile":
        print(f"profiling the replay's steps in chromium on {args.warehouse}")
        args.trace.parent.mkdir(parents=True, exist_ok=True)
        results = measure_profile(args.warehouse, args.steps, args.trace)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2, default=str))
    elif args.command == "navigate":
        print(f"timing the dashboard's views inside one chromium session on {args.warehouse}")
        results = measure_navigation(args.warehouse, args.passes, args.only)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2, default=str))
    elif args.command == "browser":
        print(f"timing the dashboard in chromium on {args.warehouse}")
        results = measure_browser(args.warehouse, args.steps, args.sessions, args.returning, args.only)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2, default=str))
    else:
        print(f"timing the dashboard on {args.warehouse}")
        results = measure(args.warehouse, args.steps)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
