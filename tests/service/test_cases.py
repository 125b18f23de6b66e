"""The support desk over HTTP: cases opened on a game's line, searched, decided; who may do
what; pushed logs committed while cases are written (neither lost); the evidence bundle
checked by `haftkhabis verify-bundle`, and a tampered one refused."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.dashboards.loggen import dump, random_game
from tests.service.conftest import DISPUTED, REPO, Keys, Server, copy_warehouse, wait_for_batch


@pytest.fixture(scope="module")
def desk(serve: Callable[..., Server], sample_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    """A server over its own copy of the sample warehouse: cases are written to it."""
    return serve(copy_warehouse(sample_warehouse, tmp_path_factory.mktemp("desk") / "wh"))


def _open(server: Server, key: str, **body: Any) -> Any:
    with server.client(key) as client:
        return client.post("/v1/cases", json=body)


def test_a_case_from_a_complaint_to_a_decision(desk: Server, api_keys: Keys) -> None:
    """A complaint names a game: the case opens on its first violation, for the player it
    flags; it is found by game, tag and words; a decision is recorded with who took it."""
    opened = _open(desk, api_keys["support"], game=DISPUTED, tags=["App", "refund"],
                   note="bita says the app let her play it")
    assert opened.status_code == 201, opened.text
    case = opened.json()
    with desk.client(api_keys["support"]) as client:
        game = client.get(f"/v1/games/{DISPUTED}").json()
        first = min(game["violations"], key=lambda v: v["seq"])
        assert (case["seq"], case["hand"], case["player"]) == (first["seq"], first["hand"], first["player"])
        assert case["status"] == "open" and case["tags"] == ["app", "refund"] and case["revision"] == 1
        assert case["opened_by"] == "support" and case["notes"][0]["text"] == "bita says the app let her play it"
        assert case["links"]["dashboard"].endswith(
            f"/replay?game={DISPUTED}&seq={first['seq']}&view=player&player={first['player']}")
        assert client.get(case["links"]["report"]).status_code == 200
        for query in ({"game": DISPUTED}, {"tag": "REFUND"}, {"q": "LET HER"}, {"status": "open"},
                      {"player": first["player"]}):
            found = client.get("/v1/cases", params=query).json()["items"]
            assert case["case"] in [c["case"] for c in found], query
        for query in ({"game": "t41-bazito-1"}, {"tag": "nope"}, {"q": "no such words"}):
            assert case["case"] not in [c["case"] for c in client.get("/v1/cases", params=query).json()["items"]]
        decided = client.patch(f"/v1/cases/{case['case']}", json={"decision": "upheld: the play was illegal",
                                                                   "note": "log checked"})
        assert decided.status_code == 200, decided.text
        body = decided.json()
        assert (body["status"], body["decided_by"], body["revision"]) == ("decided", "support", 2)
        whole = client.get(f"/v1/cases/{case['case']}").json()
        assert [r["decision"] for r in whole["history"]] == [None, "upheld: the play was illegal"]
        assert [n["text"] for n in whole["notes"]] == ["bita says the app let her play it", "log checked"]
        assert case["case"] in [c["case"] for c in client.get("/v1/cases", params={"status": "decided"}).json()["items"]]


def test_who_may_touch_a_case(desk: Server, api_keys: Keys) -> None:
    case = _open(desk, api_keys["support"], game=DISPUTED, note="internal: suspect collusion").json()["case"]
    paths = [("get", "/v1/cases"), ("get", f"/v1/cases/{case}"), ("get", f"/v1/cases/{case}/bundle")]
    with desk.client(api_keys["auditor"]) as auditor:  # reads, never writes
        for method, path in paths:
            assert auditor.request(method, path).status_code == 200, path
        assert auditor.post("/v1/cases", json={"game": DISPUTED}).status_code == 403
        assert auditor.patch(f"/v1/cases/{case}", json={"decision": "x"}).status_code == 403
    for key in ("analyst", "ingest", "ali", "sara"):  # ali played the game: a player token still gets nothing
        with desk.client(api_keys[key]) as client:
            for method, path in [*paths, ("post", "/v1/cases"), ("patch", f"/v1/cases/{case}")]:
                response = client.request(method, path, json={"game": DISPUTED, "decision": "x"}
                                          if method in ("post", "patch") else None)
                assert response.status_code == 403, (key, path)
                assert "suspect collusion" not in response.text
    with desk.client() as anonymous:
        assert anonymous.get(f"/v1/cases/{case}").status_code == 401


def test_what_a_case_refuses(desk: Server, api_keys: Keys) -> None:
    with desk.client(api_keys["support"]) as client:
        for body, status, words in (
            ({"game": "no-such-game"}, 404, "no game 'no-such-game'"),
            ({"game": DISPUTED, "seq": 99999}, 404, "has no line with seq 99999"),
            ({"game": DISPUTED, "player": "sara"}, 404, "'sara' did not play"),
            ({"game": DISPUTED, "tags": ["two words"]}, 422, "tags.0: String should match pattern"),
            ({"game": DISPUTED, "seq": 1, "hand": 2}, 422, "or `hand`, not both"),
        ):
            response = client.post("/v1/cases", json=body)
            assert response.status_code == status and words in response.json()["message"], (body, response.text)
        assert client.get("/v1/cases/case-000000000000").status_code == 404
        malformed = client.get("/v1/cases/not-a-case")  # a path that names nothing (decisions.md)
        assert malformed.status_code == 404 and malformed.json()["error"] == "not_found"
        assert "case" in malformed.json()["message"]
        assert client.patch("/v1/cases/case-000000000000", json={"note": "x"}).status_code == 404
        nothing = client.patch("/v1/cases/case-000000000000", json={})
        assert nothing.status_code == 422 and "none was given" in nothing.json()["message"]


def test_cases_written_while_a_push_commits_are_all_kept(desk: Server, api_keys: Keys) -> None:
    """Pushed logs and cases both write the warehouse: the push's batch and every case are
    in the snapshot afterwards, whichever took the lock first."""
    body = "\n".join(dump(random_game("t41-pushed-during-cases", "bazito", seed=21))).encode() + b"\n"
    opened: list[str] = []

    def cases() -> None:
        for n in range(3):
            response = _open(desk, api_keys["support"], game=DISPUTED, note=f"during the push {n}")
            assert response.status_code == 201, response.text
            opened.append(response.json()["case"])

    writer = threading.Thread(target=cases)
    with desk.client(api_keys["ingest"]) as client:
        writer.start()
        receipt = client.post("/v1/ingest", content=body).json()
        outcome = wait_for_batch(client, receipt["id"])
    writer.join()
    assert outcome["status"] == "committed" and len(opened) == 3
    with desk.client(api_keys["support"]) as client:
        assert client.get("/v1/games/t41-pushed-during-cases").status_code == 200
        listed = {c["case"] for c in client.get("/v1/cases", params={"q": "during the push", "limit": 1000}).json()["items"]}
        assert set(opened) <= listed


def test_the_cases_page_by_page(desk: Server, api_keys: Keys) -> None:
    for n in range(3):
        assert _open(desk, api_keys["support"], game="t41-elim-1", tags=["paging"], note=f"page {n}").status_code == 201
    seen: list[str] = []
    cursor = None
    with desk.client(api_keys["support"]) as client:
        while True:
            params: dict[str, Any] = {"tag": "paging", "limit": 1, **({"cursor": cursor} if cursor else {})}
            page = client.get("/v1/cases", params=params).json()
            seen += [c["case"] for c in page["items"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
    assert len(seen) == len(set(seen)) == 3


def _verify(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.app", "verify-bundle", str(path)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_the_bundle_verifies_and_a_tampered_one_does_not(desk: Server, api_keys: Keys, tmp_path: Path) -> None:
    case = _open(desk, api_keys["support"], game=DISPUTED, note="never in the bundle: internal").json()
    with desk.client(api_keys["support"]) as client:
        response = client.get(case["links"]["bundle"])
        report = client.get(case["links"]["report"]).content
    assert response.status_code == 200 and response.headers["content-type"] == "application/zip"
    assert case["case"] in response.headers["content-disposition"]
    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(response.content)
    archive = zipfile.ZipFile(bundle)
    assert sorted(archive.namelist()) == ["README.txt", "lines.jsonl", "manifest.json", "report.html"]
    assert archive.read("report.html") == report  # the API's report in the case player's view
    assert not any(b"never in the bundle" in archive.read(n) for n in archive.namelist())
    checked = _verify(bundle)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "holds" in checked.stdout and "byte for byte" in checked.stdout

    def tampered(name: str, change: Callable[[str, bytes], bytes]) -> Path:
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as copy:
            for entry in archive.namelist():
                copy.writestr(entry, change(entry, archive.read(entry)))
        path = tmp_path / f"{name}.zip"
        path.write_bytes(out.getvalue())
        return path

    lines = archive.read("lines.jsonl").splitlines()
    cut = b"\n".join(lines[:-3]) + b"\n"  # the game's last lines dropped, the manifest's hash made to agree
    honest = orjson.loads(archive.read("manifest.json"))
    honest["files"]["lines.jsonl"] = {"sha256": hashlib.sha256(cut).hexdigest(), "bytes": len(cut)}
    for name, change, words in (
        ("report", lambda n, d: d.replace(b"</main>", b"<p>refunded</p></main>") if n == "report.html" else d,
         "report.html: SHA-256"),
        ("lines", lambda n, d: cut if n == "lines.jsonl" else orjson.dumps(honest) if n == "manifest.json" else d,
         "the game's lines have sha256"),
    ):
        refused = _verify(tampered(name, change))
        assert refused.returncode == 1, (name, refused.stdout)
        assert words in refused.stdout and "does not hold" in refused.stdout, refused.stdout
    (tmp_path / "not-a-zip.zip").write_bytes(b"hello")
    assert _verify(tmp_path / "not-a-zip.zip").returncode == 1
    assert _verify(tmp_path / "missing.zip").returncode == 2
