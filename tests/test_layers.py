"""Each layer in its room (docs/architecture.md, "The Python tiers"): every import in the
shipped packages, read from the source (in functions and `TYPE_CHECKING` blocks too),
against which package may import which."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the first-party packages each package may import (models go down: engine, then ingest;
#: dashboards, service and cli are faces over them). The CLI may import the service: it is
#: how the service is started (`haftkhabis serve`) and its keys made (`haftkhabis api-key`).
MAY_IMPORT: dict[str, set[str]] = {
    "engine": {"engine"},
    "ingest": {"engine", "ingest"},
    "dashboards": {"engine", "ingest", "dashboards"},
    "service": {"engine", "ingest", "service"},
    "cli": {"engine", "ingest", "service", "cli"},
}
#: third-party packages a layer may not use
NEVER: dict[str, set[str]] = {
    "engine": {"duckdb", "streamlit", "polars", "fastapi", "deltalake", "dask"},
    "ingest": {"streamlit", "fastapi"},
    "service": {"streamlit"},
    "cli": {"streamlit"},
}


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level module) of every import in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def sources(package: str) -> list[Path]:
    return [p for p in sorted((ROOT / package).rglob("*.py")) if "core" not in p.relative_to(ROOT).parts]


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    first_party = set(MAY_IMPORT)
    wrong = []
    for path in sources(package):
        for line, module in imports(path):
            if module in first_party and module not in MAY_IMPORT[package]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
            if module in NEVER.get(package, set()):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_an_import_in_a_function(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from dashboards import cache\n    import duckdb.experimental\n")
    assert imports(path) == [(2, "dashboards"), (3, "duckdb")]
