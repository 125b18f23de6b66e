"""The services the object-storage and cluster tests need, started as processes of their own
on 127.0.0.1 (free ports), polled until they answer, and stopped by their PID.

- `MotoServer`: moto's S3 emulator (its `moto_server`, started by `tests.ingest.moto_launch`,
  which reads moto's module list once instead of on every request), which honours
  conditional writes.
- `DaskCluster`: a `dask scheduler` and `dask worker` processes (no nanny, so a worker's PID
  is the process that runs the tasks, and killing it kills a worker). Workers load
  `tests.ingest.dask_hooks`, which can hold a shard task before it reconciles its games,
  or make it fail there (files in the cluster's control folder say when), so a test can
  kill a worker or the driver mid-batch, or fail a batch after its parts are written.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def poll(ready: Callable[[], bool], what: str, timeout: float = 60.0,
         process: subprocess.Popen[bytes] | None = None) -> None:
    """Wait until `ready()` (no fixed sleeps: a short poll, a deadline)."""
    deadline = time.monotonic() + timeout
    while not ready():
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not ready after {timeout:.0f}s")
        time.sleep(0.05)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a process this module started, by its PID (SIGTERM, then SIGKILL)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            process.wait()


class MotoServer:
    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.endpoint = f"http://{HOST}:{self.port}"
        self.log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.ingest.moto_launch", "-H", HOST, "-p", str(self.port)],
            cwd=REPO, stdout=self.log, stderr=subprocess.STDOUT)
        poll(self._answers, "moto_server", process=self.process)

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1):
                return True
        except OSError:
            return False

    @property
    def options(self) -> dict[str, str]:
        """Storage options (as `--storage-option` takes them) for this emulator."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
                "AWS_ALLOW_HTTP": "true"}

    @property
    def env(self) -> dict[str, str]:
        """The same as `AWS_*` environment variables (what a subprocess reads)."""
        return dict(self.options)

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="testing",
                            aws_secret_access_key="testing", region_name="us-east-1")

    def bucket(self) -> str:
        """A new empty bucket's name."""
        name = f"wh-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket,
                                                                        Prefix=prefix)
        return [item["Key"] for page in pages for item in page.get("Contents", ())]

    def stop(self) -> None:
        stop(self.process)
        self.log.close()


class DaskCluster:
    def __init__(self, folder: Path, workers: int, env: dict[str, str]) -> None:
        self.folder = folder
        self.control = folder / "control"
        self.control.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ, **env, HAFTKHABIS_TEST_CONTROL=str(self.control),
                        PYTHONPATH=str(REPO))
        self.port = free_port()
        self.address = f"tcp://{HOST}:{self.port}"
        self.logs: list[Any] = []
        self.scheduler = self._start("scheduler", [
            "scheduler", "--host", HOST, "--port", str(self.port), "--no-dashboard",
            "--dashboard-address", f"{HOST}:0"])
        self.workers: list[subprocess.Popen[bytes]] = []
        for _ in range(workers):
            self.add_worker()
        self.wait_for_workers(workers)

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.folder / f"{name}-{len(self.logs)}.log", "wb")  # noqa: SIM115
        self.logs.append(log)
        return subprocess.Popen([str(BIN / "dask"), *args], cwd=REPO, env=self.env,
                                stdout=log, stderr=subprocess.STDOUT)

    def add_worker(self) -> subprocess.Popen[bytes]:
        worker = self._start("worker", [
            "worker", self.address, "--host", HOST, "--nthreads", "1", "--nworkers", "1",
            "--no-nanny", "--no-dashboard", "--dashboard-address", f"{HOST}:0",
            "--death-timeout", "60",
            "--preload", "tests.ingest.dask_hooks"])
        self.workers.append(worker)
        return worker

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [w for w in self.workers if w.poll() is None]

    def wait_for_workers(self, count: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(count, timeout=60)
            poll(lambda: len(client.scheduler_info()["workers"]) == count,
                 f"{count} Dask workers")

    def ensure_workers(self, count: int) -> None:
        """Start workers until `count` are alive (after a test killed one)."""
        while len(self.alive()) < count:
            self.add_worker()
        self.wait_for_workers(count)

    # -- holding shard tasks (tests.ingest.dask_hooks)

    def hold(self) -> None:
        (self.control / "hold").touch()

    def release(self) -> None:
        (self.control / "hold").unlink(missing_ok=True)

    def held(self) -> list[int]:
        """PIDs of workers holding a shard task now."""
        return [int(p.name.split("-", 1)[1]) for p in self.control.glob("held-*")]

    def held_prefix(self, pid: int) -> str:
        """The part prefix of the shard task worker `pid` holds."""
        return (self.control / f"held-{pid}").read_text(encoding="utf-8")

    def done(self) -> list[int]:
        """PIDs of workers whose held shard task has ended since `clear`."""
        return [int(p.name.split("-", 1)[1]) for p in self.control.glob("done-*")]

    def fail(self, failing: bool = True) -> None:
        """Make every shard task raise after its pass (or stop doing so)."""
        if failing:
            (self.control / "fail").touch()
        else:
            (self.control / "fail").unlink(missing_ok=True)

    def clear(self) -> None:
        for marker in [*self.control.glob("held-*"), *self.control.glob("done-*")]:
            marker.unlink(missing_ok=True)
        self.fail(False)

    def stop(self) -> None:
        for worker in self.workers:
            stop(worker)
        stop(self.scheduler)
        for log in self.logs:
            log.close()
