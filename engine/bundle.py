"""The evidence bundle of a case: one zip a support desk sends to a player or a regulator,
and the check that anyone holding it can run (`haftkhabis verify-bundle FILE`).

The bundle holds

- `report.html`: the dispute report of the case's hand and step in the case player's view
  (`engine.report.render_hand_report` with `viewer=`, the same bytes the API and
  `haftkhabis report --player` give);
- `lines.jsonl`: the game's lines the verdict rests on, every one the warehouse kept for the
  game, as received (in the order received);
- `README.txt`: what the files are and how to check them;
- `manifest.json`: each file's SHA-256 and size, the case (its id, game, hand, seq, player,
  tags and decision; never its notes, which are the desk's), the engine version, the
  game's verdict (status, each violation's seq, code and player, the winners and totals),
  the disputed step and the sha256 of the game's lines that the report prints.

Verifying re-judges the lines with this engine: the file hashes must match the manifest,
the lines must replay to the game, the sha256 and the verdict the manifest records, and
the report rendered again from them must be `report.html`, byte for byte (when the bundle
was made by the same engine version; another version's report is not compared and says
so). The lines hold every player's cards: the bundle is the desk's to send, not a
player's app's to fetch.

Pure Python over the engine (no warehouse): the service and the dashboard hand it the lines
they read, so the same case gives the same bytes (entries are dated by the case's last
change, not by the clock).
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from engine import ENGINE_VERSION
from engine.replay import GameReplay, record_lines
from engine.report import render_hand_report

FORMAT = "haftkhabis-bundle/1"
MANIFEST = "manifest.json"
REPORT = "report.html"
LINES = "lines.jsonl"
README = "README.txt"
#: a bundle larger than this (unpacked) is refused by the verifier: a game's lines are a
#: few hundred kilobytes, and a zip bomb must not be inflated
MAX_UNPACKED = 256 << 20


class BundleError(ValueError):
    """A bundle cannot be made as asked (no such game, hand, line or player)."""


@dataclass(frozen=True, slots=True)
class BundleCase:
    """What a bundle says of its case: never the desk's notes."""

    case_id: str
    game: str
    hand: int
    seq: int | None
    player: str
    tags: tuple[str, ...] = ()
    decision: str | None = None
    decided_at: datetime | None = None
    updated_at: datetime | None = None  # dates the zip's entries (the same case, the same bytes)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.case_id, "game": self.game, "hand": self.hand, "seq": self.seq,
                "player": self.player, "tags": list(self.tags),
                "status": "decided" if self.decision else "open", "decision": self.decision,
                "decided_at": self.decided_at.isoformat() if self.decided_at else None}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verdict_of(replay: GameReplay) -> dict[str, Any]:
    """The verdict a bundle records and its verifier compares: the status, every violation
    (seq, code, player), the match winners and totals."""
    return {
        "status": replay.status,
        "violations": [{"seq": v.seq, "code": v.code.value, "player": v.player}
                       for v in replay.violations],
        "winners": list(replay.match_winners),
        "totals": replay.totals,
    }


def _replayed(lines: Sequence[bytes], game: str) -> GameReplay | None:
    """The game replayed from the bundle's lines, named as the file holds them (so the
    report's steps say `lines.jsonl:N`, and its player view shows no path at all)."""
    recorded = record_lines(((raw, LINES, n) for n, raw in enumerate(lines, 1)), game)
    return recorded.build() if recorded is not None else None


