"""A child process that dies with the process that started it.

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


def die_with_parent() -> None:
    """Make this process die (SIGKILL) when its parent does; exit now if it already has."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None and os.getppid() != parent.pid:
        os._exit(1)  # the parent died before the signal was asked for
