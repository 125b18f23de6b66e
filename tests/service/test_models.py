"""The API's verdict types hold every line `validate --json` writes: each sample log's
verdicts and line errors parse as `VerdictLine` / `LineError` and dump back to the same
JSON, so the document `POST /v1/validate` publishes describes what it sends."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from pydantic import TypeAdapter

from engine import _core
from service.models import LineError, VerdictLine

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
LINE = TypeAdapter(VerdictLine | LineError)


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLE.iterdir() if not p.name.endswith(".json")))
def test_every_validate_line_round_trips(name: str) -> None:
    lines = _core.validate_json([str(SAMPLE / name)]).splitlines()
    assert lines
    for line in lines:
        parsed = LINE.validate_json(line)
        assert orjson.loads(LINE.dump_json(parsed)) == orjson.loads(line)
