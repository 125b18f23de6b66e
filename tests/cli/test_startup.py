"""Issue 9: a quick start-up. `cli.app` (all `--help` needs) and `validate --json` load none
of the heavy libraries; the commands that use them import them when they run.

Checked in a fresh interpreter, by the modules loaded, not by a timing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BAZITO = REPO / "tests" / "engine" / "fixtures" / "fx-bazito-points.jsonl"
HEAVY = ("pyarrow", "duckdb", "polars", "deltalake", "streamlit", "pandas")
LOADED = f"sorted(m for m in {HEAVY!r} if m in sys.modules)"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False)


def test_cli_app_imports_no_heavy_library() -> None:
    result = _python(f"import cli.app, sys; print({LOADED})")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_help_lists_every_command_without_heavy_libraries() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from cli.app import app\n"
        "result = CliRunner().invoke(app, ['--help'], terminal_width=200)\n"
        "assert result.exit_code == 0, result.output\n"
        "print(result.output)\n"
        f"print({LOADED})\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    *help_lines, loaded = result.stdout.strip().splitlines()
    assert loaded == "[]"
    text = "\n".join(help_lines)
    for command in ("validate", "replay", "simulate", "ingest", "compact", "query", "stats",
                    "dashboard", "report"):
        assert f" {command} " in text, command


def test_validate_json_imports_no_heavy_library() -> None:
    code = (
        "import sys\n"
        "from cli.app import app\n"
        "try:\n"
        f"    app(['validate', {str(BAZITO)!r}, '--json'])\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code, file=sys.stderr)\n"
        f"print({LOADED}, file=sys.stderr)\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert '"compliant"' in result.stdout
    assert result.stderr.strip().splitlines()[-2:] == ["exit 0", "[]"]


def test_help_defaults_match_the_warehouse_package() -> None:
    """`cli.warehouse_cmd` spells the defaults `--help` shows so it need not load `ingest`."""
    from cli import warehouse_cmd
    from ingest.follow import FollowPolicy
    from ingest.maintenance import DEFAULT_RETAIN_HOURS
    from ingest.store import DEFAULT_WAREHOUSE

    assert warehouse_cmd.DEFAULT_WAREHOUSE == DEFAULT_WAREHOUSE
    assert warehouse_cmd.DEFAULT_RETAIN_HOURS == DEFAULT_RETAIN_HOURS
    policy = FollowPolicy()
    assert policy.interval == warehouse_cmd.DEFAULT_COMMIT_INTERVAL
    assert policy.lines == warehouse_cmd.DEFAULT_COMMIT_LINES
    assert policy.rescan == warehouse_cmd.DEFAULT_RESCAN
    assert policy.compact_every == warehouse_cmd.DEFAULT_COMPACT_EVERY
