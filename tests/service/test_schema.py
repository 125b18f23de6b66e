"""Schemathesis against the served OpenAPI document: generated requests to every operation
(with a key holding every role) never get a 5xx, and every response matches the status
codes, content types, headers and schemas the document declares. Bounded: a few examples
per operation, so the run stays within tens of seconds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.service.conftest import Keys, Server, copy_warehouse

EXAMPLES = 10  # per operation and mode: bounded, a run takes tens of seconds
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]


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
    assert len(operations) >= 12
    for operation in operations:
        if operation.label == "GET /v1/live":
            continue  # a stream that never ends by itself: tests/service/test_live_feed.py

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
                  database=None, derandomize=True)
        def check(case: schemathesis.Case) -> None:
            case.call_and_validate(base_url=schema_server.url, checks=CHECKS, headers=headers,
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
