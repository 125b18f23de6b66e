"""What a long-running process sets up first: a child that dies with the process that
started it (`die_with_parent`), and an allocator that gives back what it frees
(`return_freed_memory`).

A child process that dies with the process that started it:

A killed ingest must not leave workers writing behind it, nor a killed server its writer
committing behind its back. Linux sends a child a signal of its choosing when its parent
dies (`PR_SET_PDEATHSIG`), but only if the child asked before that moment: a parent killed
while the child was still starting (importing pyarrow takes a second) has already handed
it to init. So the child asks first, then checks that the parent it was started by is
still its parent, and leaves at once if not.

Light on purpose (no imports beyond the standard library): it runs before anything heavy.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal

_PR_SET_PDEATHSIG = 1
#: glibc's `mallopt` parameter for the size from which an allocation is its own mapping
_M_MMAP_THRESHOLD = -3
#: that size, glibc's own starting value
MMAP_THRESHOLD = 128 * 1024
#: glibc's `mallopt` parameter for the most malloc arenas a process makes
_M_ARENA_MAX = -8
#: arenas (glibc's default: eight a core)
ARENAS = 2


def die_with_parent() -> None:
    """Make this process die (SIGKILL) when its parent does; exit now if it already has."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None and os.getppid() != parent.pid:
        os._exit(1)  # the parent died before the signal was asked for


def return_freed_memory() -> bool:
    """Keep a process that runs for hours (the server, its writer, `ingest --follow`) from
    growing on memory it has freed: glibc's mmap threshold fixed at its starting value
    (128 KiB), so a block that large is always a mapping of its own, given back to the
    system when freed; and two malloc arenas, not eight a core. Called first, before the
    process starts threads.

    By default glibc raises the threshold each time a mapped block is freed, up to 32 MiB,
    and from then on serves such blocks (DuckDB's buffers as each commit's reader opens, a
    group's Arrow and Parquet buffers) from its heaps, where the small allocations made
    meanwhile pin them; and each new thread (DuckDB's, deltalake's, the server's own) may
    take an arena of its own, whose free memory only threads of that arena reuse. The memory
    is free but neither given back nor reused. Measured in a live server at 1,000 games a
    second for ten minutes (`bench/bench_live.py --seconds 600 --rate 1000`, glibc's
    `mallinfo2` sampled each minute): its heaps grew 72 → 155 MiB in the first three
    minutes, 102 of them free; with the threshold fixed, 63 → 108 MiB over the ten, 62
    free; with both set here, 49 → 54 MiB, 5-9 free, and the writer's free memory at
    most 7 MiB; the CPU a game the same within the runs' spread (docs/operations.md,
    "Memory given back").

    A setting the environment makes (glibc's `MALLOC_MMAP_THRESHOLD_`, `MALLOC_ARENA_MAX`:
    an operator's tuning) is left as it is. Returns whether this set both (False off
    glibc)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    done = True
    for variable, parameter, value in (("MALLOC_MMAP_THRESHOLD_", _M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                                       ("MALLOC_ARENA_MAX", _M_ARENA_MAX, ARENAS)):
        if os.environ.get(variable):
            done = False
            continue
        try:
            done = bool(libc.mallopt(parameter, value)) and done
        except AttributeError:  # not glibc
            return False
    return done
