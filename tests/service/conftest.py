"""Fixtures for the API's tests: API keys for every role, and `haftkhabis serve` run as a
real process on a free loopback port, driven over HTTP with httpx.

The servers read copies of the dashboard tests' sample warehouse (tests/dashboards/conftest.py,
built by ingest's own pipeline), or an empty folder for the ingest tests. Readiness is
polled (`/v1/health`), never waited for by a fixed sleep; each server is stopped by its PID.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from service.auth import key_entry, new_key
from tests.dashboards.conftest import DISPUTED, sample_lines, sample_log, sample_warehouse

__all__ = ["DISPUTED", "sample_lines", "sample_log", "sample_warehouse"]

REPO = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
STARTUP_TIMEOUT = 90.0  # seconds; a guard against a server that never comes up, not a measurement

#: name → (roles, player); `everyone` holds every role (the schema tests)
KEYS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "ingest": (("ingest",), None),
    "support": (("support",), None),
    "analyst": (("analyst",), None),
    "auditor": (("auditor",), None),
    "everyone": (("ingest", "support", "analyst", "auditor"), None),
    "ali": ((), "ali"),  # a player of the disputed game
    "sara": ((), "sara"),  # who did not play it
}
SLOW = "slow"  # a key allowed 1 request a second, bursts of 2


@dataclass(frozen=True)
class Keys:
    file: Path
    keys: dict[str, str]

    def __getitem__(self, name: str) -> str:
        return self.keys[name]


@pytest.fixture(scope="session")
def api_keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    folder = tmp_path_factory.mktemp("keys")
    keys = {name: new_key() for name in [*KEYS, SLOW]}
    entries = [key_entry(name, keys[name], roles, player) for name, (roles, player) in KEYS.items()]
    entries.append(key_entry(SLOW, keys[SLOW], ["support"]) + "rate = 1\nburst = 2\n")
    path = folder / "keys.toml"
    path.write_text("\n".join(entries), encoding="utf-8")
    return Keys(path, keys)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    """`haftkhabis serve` in a child process."""

    process: subprocess.Popen[bytes]
    url: str
    warehouse: Path | str  # a folder, or an s3:// URI
    log: Path

    def client(self, key: str | None = None, **kwargs: object) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=120.0, **kwargs)  # type: ignore[arg-type]

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(warehouse: Path | str, keys: Keys, logs: Path, *extra: str) -> Server:
    port = free_port()
    log = logs / f"serve-{port}.log"
    command = [sys.executable, "-m", "cli.app", "serve", "--warehouse", str(warehouse),
               "--host", HOST, "--port", str(port), "--keys", str(keys.file), "--rate", "0",
               "--log-level", "warning", *extra]
    with open(log, "wb") as sink:
        process = subprocess.Popen(command, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT)
    server = Server(process, f"http://{HOST}:{port}", warehouse, log)
    deadline = time.monotonic() + STARTUP_TIMEOUT
    with httpx.Client(base_url=server.url, timeout=5.0) as probe:
        while True:
            if process.poll() is not None:
                raise AssertionError(f"haftkhabis serve exited ({process.returncode}):\n{server.output()}")
            try:
                if probe.get("/v1/health").status_code == 200:
                    return server
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                server.stop()
                raise AssertionError(f"haftkhabis serve did not come up:\n{server.output()}")
            time.sleep(0.05)  # polling interval


@pytest.fixture(scope="session")
def serve(tmp_path_factory: pytest.TempPathFactory, api_keys: Keys,
          request: pytest.FixtureRequest) -> Callable[..., Server]:
    """Start a server over `warehouse` (stopped at the end of the session)."""
    logs = tmp_path_factory.mktemp("serve-logs")

    def start(warehouse: Path | str, *extra: str) -> Server:
        server = start_server(warehouse, api_keys, logs, *extra)
        request.addfinalizer(server.stop)
        return server

    return start


def copy_warehouse(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


@pytest.fixture(scope="session")
def sample_copy(tmp_path_factory: pytest.TempPathFactory, sample_warehouse: Path) -> Path:
    """A copy of the sample warehouse that only read-only servers use."""
    return copy_warehouse(sample_warehouse, tmp_path_factory.mktemp("read") / "wh")


@pytest.fixture(scope="session")
def api(serve: Callable[..., Server], sample_copy: Path) -> Server:
    """The read tests' server: the sample warehouse, limits as shipped."""
    return serve(sample_copy)


@pytest.fixture(scope="session")
def tight(serve: Callable[..., Server], tmp_path_factory: pytest.TempPathFactory) -> Server:
    """A server with 1 MiB body caps, over an empty folder."""
    return serve(tmp_path_factory.mktemp("tight") / "wh", "--max-validate-mb", "1",
                 "--max-ingest-mb", "1")


@pytest.fixture
def fresh(serve: Callable[..., Server], tmp_path: Path) -> Iterator[Server]:
    """A server over a new, empty warehouse folder (for pushing batches)."""
    server = serve(tmp_path / "wh")
    yield server
    server.stop()


def wait_for_batch(client: httpx.Client, receipt: str, timeout: float = 300.0) -> dict[str, object]:
    """Poll a pushed batch until it is committed or failed."""
    deadline = time.monotonic() + timeout
    while True:
        status = client.get(f"/v1/batches/{receipt}")
        assert status.status_code == 200, status.text
        body: dict[str, object] = status.json()
        if body["status"] in ("committed", "failed"):
            return body
        assert time.monotonic() < deadline, f"batch {receipt} still {body['status']}"
        time.sleep(0.05)  # polling interval
