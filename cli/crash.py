"""What `haftkhabis` does when it hits a bug: an exit status of its own, never 0, 1 or 2
(a verdict or "could not run"), one line that says so, and the traceback in a file."""

from __future__ import annotations

import os
import sys
import tempfile
import traceback

#: the exit status of an internal error (docs/cli.md; sysexits.h EX_SOFTWARE)
CRASH_EXIT = 70


def report(exc: BaseException) -> int:
    """Write `exc`'s traceback to a new file under the system temp dir, print one line
    naming it on standard error, and return `CRASH_EXIT`."""
    from cli.terminal import printable

    details = "".join(traceback.format_exception(exc))
    try:
        from importlib.metadata import version

        build = version("haftkhabis")
    except Exception:  # not installed: run from a checkout
        build = "?"
    what = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    summary = printable(f"{type(exc).__name__}: {what}" if what else type(exc).__name__)
    try:
        handle, path = tempfile.mkstemp(prefix="haftkhabis-crash-", suffix=".txt")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(f"haftkhabis {build}, Python {sys.version.split()[0]}\n"
                      f"command: {sys.argv!r}\n\n{details}")
        where, shown_details = f"the traceback is in {path}", ""
    except OSError:  # no writable temp dir: the traceback goes to standard error instead
        where, shown_details = "the traceback follows", details
    sys.stdout.flush()
    sys.stderr.write(f"haftkhabis: internal error, a bug and not a verdict ({summary}); "
                     f"{printable(where)}. Please report it.\n")
    for line in shown_details.splitlines():
        sys.stderr.write(printable(line) + "\n")
    sys.stderr.flush()
    return CRASH_EXIT
