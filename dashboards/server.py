"""How the dashboard is served: Streamlit's own server, with its websocket origin check
replaced by one that accepts only the server's own origin.

Streamlit accepts a websocket from any page whose origin is `localhost`, `127.0.0.1` or
`0.0.0.0` on any port (and looks the machine's external address up on the internet for
others), so any local web page could drive the dashboard; no configuration option narrows
that. `haftkhabis dashboard` therefore runs `python -m dashboards.server run APP …`, which
installs `origin_allowed` in Streamlit's place and then hands over to Streamlit's CLI.
`python -m dashboards.server launch --warehouse W --port P --host H [--storage-option K=V]
[--state DIR]`
(what `haftkhabis dashboard` execs) builds that command line, every safety flag spelled
out (`streamlit_command`), and becomes it.

The own origin is `http://NAME:PORT` for the port served and a NAME the server answers to:
the bound address, and `localhost`/`127.0.0.1`/`::1` when it is a loopback address (the
machine's host names when it is a wildcard such as `0.0.0.0`). The request's `Host` header
must name the same (a DNS-rebinding page has its own name in it), and an upgrade without
an `Origin` header is refused too: browsers always send one.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

from dashboards.settings import SERVER_FLAGS, WAREHOUSE_ENV

APP_DIR = Path(__file__).resolve().parent
APP = APP_DIR / "app.py"

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARDS = ("0.0.0.0", "::", "")  # the names of "every address"


def _is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def own_hostnames(address: str, server_address: str | None = None) -> frozenset[str]:
    """The host names the dashboard's own pages are opened by, for a server bound to
    `address` (and told its public name by `browser.serverAddress`, if set)."""
    names = {address.lower().strip("[]")}
    if _is_loopback(address):
        names.update(LOOPBACK_NAMES)
    elif address in WILDCARDS:
        names.update(LOOPBACK_NAMES)
        names.update(n.lower() for n in (socket.gethostname(), socket.getfqdn()) if n)
    if server_address:
        host = urlsplit(server_address if "//" in server_address else f"//{server_address}")
        if host.hostname:
            names.add(host.hostname.lower())
    names.discard("")
    return frozenset(names)


def _host_and_port(netloc: str) -> tuple[str, int | None] | None:
    try:
        parts = urlsplit(f"//{netloc}")
        port = parts.port
    except ValueError:
        return None
    if parts.hostname is None or parts.username is not None or parts.password is not None:
        return None
    return parts.hostname.lower().rstrip("."), port


def origin_allowed(origin: str | None, host: str | None, names: Iterable[str], port: int) -> bool:
    """Whether a websocket upgrade with these `Origin` and `Host` headers comes from the
    dashboard's own page: `http://NAME:PORT` for a NAME in `names`, in both headers."""
    if origin is None or host is None:
        return False
    allowed = {n.lower() for n in names}
    try:
        parsed = urlsplit(origin)
    except ValueError:
        return False
    if parsed.scheme != "http" or parsed.path not in ("", "/") or parsed.query:
        return False
    seen = _host_and_port(parsed.netloc)
    requested = _host_and_port(host)
    if seen is None or requested is None:
        return False
    return seen[0] in allowed and seen[1] == port and requested[0] in allowed and requested[1] == port


def install() -> None:
    """Put `origin_allowed` in place of Streamlit's websocket origin check (it reads the
    served address and port from Streamlit's configuration on every upgrade)."""
    from streamlit import config
    from streamlit.web.server.starlette import starlette_websocket

    current: Callable[..., bool] | None = getattr(starlette_websocket, "_is_origin_allowed", None)
    if current is None:  # fail closed: never serve with Streamlit's check in place
        raise RuntimeError("this Streamlit has no websocket origin check to replace "
                           "(streamlit.web.server.starlette.starlette_websocket."
                           "_is_origin_allowed); the dashboard will not serve without it")

    def own_origin_only(origin: str | None, host: str | None) -> bool:
        server_address = (config.get_option("browser.serverAddress")
                          if config.is_manually_set("browser.serverAddress") else None)
        names = own_hostnames(str(config.get_option("server.address") or ""), server_address)
        return origin_allowed(origin, host, names, int(config.get_option("server.port")))

    starlette_websocket._is_origin_allowed = own_origin_only


