"""POST /v1/validate over HTTP: byte for byte what `haftkhabis validate --json -` writes for
the same bytes, gzip'd or not; a malformed line is a verdict; size caps and broken bodies
are clear 4xx, never a 5xx."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.service.conftest import REPO, Keys, Server

SAMPLE = REPO / "data" / "sample"


def cli_validate(data: bytes) -> bytes:
    """`haftkhabis validate --json -` with `data` on standard input."""
    result = subprocess.run([sys.executable, "-m", "cli.app", "validate", "--json", "-"], cwd=REPO,
                            input=data, capture_output=True, timeout=300, check=False)
    assert result.returncode in (0, 1), result.stderr.decode()
    return result.stdout


@pytest.mark.parametrize("name", ["bazito.jsonl", "persian-points.jsonl.gz"])
def test_verdicts_are_validate_json_byte_for_byte(api: Server, api_keys: Keys, name: str) -> None:
    data = (SAMPLE / name).read_bytes()
    with api.client(api_keys["ingest"]) as client:
        response = client.post("/v1/validate", content=data,
                               headers={"Content-Type": "application/x-ndjson"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-ndjson"
    expected = cli_validate(data)
    assert response.content == expected
    lines = [orjson.loads(line) for line in expected.splitlines()]
    games = [line for line in lines if line["kind"] == "game"]
    assert int(response.headers["haftkhabis-games"]) == len(games)
    assert int(response.headers["haftkhabis-line-errors"]) == len(lines) - len(games)
    assert int(response.headers["haftkhabis-lines"]) > 0
    assert response.headers["haftkhabis-compliant"] == "false"  # the sample has planted faults


def test_gzip_transport_encoding(api: Server, api_keys: Keys, sample_log: Path) -> None:
    data = sample_log.read_bytes()
    with api.client(api_keys["support"]) as client:
        response = client.post("/v1/validate", content=gzip.compress(data),
                               headers={"Content-Encoding": "gzip"})
    assert response.status_code == 200, response.text
    assert response.content == cli_validate(data)


def test_a_malformed_line_is_a_verdict_not_an_error(api: Server, api_keys: Keys) -> None:
    body = b'not json at all\n{"game": "t1", "seq": 0, "type": "game"\n\xff\xfe\n{"seq": 1}\n'
    with api.client(api_keys["auditor"]) as client:
        response = client.post("/v1/validate", content=body)
    assert response.status_code == 200, response.text
    assert response.content == cli_validate(body)
    records = [orjson.loads(line) for line in response.content.splitlines()]
    assert {r["code"] for r in records if r["kind"] == "error"} >= {"malformed_json"}
    assert response.headers["haftkhabis-compliant"] == "false"


def test_an_empty_body_is_refused(api: Server, api_keys: Keys) -> None:
    """The document says a body is required: none (or a gzip stream of nothing) is a 400
    that says what was expected, at both log endpoints, and pushes no batch."""
    with api.client(api_keys["everyone"]) as client:
        for path in ("/v1/validate", "/v1/ingest"):
            for body, headers in ((b"", {}), (gzip.compress(b""), {"Content-Encoding": "gzip"})):
                response = client.post(path, content=body, headers=headers)
                assert response.status_code == 400, (path, response.text)
                problem = response.json()
                assert problem["error"] == "bad_body" and "the body is empty" in problem["message"]
        assert client.get("/v1/health").json()["ingest"]["waiting"] == 0


def test_a_body_past_the_cap_is_413(tight: Server, api_keys: Keys) -> None:
    line = b'{"game":"big","seq":0,"type":"game","format":"haftkhabis/1","ruleset":"bazito","players":["a","b"]}\n'
    big = line * (2 * 1024 * 1024 // len(line))
    with tight.client(api_keys["ingest"]) as client:
        plain = client.post("/v1/validate", content=big)
        bomb = client.post("/v1/validate", content=gzip.compress(big * 4),
                           headers={"Content-Encoding": "gzip"})
        raw_gz = client.post("/v1/validate", content=gzip.compress(big))  # a .gz file as it is
        small = client.post("/v1/validate", content=gzip.compress(line * 10))
    for response in (plain, bomb, raw_gz):
        assert response.status_code == 413, response.text
        problem = response.json()
        assert problem["error"] == "too_large" and "1,048,576 bytes" in problem["message"]
    assert small.status_code == 200
    assert small.content == cli_validate(line * 10)


def test_a_broken_gzip_body_is_400(api: Server, api_keys: Keys, sample_log: Path) -> None:
    packed = gzip.compress(sample_log.read_bytes())
    with api.client(api_keys["ingest"]) as client:
        cut = client.post("/v1/validate", content=packed[: len(packed) // 2],
                          headers={"Content-Encoding": "gzip"})
        garbage = client.post("/v1/validate", content=b"\x1f\x8b" + b"x" * 100)
        unknown = client.post("/v1/validate", content=b"{}", headers={"Content-Encoding": "br"})
    for response in (cut, garbage, unknown):
        assert response.status_code == 400, response.text
        assert response.json()["error"] == "bad_body"
        assert "Traceback" not in response.text
