"""No answer to a key shows a path of the server's file system (issue #34: "a DuckDB error
shows the server home directory's extension folder (`~/.duckdb/extensions/…`)")."""

from __future__ import annotations

import tempfile
from pathlib import Path

from service.public import private_roots, public


def test_duckdb_extension_folders_and_server_folders_are_named_not_shown(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    roots = private_roots(warehouse, tmp_path / "state")
    home = str(Path.home())
    message = (f'IO Error: Extension "{home}/.duckdb/extensions/v1.1.3/linux_amd64/delta.duckdb_extension" '
               f"not found; no warehouse at {warehouse} (state {tmp_path}/state, spool "
               f"{tempfile.gettempdir()}/x) ~/.duckdb/extensions/v1/y")
    shown = public(message, roots)
    assert home not in shown and str(tmp_path) not in shown and tempfile.gettempdir() not in shown
    assert ".duckdb/extensions" not in shown
    assert shown.count("<duckdb extensions>") == 2
    assert "no warehouse at <warehouse>" in shown and "(state <state>" in shown
    assert public("seq 3 missing", roots) == "seq 3 missing"


def test_an_s3_warehouse_is_not_a_local_root() -> None:
    roots = private_roots("s3://bucket/prefix", None)
    assert all(not root.startswith("s3://") for root, _ in roots)
