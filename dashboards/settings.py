"""Where the dashboard finds its warehouse, and the limits it runs under.

The launcher (`haftkhabis dashboard`) passes the warehouse as `HAFTKHABIS_WAREHOUSE`;
`streamlit run dashboards/app.py -- --warehouse DIR` works too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

WAREHOUSE_ENV = "HAFTKHABIS_WAREHOUSE"
DEFAULT_WAREHOUSE = Path("data/warehouse")

#: the Check-a-log page: biggest upload Streamlit accepts (MB, also server.maxUploadSize)
MAX_UPLOAD_MB = 20
#: and the biggest a gzip upload may inflate to (bytes): no zip bombs
MAX_INFLATED_BYTES = 100 * 1024 * 1024

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
}


def warehouse_dir(argv: list[str] | None = None) -> Path:
    """The warehouse directory: `--warehouse DIR` after `--`, else the environment, else
    data/warehouse."""
    args = sys.argv[1:] if argv is None else argv
    for i, arg in enumerate(args):
        if arg == "--warehouse" and i + 1 < len(args):
            return Path(args[i + 1]).expanduser().resolve()
        if arg.startswith("--warehouse="):
            return Path(arg.split("=", 1)[1]).expanduser().resolve()
    env = os.environ.get(WAREHOUSE_ENV)
    return Path(env).expanduser().resolve() if env else DEFAULT_WAREHOUSE.resolve()
