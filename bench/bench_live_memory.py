"""What a live server keeps in memory for each push and each game, and what keeping it costs.

Three stores grow with a live warehouse: the server's finished receipts
(`service.receipts.FinishedReceipts`, the latest `RECENT_RECEIPTS`), the writer's index
of the committed games (`ingest.live.GamesIndex`) and the server's map of where each
game's lines lie (`service.places.GamePlaces`, its game index's). This bench fills each as
the service does — receipts in groups sharing their start and finish, games read in parts
and folded every `FOLD_AT` — and prints, measured by tracemalloc, the bytes each holds a
receipt or a game, beside what the objects they replaced held (a `Receipt` object each in
an ordered dictionary; a dictionary entry a game, and for the server's map the tuple of
each part's games too), and the CPU time of an add, a look-up, a fold and a commit's
change; and the CPU time of a search of commits.log for a receipt older than those kept.
Nothing is asserted.

    .venv/bin/python bench/bench_live_memory.py                      # 200,000 receipts, 1,000,000 games
    .venv/bin/python bench/bench_live_memory.py --receipts 50000 --games 100000
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import sys
import tempfile
import time
import tracemalloc
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest.live import GamesIndex  # noqa: E402
from service import jobs  # noqa: E402
from service.places import GamePlaces, Place  # noqa: E402
from service.receipts import FinishedReceipts, Receipt, new_id, now  # noqa: E402


def receipts(count: int, group: int = 250) -> list[Receipt]:
    made = []
    for n in range(count):
        if n % group == 0:
            started, finished = now(), now()
        made.append(Receipt(id=f"ing_{hashlib.blake2b(str(n).encode(), digest_size=8).hexdigest()}",
                            status="committed", sha256=hashlib.sha256(str(n).encode()).hexdigest(),
                            size=20_000 + n % 5_000, received_at=now(), lines=60, started_at=started,
                            finished_at=finished, batch=n // group))
    return made


def commits_log(made: list[Receipt], mib: int) -> None:
    """An older receipt, past those kept, is searched for in commits.log (up to
    `COMMITS_LOG_BYTES` a file): the CPU time of a miss (an id in no line: the whole file
    read), by `jobs._lines_with` and by the scan line by line it replaced."""
    lines = [r.to_json() + b"\n" for r in made[:10_000]]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "commits.log"
        with open(path, "wb") as out:
            while out.tell() < mib << 20:
                out.write(b"".join(lines))

        def by_lines(needle: bytes) -> bytes | None:  # before
            found = None
            with open(path, "rb") as file:
                for line in file:
                    if needle in line:
                        found = line
            return found

        def by_mmap(needle: bytes) -> bytes | None:
            with open(path, "rb") as file:
                return next(jobs._lines_with(file, needle), None)

        print(f"an older receipt searched in a commits.log of {path.stat().st_size >> 20} MiB:")
        for name, search in (("mmap.rfind", by_mmap), ("line by line (before)", by_lines)):
            by_lines(b"warm the page cache")
            clock = time.process_time()
            search(orjson.dumps(new_id()))
            print(f"  {name}: a miss {1000 * (time.process_time() - clock):.0f} ms of CPU")


def held(build: Callable[[], object]) -> tuple[int, float]:
    """Bytes `build()` allocates and still holds after it (traced), and its CPU seconds
    (a second run, untraced: tracing slows every allocation)."""
    gc.collect()
    tracemalloc.start()
    kept = build()
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    gc.collect()
    clock = time.process_time()
    kept = build()
    seconds = time.process_time() - clock
    del kept
    return size, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--receipts", type=int, default=200_000)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--log-mib", type=int, default=256, help="commits.log's size for the search of an older receipt")
    args = parser.parse_args()

    made = receipts(args.receipts)

    def as_columns() -> FinishedReceipts:
        book = FinishedReceipts(args.receipts)
        for receipt in made:
            book.add(receipt)
        return book

    def as_objects() -> OrderedDict[str, Receipt]:  # what the server kept before
        book: OrderedDict[str, Receipt] = OrderedDict()
        for receipt in made:
            copy = replace(receipt)
            book[copy.id] = copy
            book.move_to_end(copy.id)
        return book

    commits_log(made, args.log_mib)
    size, seconds = held(as_columns)
    old_size, old_seconds = held(as_objects)
    # an object's strings are the ones `made` holds: count them as the server's own copies
    strings = sum(sys.getsizeof(r.id) + sys.getsizeof(r.sha256) + sys.getsizeof(r.received_at) for r in made)
    print(f"receipts: {args.receipts:,}")
    print(f"  columns: {size / args.receipts:.0f} bytes a receipt, add {1e6 * seconds / args.receipts:.1f} µs")
    print(f"  objects (before): {(old_size + strings) / args.receipts:.0f} bytes a receipt "
          f"(its own strings included), add {1e6 * old_seconds / args.receipts:.1f} µs")
    book = as_columns()
    clock = time.process_time()
    for receipt in made[::100]:
        book.get(receipt.id)
    print(f"  look-up: {1e6 * (time.process_time() - clock) / len(made[::100]):.1f} µs")
    made.clear()
    del book

    games = [(f"t-{n % 64:02d}-fa{n % 997:03d}-{n:08d}",
              hashlib.blake2b(str(n).encode(), digest_size=16).hexdigest()) for n in range(args.games)]
    place = ("persian", "2026-12")
    folds: list[float] = []

    def as_index() -> GamesIndex:
        folds.clear()
        index = GamesIndex()
        for start in range(0, len(games), 2_000):  # parts of 2,000 games, as `at` reads them
            for game, content in games[start:start + 2_000]:
                index._recent[game] = (content, *place)
            if len(index._recent) >= index.FOLD_AT:
                clock = time.process_time()
                index._fold()
                folds.append(time.process_time() - clock)
        return index

    def as_dict() -> dict[str, tuple[str, str, str]]:  # what the writer kept before
        return {game: (content, *place) for game, content in games}

    size, seconds = held(as_index)
    old_size, _ = held(as_dict)
    strings = sum(sys.getsizeof(g) + sys.getsizeof(c) for g, c in games)
    print(f"games: {args.games:,}")
    print(f"  index: {size / args.games:.0f} bytes a game (up to {GamesIndex.FOLD_AT:,} games "
          f"read lately held as read), read {1e6 * seconds / args.games:.1f} µs a game")
    print(f"  dictionary (before): {(old_size + strings) / args.games:.0f} bytes a game (its own strings included)")
    if folds:
        print(f"  folds: {len(folds)}, the last {1000 * folds[-1]:.0f} ms (columns of "
              f"{args.games - args.games % GamesIndex.FOLD_AT:,} games)")
    index = as_index()
    clock = time.process_time()
    index._lookup([g for g, _ in games[::100]])
    print(f"  look-up: {1e6 * (time.process_time() - clock) / len(games[::100]):.1f} µs a game")
    del index
    server_places(games)


def server_places(games: list[tuple[str, str]], part: int = 2_000, commit: int = 1_000) -> None:
    """The server's map, filled a part of `part` games at a time as its index reads them;
    then one commit's change at the full size: `commit` games added in a new part, and a
    part removed (a merge, or a game completed: the map drops its part's rows)."""
    ids = [game for game, _ in games]

    def as_places() -> GamePlaces:
        places = GamePlaces()
        for number, start in enumerate(range(0, len(ids), part)):
            places = places.changed([], [(game, (number, 0, 3)) for game in ids[start:start + part]])
        return places

    def as_dicts() -> tuple[dict[str, int], dict[int, tuple[str, ...]]]:  # what the server kept before
        places = {game: (n // part) << 40 | 3 for n, game in enumerate(ids)}
        return places, {n: tuple(ids[s:s + part]) for n, s in enumerate(range(0, len(ids), part))}

    size, seconds = held(as_places)
    old_size, _ = held(as_dicts)
    strings = sum(sys.getsizeof(g) for g in ids)
    print(f"server's game places: {len(ids):,} games")
    print(f"  map: {size / len(ids):.0f} bytes a game (up to {GamePlaces.FOLD_AT:,} games read "
          f"lately held as read), read {1e6 * seconds / len(ids):.1f} µs a game")
    print(f"  dictionaries (before): {(old_size + strings) / len(ids):.0f} bytes a game (the ids included)")
    places = as_places()
    new: list[tuple[str, Place]] = [(f"late-{n:08d}", (10**6, 0, 0)) for n in range(commit)]

    def timed(change: Any) -> float:
        clock = time.process_time()
        for _ in range(5):
            change()
        return 1000 * (time.process_time() - clock) / 5

    print(f"  a commit of {commit:,} games: {timed(lambda: places.changed([], new)):.1f} ms; "
          f"with a part removed: {timed(lambda: places.changed([3], new)):.1f} ms")
    old_places, old_games = as_dicts()
    print(f"  (before: the dictionaries copied, {timed(lambda: (dict(old_places), dict(old_games))):.1f} ms)")
    clock = time.process_time()
    for game in ids[::100]:
        places.get(game)
    print(f"  look-up: {1e6 * (time.process_time() - clock) / len(ids[::100]):.1f} µs a game")


if __name__ == "__main__":
    main()
