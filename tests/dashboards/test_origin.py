"""Issue 14, item 8: the dashboard's websocket accepted any `localhost`/`127.0.0.1`/`0.0.0.0`
origin on any port, so any local web page could drive it. `haftkhabis dashboard` (on a free
port of 127.0.0.1, stopped by its PID) now upgrades only its own origin."""

from __future__ import annotations

import base64
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboards.server import origin_allowed, own_hostnames
from tests.dashboards.conftest import dashboard_server


def test_own_hostnames() -> None:
    assert own_hostnames("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert own_hostnames("localhost") == {"127.0.0.1", "localhost", "::1"}
    assert own_hostnames("192.0.2.7") == {"192.0.2.7"}
    assert "dash.example" in own_hostnames("192.0.2.7", "https://dash.example/app")


@pytest.mark.parametrize(("origin", "host", "allowed"), [
    ("http://127.0.0.1:8501", "127.0.0.1:8501", True),
    ("http://localhost:8501", "localhost:8501", True),
    ("http://localhost:9999", "127.0.0.1:8501", False),  # another local page
    ("http://127.0.0.1:3000", "127.0.0.1:8501", False),
    ("http://0.0.0.0:8501", "127.0.0.1:8501", False),
    ("http://evil.example", "127.0.0.1:8501", False),
    ("http://evil.example:8501", "evil.example:8501", False),  # DNS rebinding
    ("https://127.0.0.1:8501", "127.0.0.1:8501", False),
    ("http://user@127.0.0.1:8501", "127.0.0.1:8501", False),
    ("http://127.0.0.1:8501", "127.0.0.1:9999", False),
    ("null", "127.0.0.1:8501", False),
    (None, "127.0.0.1:8501", False),
])
def test_origin_allowed(origin: str | None, host: str, allowed: bool) -> None:
    assert origin_allowed(origin, host, own_hostnames("127.0.0.1"), 8501) is allowed


@pytest.fixture(scope="module")
def server(sample_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    log = tmp_path_factory.mktemp("origin") / "streamlit.log"
    with dashboard_server(sample_warehouse, log, "--host", "127.0.0.1") as port:
        yield port


def _upgrade(port: int, origin: str | None, host: str | None = None) -> str:
    """The status line of a websocket upgrade of /_stcore/stream with these headers."""
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        "GET /_stcore/stream HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}",
        "Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        return sock.recv(4096).split(b"\r\n", 1)[0].decode()


def test_the_server_upgrades_only_its_own_origin(server: int) -> None:
    port = server
    assert " 101 " in _upgrade(port, f"http://127.0.0.1:{port}")
    assert " 101 " in _upgrade(port, f"http://localhost:{port}", f"localhost:{port}")
    for origin, host in [
        ("http://localhost:9999", None),
        (f"http://127.0.0.1:{port + 1}", None),
        (f"http://0.0.0.0:{port}", None),
        ("http://evil.example", None),
        (f"http://evil.example:{port}", f"evil.example:{port}"),
        (None, None),
    ]:
        status = _upgrade(port, origin, host)
        assert " 101 " not in status and " 403 " in status, (origin, host, status)
