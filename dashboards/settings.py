"""Where the dashboard finds its warehouse, and the limits it runs under.

The launcher (`haftkhabis dashboard`) passes the warehouse as `HAFTKHABIS_WAREHOUSE`;
`python -m dashboards.server run dashboards/app.py -- --warehouse DIR` works too. The API
service's state folder (`--state DIR`, or `HAFTKHABIS_API_STATE`), where `haftkhabis serve`
writes its alerts' states, is where the Live page reads them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from engine._core import DEFAULT_MAX_LINE_BYTES

WAREHOUSE_ENV = "HAFTKHABIS_WAREHOUSE"
DEFAULT_WAREHOUSE = Path("data/warehouse")
API_STATE_ENV = "HAFTKHABIS_API_STATE"
#: the API service's files the dashboard reads (docs/api.md, "Running it"): its default
#: state folder beside a warehouse on this disk, and the alerts' states in it
API_STATE_DIR = "_api"
ALERTS_FILE = "alerts.json"

#: the Live page: seconds between its redraws, and the span it shows
LIVE_REFRESH_SECONDS = 5.0
LIVE_SPAN_MINUTES = 60

#: the Check-a-log page: biggest upload Streamlit accepts (MB, also server.maxUploadSize)
MAX_UPLOAD_MB = 20
#: and the biggest a gzip upload may inflate to (bytes): no zip bombs
MAX_INFLATED_BYTES = 100 * 1024 * 1024
#: the most lines an upload may hold, and the line errors listed (all are counted)
MAX_UPLOAD_LINES = 1_000_000
MAX_LISTED_ERRORS = 1_000
#: the longest line an upload's check reads (bytes, $HAFTKHABIS_MAX_LINE_BYTES, else the
#: engine's default): a longer one is a `line_too_long` line error
MAX_LINE_BYTES = int(os.environ.get("HAFTKHABIS_MAX_LINE_BYTES") or DEFAULT_MAX_LINE_BYTES)
#: each check or replay of an upload runs in a child process under a budget that grows with
#: the upload's size (bytes as uploaded): seconds = base + per MB, memory = base + per byte,
#: each capped (dashboards.upload.Budget)
UPLOAD_SECONDS_BASE = 10.0
UPLOAD_SECONDS_PER_MB = 2.0
UPLOAD_MAX_SECONDS = 60.0
UPLOAD_MEMORY_BASE = 512 * 1024 * 1024
UPLOAD_MEMORY_PER_BYTE = 16
UPLOAD_MAX_MEMORY = 2 * 1024 * 1024 * 1024
#: checks running at once, across every session
UPLOAD_WORKERS = 2

#: the server flags the launcher passes (they repeat .streamlit/config.toml, which
#: Streamlit only reads from the working directory)
SERVER_FLAGS: dict[str, str] = {
    "server.address": "127.0.0.1",
    "server.headless": "true",
    "server.enableXsrfProtection": "true",
    "server.enableCORS": "true",
    "server.maxUploadSize": str(MAX_UPLOAD_MB),
    "server.fileWatcherType": "none",
    "server.runOnSave": "false",
    "browser.gatherUsageStats": "false",
    "client.showErrorDetails": "none",
    "client.toolbarMode": "viewer",
    # no full garbage collection after every script run: with the replays and the query
    # answers cached in the process, one took 0.6–0.9 s of a 2-core machine (holding the
    # GIL, so the run's messages waited); Python's own generational collector still runs
    "runner.postScriptGC": "false",
}


def warehouse_dir(argv: list[str] | None = None) -> Path | str:
    """The warehouse directory (or `s3://` URI, kept as text): `--warehouse DIR` after
    `--`, else the environment, else data/warehouse."""
    args = sys.argv[1:] if argv is None else argv
    for i, arg in enumerate(args):
        if arg == "--warehouse" and i + 1 < len(args):
            return _place(args[i + 1])
        if arg.startswith("--warehouse="):
            return _place(arg.split("=", 1)[1])
    env = os.environ.get(WAREHOUSE_ENV)
    return _place(env) if env else DEFAULT_WAREHOUSE.resolve()


def api_state_dir(argv: list[str] | None = None) -> Path | None:
    """The API service's state folder: `--state DIR` after `--`, else the environment, else
    `WAREHOUSE/_api` for a warehouse on this disk (the service's default); None for a
    warehouse on S3 without one given."""
    args = sys.argv[1:] if argv is None else argv
    for i, arg in enumerate(args):
        if arg == "--state" and i + 1 < len(args):
            return Path(args[i + 1]).expanduser().resolve()
        if arg.startswith("--state="):
            return Path(arg.split("=", 1)[1]).expanduser().resolve()
    env = os.environ.get(API_STATE_ENV)
    if env:
        return Path(env).expanduser().resolve()
    warehouse = warehouse_dir(args)
    return warehouse / API_STATE_DIR if isinstance(warehouse, Path) else None


def storage_options(argv: list[str] | None = None) -> dict[str, str]:
    """The object-store options the launcher passed (`--storage-option KEY=VALUE` after
    `--`, repeatable), over the `AWS_*` environment (`ingest.storage.resolve_options`)."""
    from ingest.storage import parse_options

    args = sys.argv[1:] if argv is None else argv
    given = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--storage-option"]
    given += [arg.split("=", 1)[1] for arg in args if arg.startswith("--storage-option=")]
    return parse_options(given)


def _place(text: str) -> Path | str:
    return text if text.startswith("s3://") else Path(text).expanduser().resolve()