def _readme(case: BundleCase, replay: GameReplay) -> str:
    seq = f" --seq {case.seq}" if case.seq is not None else ""
    return f"""Evidence bundle of case {case.case_id}: game {case.game}, hand {case.hand}{', seq ' + str(case.seq) if case.seq is not None else ''}
Made by haftkhabis (engine {ENGINE_VERSION}), bundle format {FORMAT}.

What is here
  report.html    the dispute report of that hand, as {case.player} could see it at the table
  lines.jsonl    the game's lines the verdict rests on, as the game server logged them
                 ({replay.ruleset or '?'}; they hold every player's cards)
  manifest.json  each file's SHA-256, the engine version, the case, and the verdict
  README.txt     this file

How to check it
  1. With haftkhabis installed (its repository's `make setup`):
       haftkhabis verify-bundle THIS.zip
     checks every file's SHA-256 against the manifest, replays lines.jsonl with the
     engine, compares the verdict and the sha256 of the game's lines with the manifest,
     and renders the report again to compare it with report.html. Exit status 0: it holds.
  2. By hand:
       sha256sum report.html lines.jsonl README.txt   (compare with manifest.json)
       haftkhabis validate lines.jsonl
       haftkhabis replay lines.jsonl --game {case.game}{seq}
       haftkhabis report --log lines.jsonl --game {case.game} --hand {case.hand}{seq} --player {case.player} --out again.html
     again.html is report.html byte for byte when made by engine {ENGINE_VERSION}.
The report's "Game log sha256" is the sha256 of the game's lines in seq order, each
ended by a newline (docs/notation.md); the manifest's game_sha256 is the same.
"""


def make_bundle(lines: Sequence[bytes], case: BundleCase) -> bytes:
    """The bundle of `case` (a zip, as bytes) from the game's lines as the warehouse holds
    them (`ingest.read.game_lines`' raw lines, in the order received). BundleError when
    the game, the hand, the line or the player is not there."""
    kept = [raw.rstrip(b"\r\n") for raw in lines if raw.strip()]
    replay = _replayed(kept, case.game)
    if replay is None:
        raise BundleError(f"no line of game {case.game!r} among the {len(kept)} lines given")
    if case.player not in replay.players:
        raise BundleError(f"{case.player!r} did not play game {case.game} "
                          f"(players: {', '.join(replay.players)})")
    try:
        report = render_hand_report(replay, case.hand, seq=case.seq, viewer=case.player).encode("utf-8")
    except ValueError as exc:
        raise BundleError(str(exc)) from None
    disputed = replay.by_seq(case.seq) if case.seq is not None else None
    files = {
        REPORT: report,
        LINES: b"".join(raw + b"\n" for raw in kept),
        README: _readme(case, replay).encode("utf-8"),
    }
    manifest = {
        "format": FORMAT,
        "engine_version": ENGINE_VERSION,
        "case": case.to_json(),
        "ruleset": replay.ruleset,
        "players": list(replay.players),
        "game_sha256": replay.digest,
        "lines": len(kept),
        "verdict": verdict_of(replay),
        "disputed": None if disputed is None else {
            "hand": disputed.hand, "step": disputed.number, "seq": disputed.seq,
            "codes": [v.code.value for v in disputed.violations]},
        "files": {name: {"sha256": _sha256(data), "bytes": len(data)} for name, data in files.items()},
        "verify": "haftkhabis verify-bundle THIS.zip (README.txt says how, by hand too)",
    }
    files[MANIFEST] = orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    moment = case.updated_at or case.decided_at
    stamp = (moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second) \
        if moment is not None and moment.year >= 1980 else (1980, 1, 1, 0, 0, 0)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in (README, MANIFEST, REPORT, LINES):
            entry = zipfile.ZipInfo(name, date_time=stamp)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, files[name])
    return out.getvalue()


# ---------------------------------------------------------------------------- verifying


@dataclass(slots=True)
class Verification:
    """What checking a bundle found: each check passed, each problem (what was expected,
    what was found), and notes that are not failures (another engine version)."""

    checked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    manifest: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.checked)


