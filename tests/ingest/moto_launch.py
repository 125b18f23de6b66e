"""`moto_server`, with one change: moto's list of its own service modules read once.

moto 5.2 looks for the service a request is for by listing its package folder, and
`stat`ing each of its ~180 entries, on every request (`moto.backends.list_of_moto_modules`,
from `DomainDispatcherApplication.get_backend_for_host`, twice a request). Profiled
under the S3 tests' load, that scan was about a quarter of the emulator's time, and the
emulator most of an S3 test's. The folder does not change while the server runs, so the
list is read at start-up and kept; everything else is moto's own server as its
`moto_server` script runs it (`python -m tests.ingest.moto_launch -H HOST -p PORT`).
"""

from __future__ import annotations

import sys

import moto.backends
from moto.server import main

_MODULES = tuple(moto.backends.list_of_moto_modules())


def _modules() -> tuple[str, ...]:
    return _MODULES


if __name__ == "__main__":
    moto.backends.list_of_moto_modules = _modules  # type: ignore[assignment]
    main(sys.argv[1:])