def streamlit_command(warehouse: Path | str, port: int, host: str,
                      storage_options: Sequence[str] = (), state: str | None = None) -> list[str]:
    """The `streamlit run` command line, every safety flag spelled out, through this module
    (Streamlit with a websocket that accepts only its own origin); the app's own arguments
    (the warehouse, `KEY=VALUE` storage options, the API's state folder) after `--`."""
    flags = dict(SERVER_FLAGS)
    flags["server.address"] = host
    flags["server.port"] = str(port)
    command = [sys.executable, "-m", "dashboards.server", "run", str(APP)]
    command += [f"--{key}={value}" for key, value in flags.items()]
    command += ["--", "--warehouse", str(warehouse)]
    for option in storage_options:
        command += ["--storage-option", option]
    if state is not None:
        command += ["--state", state]
    return command


def launch(argv: Sequence[str]) -> NoReturn:
    """Become the dashboard's server (exec, not a child: a signal to the launcher reaches
    the server itself, so stopping it never leaves an orphan serving the port). The app's
    folder is the working directory: Streamlit reads .streamlit/config.toml there."""
    parser = argparse.ArgumentParser(prog="python -m dashboards.server launch")
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--storage-option", action="append", default=[])
    parser.add_argument("--state")
    args = parser.parse_args(argv)
    command = streamlit_command(args.warehouse, args.port, args.host, args.storage_option, args.state)
    env = dict(os.environ)
    env[WAREHOUSE_ENV] = args.warehouse
    env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(APP_DIR)
    os.execve(command[0], command, env)


#: what the pages import, paid by the first page of the first session unless imported
#: before it (about 0.7 s here: polars, pyarrow, duckdb, altair and the app's modules)
WARM_IMPORTS = ("dashboards.cache", "dashboards.views", "altair", "deltalake", "pyarrow.dataset")
WARM_THREAD = "haftkhabis-warm"


#: how long the warming waits for Streamlit's runtime before it asks the landing page's
#: questions (Streamlit makes it within a second or two of starting)
RUNTIME_WAIT = 60.0


def _warm() -> None:
    """Import what the pages will, open the warehouse's shared reader, and ask the landing
    page's questions for every game (`cache.overview`: on a million hands about 0.2 s of
    the first visitor's wait), while the server starts and waits for a browser (a page
    that comes meanwhile waits for the import lock or the caches, never does any of it
    twice)."""
    import importlib
    import logging
    import threading
    import time

    # Streamlit warns of a thread without a session's context; this one needs none
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(
        lambda record: record.threadName != WARM_THREAD)
    try:
        for name in WARM_IMPORTS:
            importlib.import_module(name)
        from streamlit import runtime

        from dashboards import cache
        from ingest import read

        cache.reader()
        # the answers go to the runtime's cache storage: asked before Streamlit made it,
        # they would go to a stand-in storage it warns of, kept for good
        waiting = threading.Event()
        deadline = time.monotonic() + RUNTIME_WAIT
        while not runtime.exists() and time.monotonic() < deadline:
            waiting.wait(0.05)
        if runtime.exists():
            cache.query("choices")  # the filters' choices, asked before the page's questions
            cache.overview(read.GameFilter())
    except Exception:  # the page says what is wrong (no warehouse there yet, say)
        return


def main() -> None:
    """`launch …` (above), or `streamlit …` with the origin check installed (the arguments
    are Streamlit's) and the pages' modules imported meanwhile (`_warm`)."""
    if sys.argv[1:2] == ["launch"]:
        launch(sys.argv[2:])
    install()
    if sys.argv[1:2] == ["run"]:
        import threading

        threading.Thread(target=_warm, name=WARM_THREAD, daemon=True).start()
    from streamlit.web.cli import main as streamlit_main

    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main()
