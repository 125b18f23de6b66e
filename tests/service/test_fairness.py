"""Issue #34, "Bounded by design", in the service: no client can hold the validators or the
connections. Each test waits on a state (a socket closed, `100 Continue` received: the
server is reading that body), never on a timing; timeouts are guards only.

3. "Slow bodies starve `/v1/validate`: two chunked uploads sending one line every 2 s hold
   both validate workers; a one-line validate from anyone else then waits 18 s."
5. "Half-open connections are never timed out (300 connections with partial headers still
   held after 22 s)."
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import pytest

from tests.service.conftest import Keys, Server
from tests.service.test_validate import cli_validate

GUARD = 60.0  # seconds: a hung server fails the test, it never measures it
HEADER = (b'{"game":"fair","seq":0,"type":"game","format":"haftkhabis/1","ruleset":"bazito",'
          b'"players":["a","b","c","d"]}\n')


@pytest.fixture(scope="module")
def bounded(serve: Callable[..., Server], tmp_path_factory: pytest.TempPathFactory) -> Server:
    """A server with short deadlines: headers within 1 s, bodies at 1,000 bytes a second
    after 1 s, two validations in flight per key."""
    return serve(tmp_path_factory.mktemp("fair") / "wh", "--header-timeout", "1",
                 "--body-min-rate", "1000", "--body-grace", "1", "--max-validations-per-key", "2")


def address(server: Server) -> tuple[str, int]:
    parts = urlsplit(server.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


class Upload:
    """A chunked POST whose body the test sends piece by piece over a raw socket."""

    def __init__(self, server: Server, key: str, path: str = "/v1/validate") -> None:
        self.sock = socket.create_connection(address(server), timeout=GUARD)
        self.sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {key}\r\n"
            "Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n"
            "Expect: 100-continue\r\n\r\n".encode())
        self.received = b""

    def head(self) -> bytes:
        """The next response head (status line and headers)."""
        while b"\r\n\r\n" not in self.received:
            data = self.sock.recv(65536)
            if not data:
                raise AssertionError(f"the server closed the connection: {self.received!r}")
            self.received += data
        head, self.received = self.received.split(b"\r\n\r\n", 1)
        return head

    def reading(self) -> None:
        """Wait until the server reads the body (it answers `100 Continue` then): the
        request holds its key's slot from here on."""
        head = self.head()
        assert head.startswith(b"HTTP/1.1 100"), head

    def send(self, data: bytes) -> None:
        self.sock.sendall(b"%x\r\n%s\r\n" % (len(data), data))

    def response(self) -> tuple[int, dict[str, object]]:
        """The response's status and its JSON body (a problem)."""
        head = self.head()
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")[1:]
                      if line.lower().startswith(b"content-length:"))
        while len(self.received) < length:
            data = self.sock.recv(65536)
            if not data:
                break
            self.received += data
        return int(head.split(b" ", 2)[1]), orjson.loads(self.received[:length])

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def uploads() -> Iterator[list[Upload]]:
    opened: list[Upload] = []
    yield opened
    for upload in opened:
        upload.close()


def one_line_validate(server: Server, key: str) -> None:
    with server.client(key) as client:
        response = client.post("/v1/validate", content=HEADER)
    assert response.status_code == 200, response.text
    assert orjson.loads(response.content.splitlines()[0])["game"] == "fair"


def test_slow_bodies_hold_no_validator(bounded: Server, api_keys: Keys,
                                       uploads: list[Upload]) -> None:
    """Eight bodies trickling in (above the minimum rate, so never cut) from four keys:
    a one-line validate from a fifth is answered while every one of them is in flight (on
    main it waited for two of them to end)."""
    for name in ("ingest", "support", "analyst", "auditor"):
        for _ in range(2):
            uploads.append(Upload(bounded, api_keys[name]))
    for upload in uploads:
        upload.reading()
    stop = threading.Event()

    def trickle() -> None:
        line = HEADER.rstrip(b"\n") + b" " * 400 + b"\n"
        while not stop.wait(0.1):  # pacing of the slow clients, not a measurement
            for upload in uploads:
                upload.send(line)

    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    try:
        one_line_validate(bounded, api_keys["everyone"])
        # a third validation of a key that has two in flight is refused, not queued
        with bounded.client(api_keys["ingest"]) as client:
            third = client.post("/v1/validate", content=HEADER)
        assert third.status_code == 429, third.text
        assert third.json()["error"] == "too_many_at_once"
        assert "2 validations in flight" in third.json()["message"]
    finally:
        stop.set()
        sender.join(GUARD)


@pytest.mark.parametrize("path", ["/v1/validate", "/v1/ingest"])
def test_a_body_slower_than_the_minimum_rate_is_cut(bounded: Server, api_keys: Keys,
                                                    uploads: list[Upload], path: str) -> None:
    upload = Upload(bounded, api_keys["everyone"], path)
    uploads.append(upload)
    upload.reading()
    upload.send(HEADER)  # then nothing: the rate falls behind after the grace
    status, problem = upload.response()
    assert status == 408
    assert problem["error"] == "too_slow"
    assert "bytes a second" in str(problem["message"])


