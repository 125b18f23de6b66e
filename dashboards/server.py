"""How the dashboard is served: Streamlit's own server, with its websocket origin check
replaced by one that accepts only the server's own origin.

Streamlit accepts a websocket from any page whose origin is `localhost`, `127.0.0.1` or
`0.0.0.0` on any port (and looks the machine's external address up on the internet for
others), so any local web page could drive the dashboard; no configuration option narrows
that. `haftkhabis dashboard` therefore runs `python -m dashboards.server run APP …`, which
installs `origin_allowed` in Streamlit's place and then hands over to Streamlit's CLI.

The own origin is `http://NAME:PORT` for the port served and a NAME the server answers to:
the bound address, and `localhost`/`127.0.0.1`/`::1` when it is a loopback address (the
machine's host names when it is a wildcard such as `0.0.0.0`). The request's `Host` header
must name the same (a DNS-rebinding page has its own name in it), and an upgrade without
an `Origin` header is refused too: browsers always send one.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

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


def main() -> None:
    """`streamlit …` with the origin check installed (the arguments are Streamlit's)."""
    install()
    from streamlit.web.cli import main as streamlit_main

    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main()