def verify_bundle(data: bytes, name: str = "bundle") -> Verification:
    """Check a bundle's bytes: hashes, the verdict re-judged from its lines, the report
    rendered again. Every problem is listed (not only the first)."""
    found = Verification()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        found.problems.append(f"{name} is not a zip archive ({exc}); a bundle is the zip "
                              "GET /v1/cases/{id}/bundle or the desk's download gives")
        return found
    with archive:
        entries = {info.filename: info for info in archive.infolist()}
        if sum(info.file_size for info in entries.values()) > MAX_UNPACKED:
            found.problems.append(f"{name} unpacks to more than {MAX_UNPACKED >> 20} MiB: not a bundle")
            return found
        if MANIFEST not in entries:
            found.problems.append(f"{name} has no {MANIFEST} (it holds {', '.join(sorted(entries)) or 'nothing'})")
            return found
        files = {n: archive.read(n) for n in entries}
    try:
        manifest = orjson.loads(files[MANIFEST])
    except orjson.JSONDecodeError as exc:
        found.problems.append(f"{MANIFEST} is not JSON: {exc}")
        return found
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found.problems.append(f"{MANIFEST} is not of format {FORMAT} (found "
                              f"{manifest.get('format') if isinstance(manifest, dict) else type(manifest).__name__!r})")
        return found
    found.manifest = manifest
    listed: Mapping[str, Any] = manifest.get("files") or {}
    for file, expected in sorted(listed.items()):
        if file not in files:
            found.problems.append(f"{file} is listed in the manifest but missing from {name}")
            continue
        actual = _sha256(files[file])
        if actual != expected.get("sha256"):
            found.problems.append(f"{file}: SHA-256 {actual}, the manifest says {expected.get('sha256')}")
        else:
            found.checked.append(f"{file}: SHA-256 matches the manifest")
    for extra in sorted(set(files) - set(listed) - {MANIFEST}):
        found.problems.append(f"{extra} is in {name} but not in its manifest")
    if LINES not in files or REPORT not in files:
        found.problems.append(f"{name} holds no {LINES} or no {REPORT}: nothing to re-judge")
        return found

    case = manifest.get("case") or {}
    game = str(case.get("game") or "")
    lines = [raw for raw in files[LINES].split(b"\n") if raw.strip()]
    replay = _replayed(lines, game)
    if replay is None:
        found.problems.append(f"{LINES} holds no line of game {game!r}, the case's")
        return found
    found.checked.append(f"{LINES}: {len(lines)} lines replayed as game {game} ({replay.ruleset})")
    if replay.digest != manifest.get("game_sha256"):
        found.problems.append(f"the game's lines have sha256 {replay.digest}; the manifest (and "
                              f"the report) say {manifest.get('game_sha256')}")
    else:
        found.checked.append(f"the game's lines: sha256 {replay.digest}, as the report says")
    verdict = verdict_of(replay)
    recorded = manifest.get("verdict") or {}
    for key in ("status", "violations", "winners", "totals"):
        if verdict[key] != recorded.get(key):
            found.problems.append(f"re-judged, the game's {key} is {orjson.dumps(verdict[key]).decode()}; "
                                  f"the manifest says {orjson.dumps(recorded.get(key)).decode()}")
    if all(verdict[key] == recorded.get(key) for key in ("status", "violations", "winners", "totals")):
        found.checked.append(f"re-judged by engine {ENGINE_VERSION}: {verdict['status']}, "
                             f"{len(verdict['violations'])} violation(s), as the manifest says")
    disputed = manifest.get("disputed")
    if disputed is not None:
        step = replay.by_seq(int(disputed.get("seq") or 0))
        codes = [v.code.value for v in step.violations] if step is not None else None
        if step is None or codes != disputed.get("codes") or (step.hand, step.number) != (
                disputed.get("hand"), disputed.get("step")):
            found.problems.append(f"the disputed line seq {disputed.get('seq')} re-judged: "
                                  f"{'not found' if step is None else f'hand {step.hand} step {step.number}, codes {codes}'}; "
                                  f"the manifest says hand {disputed.get('hand')} step {disputed.get('step')}, "
                                  f"codes {disputed.get('codes')}")
        else:
            found.checked.append(f"the disputed line seq {step.seq} ({step.label}): "
                                 f"{', '.join(codes or []) or 'legal'}, as the manifest says")
    made_by = manifest.get("engine_version")
    if made_by != ENGINE_VERSION:
        found.notes.append(f"made by engine {made_by}, checked by {ENGINE_VERSION}: the report "
                           "is not rendered again (its words may differ between versions)")
        return found
    try:
        again = render_hand_report(replay, int(case.get("hand") or 0), seq=case.get("seq"),
                                   viewer=str(case.get("player"))).encode("utf-8")
    except (TypeError, ValueError) as exc:
        found.problems.append(f"the report cannot be rendered again from {LINES}: {exc}")
        return found
    if again != files[REPORT]:
        found.problems.append(f"{REPORT} is not the report the engine renders from {LINES} for "
                              f"{case.get('player')}'s view of hand {case.get('hand')}")
    else:
        found.checked.append(f"{REPORT}: rendered again from {LINES}, byte for byte the same")
    return found