def test_half_open_connections_are_closed(bounded: Server, api_keys: Keys) -> None:
    """300 connections with partial headers, and 20 that send nothing: every one is
    closed by the server (it held them all on main)."""
    sockets = []
    for n in range(320):
        sock = socket.create_connection(address(bounded), timeout=GUARD)
        if n < 300:
            sock.sendall(b"POST /v1/validate HTTP/1.1\r\nHost: test\r\nX-Pad: ")
        sock.setblocking(False)
        sockets.append(sock)
    selector = selectors.DefaultSelector()
    for sock in sockets:
        selector.register(sock, selectors.EVENT_READ)
    open_ = set(sockets)
    try:
        while open_:
            ready = selector.select(GUARD)
            assert ready, f"{len(open_)} connections still open after {GUARD:.0f}s of silence"
            for key, _ in ready:
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(4096)
                except ConnectionResetError:
                    data = b""
                if not data:
                    selector.unregister(sock)
                    open_.discard(sock)
    finally:
        selector.close()
        for sock in sockets:
            sock.close()
    one_line_validate(bounded, api_keys["everyone"])  # the server serves on


def test_an_over_long_line_in_a_body_is_a_located_error(bounded: Server, api_keys: Keys) -> None:
    """The line cap holds for the API's validate too (default 1 MiB): the line is an error
    record at its line number, the lines after it are judged."""
    body = HEADER + b'{"game":"fair","x_pad":"' + b"x" * (2 << 20) + b'"}\n' + HEADER
    with bounded.client(api_keys["support"]) as client:
        response = client.post("/v1/validate", content=body)
    assert response.status_code == 200, response.text
    records = [orjson.loads(line) for line in response.content.splitlines()]
    assert [(r["line"], r["code"]) for r in records if r["kind"] == "error"] == [
        (2, "line_too_long")]
    assert [r["game"] for r in records if r["kind"] == "game"] == ["fair"]


def test_answers_show_no_server_path(bounded: Server, api_keys: Keys) -> None:
    """The server over a folder with no warehouse yet: its 503 names the warehouse, not its
    path on the server."""
    with bounded.client(api_keys["support"]) as client:
        response = client.get("/v1/games/nope")
    assert response.status_code == 503, response.text
    assert str(bounded.warehouse) not in response.text
    assert str(Path.home()) not in response.text
    assert "<warehouse>" in response.json()["message"]


def bulk_workers(server: Server) -> set[int]:
    """The server's bulk validation processes: spawned by multiprocessing (as the ingest
    writer is), each the leader of a session of its own and scheduled `SCHED_IDLE` (which
    the writer is not)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        fields = stat.rsplit(")", 1)[1].split()  # after the command's name, which may hold spaces
        # fields from the state on (proc(5) numbers them from 3): ppid 4, session 6, policy 41
        if int(fields[1]) == server.process.pid and b"multiprocessing.spawn" in command \
                and int(fields[3]) == int(entry.name) and int(fields[38]) == os.SCHED_IDLE:
            found.add(int(entry.name))
    return found


def running(pid: int) -> bool:
    """The process is alive (not gone, not a zombie waiting to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def spool_files(server: Server) -> list[Path]:
    """The files in the server's validation spool folders (`haftkhabis-validate-<pid>-…`)."""
    return [file for folder in Path(tempfile.gettempdir()).glob(
        f"haftkhabis-validate-{server.process.pid}-*") for file in folder.iterdir()]


def large_body() -> bytes:
    """A body past the quick lane's 1 MiB: 12,000 games of a header each."""
    return b"".join(HEADER.replace(b'"fair"', b'"big-%05d"' % n) for n in range(12_000))


@pytest.fixture(scope="module")
def lanes(serve: Callable[..., Server], tmp_path_factory: pytest.TempPathFactory) -> Server:
    return serve(tmp_path_factory.mktemp("lanes") / "wh")


def test_a_large_body_is_judged_in_a_lower_priority_process(lanes: Server, api_keys: Keys) -> None:
    """A body past 1 MiB is judged by a worker process in a session of its own, scheduled
    `SCHED_IDLE` (the server's threads preempt it), not by a thread of the server that
    shares its GIL and cores with the event loop; its spooled files are gone once it is
    answered; and its verdicts are `validate --json`'s."""
    body = large_body()
    with lanes.client(api_keys["support"]) as client:
        assert client.post("/v1/validate", content=HEADER).status_code == 200
        assert bulk_workers(lanes) == set()  # a small body takes none
        response = client.post("/v1/validate", content=body)
    assert response.status_code == 200, response.text
    assert response.headers["haftkhabis-games"] == "12000"
    records = [orjson.loads(line) for line in response.content.splitlines()]
    assert {r["status"] for r in records if r["kind"] == "game"} == {"incomplete"}
    assert bulk_workers(lanes)
    assert spool_files(lanes) == []
    assert response.content == cli_validate(body)


def test_a_killed_worker_is_replaced(lanes: Server, api_keys: Keys) -> None:
    """A bulk worker that dies (killed, out of memory) takes no later body with it: the
    next large body is judged by new workers."""
    body = large_body()
    with lanes.client(api_keys["support"]) as client:
        assert client.post("/v1/validate", content=body).status_code == 200
        killed = list(bulk_workers(lanes))
        assert killed
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + GUARD
        while any(running(pid) for pid in killed):
            assert time.monotonic() < deadline, "the killed workers are still running"
            time.sleep(0.05)  # polling interval
        again = client.post("/v1/validate", content=body)
    assert again.status_code == 200, again.text
    assert again.headers["haftkhabis-games"] == "12000"
