"""Schemathesis against the served OpenAPI document, with every check it has (`--checks
all`): generated requests to every operation (with a key holding every role) never get a
5xx, every response matches the status codes, content types, headers and schemas the
document declares, schema-valid requests are accepted and schema-violating ones refused.
Twice: the Hypothesis strategies per operation, and the `schemathesis run` command as an
integrator types it (its coverage phase probes the edges: empty bodies, odd cursors, `to=0`).
Bounded: a few examples per operation, so each run takes tens of seconds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from pydantic import TypeAdapter
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks

from service.models import LineError, VerdictLine
from tests.service.conftest import Keys, Server, copy_warehouse

EXAMPLES = 10  # per operation and mode: bounded, a run takes tens of seconds
load_all_checks()
ALL_CHECKS = CHECKS.get_all()
_LINE = TypeAdapter(VerdictLine | LineError)


@schemathesis.deserializer("application/x-ndjson")
def verdict_lines(ctx: Any, response: Any) -> Any:
    """`POST /v1/validate`'s answer: every line must be a `VerdictLine` or a `LineError`
    (checked here, each of them); the first is handed to schemathesis' own schema check."""
    lines = [orjson.loads(line) for line in response.content.splitlines() if line.strip()]
    if not lines:  # a body of blank lines judges nothing: no record to check
        raise NotImplementedError("an empty stream of verdict lines")
    for line in lines:
        _LINE.validate_python(line)
    return lines[0]


@pytest.fixture(scope="module")
def schema_server(serve: Any, sample_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    """Its own copy of the sample warehouse: the generated pushes are committed to it."""
    return serve(copy_warehouse(sample_warehouse, tmp_path_factory.mktemp("schema") / "wh"))


@pytest.fixture(scope="module")
def api_schema(schema_server: Server) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{schema_server.url}/v1/openapi.json")


# (Schemathesis' own pytest loader, `schemathesis.pytest.from_fixture`, does not run under
# pytest 9; each operation gets a Hypothesis test of its own here instead.)
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_operation_keeps_its_contract(api_schema: schemathesis.BaseSchema, schema_server: Server,
                                            api_keys: Keys, mode: GenerationMode) -> None:
    headers = {"Authorization": f"Bearer {api_keys['everyone']}"}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert {c.__name__ for c in ALL_CHECKS} >= {"positive_data_acceptance", "negative_data_rejection",
                                                "response_schema_conformance", "use_after_free"}
    assert len(operations) >= 17
    for operation in operations:
        if operation.label == "GET /v1/live":
            continue  # a stream that never ends by itself: tests/service/test_live_feed.py

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
                  database=None, derandomize=True)
        def check(case: schemathesis.Case) -> None:
            case.call_and_validate(base_url=schema_server.url, checks=ALL_CHECKS, headers=headers,
                                   timeout=60)

        try:
            check()
        except Unsatisfiable:
            # an operation with nothing to get wrong (no parameter, no body) has no negative case
            assert mode is GenerationMode.NEGATIVE, operation.label


def test_the_document_is_served_with_its_pages(schema_server: Server) -> None:
    with schema_server.client() as client:
        document = client.get("/v1/openapi.json").json()
        assert document["info"]["version"] and document["openapi"].startswith("3.")
        paths = set(document["paths"])
        assert {"/v1/validate", "/v1/ingest", "/v1/batches/{batch_id}", "/v1/games/{game}",
                "/v1/games/{game}/steps/{seq}", "/v1/games/{game}/hands/{hand}/report",
                "/v1/players/{player}", "/v1/leaderboard", "/v1/compliance",
                "/v1/violations", "/v1/live", "/v1/alerts"} <= paths
        live = document["paths"]["/v1/live"]["get"]["responses"]["200"]["content"]
        assert list(live) == ["text/event-stream"]
        # the verdict's violation is the engine's own type, its codes the closed list
        codes = document["components"]["schemas"]["Code"]["enum"]
        assert "must_play" in codes and "malformed_json" in codes
        assert client.get("/v1/docs").status_code == 200
        assert client.get("/v1/redoc").status_code == 200
        # the verdict lines' schemas are in the document, so its references resolve
        assert {"VerdictLine", "LineError", "HandOutcome"} <= set(document["components"]["schemas"])
        # the pages' scripts are served here, never from a CDN
        for page in ("/v1/docs", "/v1/redoc"):
            html = client.get(page).text
            assert "cdn." not in html and "/v1/docs-static/" in html
        for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"):
            assert client.get(f"/v1/docs-static/{asset}").status_code == 200


@pytest.mark.slow
def test_schemathesis_run_with_every_check_is_clean(schema_server: Server, api_keys: Keys,
                                                     tmp_path: Path) -> None:
    """`schemathesis run --checks all`, every phase (examples, coverage, fuzzing, stateful):
    no failure, and no reference it cannot resolve."""
    result = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "run", f"{schema_server.url}/v1/openapi.json",
         "--checks", "all", "--max-examples", "5", "--seed", "1", "--no-color",
         # a stream that never ends by itself: tests/service/test_live_feed.py
         "--exclude-path", "/v1/live",
         "-H", f"Authorization: Bearer {api_keys['everyone']}", "--request-timeout", "60"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900)  # its `.schemathesis/` lands there
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    assert "unresolvable reference" not in out.lower(), out[-3000:]
