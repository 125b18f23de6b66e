"""The compiled engine works in threads that were running before it was loaded.

A Streamlit page runs in a script thread started before the page imports the engine; an
allocator whose thread-local set-up assumes otherwise crashes there (mimalloc did: a
segfault in its heap lookup). The engine's allocator (jemalloc, built without
initial-exec TLS) must not. A fresh interpreter is needed to control the import order.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import sys, threading
    sys.path.insert(0, sys.argv[1])
    started = threading.Barrier(5)
    loaded = threading.Event()
    results = []

    def work(n):
        started.wait()
        loaded.wait()
        from engine import _core
        from engine.simulate import SimConfig, simulate
        for game in simulate(SimConfig("pis-yedili", games=3, seed=n)):
            validator = _core.Validator()
            for number, line in enumerate(game.lines, 1):
                validator.feed_line(line, "t.jsonl", number)
            results.extend(v.status for v in validator.finish())

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    started.wait()  # every thread runs before the engine is loaded
    from engine import _core  # noqa: F401
    loaded.set()
    for thread in threads:
        thread.join()
    print(len(results), sorted(set(results)))
""")


def test_threads_started_before_the_engine_was_loaded_use_it() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    count, statuses = done.stdout.split(" ", 1)
    assert int(count) == 12
    assert "compliant" in statuses
