"""`haftkhabis serve` and `haftkhabis api-key` from the command line: the help stays light
(no web framework loaded), a new key configures a server, published demo keys stay on
loopback."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from service.auth import KeyStore, digest
from tests.service.conftest import REPO

WEB = ("fastapi", "starlette", "uvicorn", "pydantic", "httpx", "duckdb", "pyarrow", "polars")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.app", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False)


def test_help_lists_serve_without_loading_the_web_stack() -> None:
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom cli.app import app\n"
            "result = CliRunner().invoke(app, ['--help'], terminal_width=200)\n"
            "print(result.output)\n"
            f"print(sorted(m for m in {WEB!r} if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    *text, loaded = result.stdout.strip().splitlines()
    assert loaded == "[]"
    assert " serve " in "\n".join(text) and " api-key " in "\n".join(text)


def test_a_new_key_and_its_entry(tmp_path: Path) -> None:
    keys = tmp_path / "keys.toml"
    made = run("api-key", "--name", "desk", "--role", "support", "--role", "auditor", "--append", str(keys))
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert key.startswith("hk_") and key not in keys.read_text()
    entry = tomllib.loads(keys.read_text())["key"][0]
    assert entry == {"name": "desk", "roles": ["auditor", "support"], "sha256": digest(key)}
    player = run("api-key", "--name", "mina's app", "--player", "mina", "--append", str(keys))
    store = KeyStore.from_file(keys)
    principal = store.lookup(player.stdout.strip())
    assert principal is not None and principal.player == "mina" and not principal.roles
    assert run("api-key", "--name", "x").returncode == 2  # a role or a player is needed
    assert run("api-key", "--name", "x", "--role", "root").returncode == 2


def test_demo_keys_are_refused_off_loopback(tmp_path: Path) -> None:
    result = run("serve", "--host", "0.0.0.0", "--keys", str(REPO / "data" / "api-keys.demo.toml"),
                 "--warehouse", str(tmp_path / "wh"))
    assert result.returncode == 2
    assert "demo keys" in result.stderr


def test_a_broken_keys_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "keys.toml"
    bad.write_text('[[key]]\nname = "x"\nroles = ["ingest"]\nsha256 = "plain-text-key"\n')
    result = run("serve", "--keys", str(bad), "--warehouse", str(tmp_path / "wh"))
    assert result.returncode == 2
    assert "SHA-256 digest" in result.stderr
