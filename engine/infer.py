"""Ruleset inference: under which profiles does a game's log make sense?

Each game is replayed by the core under every candidate profile (`engine.profiles`) —
the same lines, the header's `ruleset`, `options` and `mode` replaced. A profile the log
complies with is one under which no line breaks a rule; for each rejected profile the
first contradicting line is kept. When a profile complies, the others' replays stop at
their first violation (strict policy); when none does, every profile is replayed to the
end so the closest one can be named.

`infer_lines` / `infer_paths` give one `GameInference` per game; `summarize` aggregates
them per server build (a table of profiles × share of games compliant, and the auditor's
sentences: "hk-server/2.4.1-rc plays persian with tarkesh off although its headers say
on").
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine import _core
from engine.profiles import Profile, candidates
from engine.reader import LineError, read_lines

#: "`game` — the game's id: 1–128 characters of `A–Z a–z 0–9 . _ : -`" (as the core's router)
_GAME_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")

Line = tuple[bytes, str | None, int | None]  # raw line, file, line number


# ------------------------------------------------------------------------ a game's lines


@dataclass(slots=True)
class _Entry:
    seq: int | None
    raw: bytes
    obj: dict[str, Any] | None
    file: str | None
    line: int | None


@dataclass(slots=True)
class GameLog:
    """One game's lines in input order, and whether they are already a clean sequence
    (seq 0…n−1, each once after identical repeats are dropped, a header at 0)."""

    game: str
    entries: list[_Entry] = field(default_factory=list)

    def header(self) -> dict[str, Any] | None:
        for e in self.entries:
            if e.seq == 0 and e.obj is not None and e.obj.get("type") == "game":
                return e.obj
        return None

    def ordered(self) -> list[_Entry] | None:
        """The lines in seq order when the log is clean, else None (then the validator's
        routing — repeats, conflicts, gaps — decides)."""
        by_seq: dict[int, _Entry] = {}
        for e in self.entries:
            if e.seq is None or e.obj is None:
                return None
            seen = by_seq.get(e.seq)
            if seen is None:
                by_seq[e.seq] = e
            elif seen.obj != e.obj or _canonical(seen.obj) != _canonical(e.obj):
                return None
        if len(by_seq) != max(by_seq, default=-1) + 1 or 0 not in by_seq:
            return None
        return [by_seq[s] for s in range(len(by_seq))]

    def build(self) -> str | None:
        header = self.header() or {}
        meta = header.get("meta")
        build = meta.get("server_build") if isinstance(meta, dict) else None
        return build if isinstance(build, str) else None


def _canonical(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


def _parse(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:  # integers beyond 64 bits, which orjson refuses
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None


def collect_games(lines: Iterable[Line], only: Sequence[str] | None = None) -> dict[str, GameLog]:
    """Route lines to their games (lines with no usable `game` belong to none)."""
    wanted = set(only) if only else None
    games: dict[str, GameLog] = {}
    for raw, file, number in lines:
        obj = _parse(raw)
        if not isinstance(obj, dict):
            continue
        game = obj.get("game")
        if not isinstance(game, str) or not _GAME_ID.fullmatch(game):
            continue
        if wanted is not None and game not in wanted:
            continue
        seq = obj.get("seq")
        usable = isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq < 2**63
        log = games.get(game)
        if log is None:
            log = games[game] = GameLog(game)
        log.entries.append(_Entry(seq if usable else None, raw, obj, file, number))
    return games


def read_paths(paths: list[str]) -> Iterator[Line]:
    """Every line of `paths` (files, directories, `.gz`), in input order.
    FileNotFoundError for a path that does not exist."""
    for file in _core.expand_paths(paths):
        for item in read_lines(file):
            if isinstance(item, LineError):
                continue
            yield item[1], file, item[0]


# ------------------------------------------------------------------------ replays


@dataclass(frozen=True, slots=True)
class Contradiction:
    """The first line a profile rejects: where, and the rule it breaks."""

    seq: int | None
    file: str | None
    line: int | None
    code: str
    player: str | None
    message: str

    @classmethod
    def of(cls, info: _core.ViolationInfo, where: dict[int, tuple[str | None, int | None]]) -> Contradiction:
        file, line = info["file"], info["line"]
        if file is None and info["seq"] is not None:
            file, line = where.get(info["seq"], (None, None))
        return cls(info["seq"], file, line, info["code"], info["player"], info["message"])

    def where(self) -> str:
        place = f"{self.file}:{self.line}" if self.file else "?"
        return f"seq {self.seq} ({place})"

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "file": self.file, "line": self.line, "code": self.code,
                "player": self.player, "message": self.message}


@dataclass(frozen=True, slots=True)
class ProfileVerdict:
    """One profile's replay of a game."""

    profile: Profile
    first: Contradiction | None  # None: the log complies with the profile
    violations: int | None  # None when the replay stopped at the first violation

    @property
    def compliant(self) -> bool:
        return self.first is None

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile.name, "compliant": self.compliant,
                "violations": self.violations,
                "first": self.first.to_json() if self.first else None}


def replay_as(log: GameLog, profile: Profile | None, *, record: bool = False) -> _core.Verdict | None:
    """The game's verdict with its header saying `profile` (None: as written), through the
    validator (repeats, conflicts and gaps routed as `validate` does)."""
    validator = _core.Validator(only={log.game}, record={log.game} if record else None)
    for e in log.entries:
        raw = e.raw
        if profile is not None and e.seq == 0 and e.obj is not None and e.obj.get("type") == "game":
            raw = orjson.dumps(profile.relabel(e.obj))
        validator.feed_line(raw, e.file or "<input>", e.line or 0)
    done = [v for v in validator.finish() if v.game == log.game]
    return done[0] if done else None


def _header_profile(game: str, header: dict[str, Any] | None) -> Profile | None:
    if header is None:
        return None
    run = _core.GameRun(game)
    run.feed(orjson.dumps(header))
    if run.invalid:
        return None
    return Profile.of_settings(run.settings())


# ------------------------------------------------------------------------ inference


@dataclass(frozen=True, slots=True)
class GameInference:
    """Which profiles one game complies with, and what its header says."""

    game: str
    build: str | None
    header: Profile | None  # None: no usable header (unknown ruleset, …)
    verdicts: tuple[ProfileVerdict, ...]  # in candidate order; empty without a header line

    @property
    def compliant(self) -> list[Profile]:
        return [v.profile for v in self.verdicts if v.compliant]

    def verdict(self, profile: Profile) -> ProfileVerdict | None:
        return next((v for v in self.verdicts if v.profile == profile), None)

    @property
    def inferred(self) -> Profile | None:
        """The header's profile when the log complies with it; else the complying profile
        nearest the header; when none complies, the closest: fewest violations, then the
        latest first violation (the longest prefix explained), then nearest the header."""
        if not self.verdicts:
            return None
        header = self.header
        order = {v.profile: i for i, v in enumerate(self.verdicts)}

        def near(p: Profile) -> int:
            return header.distance(p) if header is not None else 0

        passing = self.compliant
        if header is not None and header in passing:
            return header
        if passing:
            return min(passing, key=lambda p: (near(p), order[p]))
        best = min(self.verdicts, key=lambda v: (
            v.violations if v.violations is not None else 1 << 62,
            -(v.first.seq if v.first and v.first.seq is not None else -1),
            near(v.profile), order[v.profile]))
        return best.profile

    @property
    def closest_only(self) -> bool:
        """No profile complies: `inferred` is the closest one."""
        return bool(self.verdicts) and not any(v.compliant for v in self.verdicts)

    @property
    def discrepancy(self) -> list[str]:
        """What the log plays differently from what its header says (empty: nothing)."""
        inferred = self.inferred
        if self.header is None or inferred is None:
            return []
        return self.header.differences(inferred)

    @property
    def header_contradiction(self) -> Contradiction | None:
        """The first line that contradicts the header's own profile."""
        if self.header is None:
            return None
        verdict = self.verdict(self.header)
        return verdict.first if verdict else None

    def to_json(self) -> dict[str, Any]:
        inferred = self.inferred
        return {
            "kind": "game", "game": self.game, "server_build": self.build,
            "header": self.header.name if self.header else None,
            "inferred": inferred.name if inferred else None,
            "closest_only": self.closest_only,
            "discrepancy": self.discrepancy,
            "compliant": [p.name for p in self.compliant],
            "header_contradiction": (c.to_json() if (c := self.header_contradiction) else None),
            "profiles": [v.to_json() for v in self.verdicts],
        }


def infer_game(log: GameLog, profiles: Sequence[Profile] | None = None) -> GameInference:
    """Replay `log` under every profile of `profiles` (default: every candidate)."""
    profiles = tuple(profiles) if profiles is not None else candidates()
    header = log.header()
    build = log.build()
    if header is None:
        return GameInference(log.game, build, None, ())
    declared = _header_profile(log.game, header)
    where = {e.seq: (e.file, e.line) for e in log.entries if e.seq is not None}
    ordered = log.ordered()
    if ordered is not None:
        # branch and bound: the header's own profile first; a replay stops as soon as it
        # has more violations than the best so far (it can be neither compliant nor the
        # closest), so when the header complies every other replay stops at its first
        # the lines parsed once, replayed under each profile's header in the core
        body = _core.ParsedLines([e.raw for e in ordered[1:]], [e.line for e in ordered[1:]])
        first_of = sorted(range(len(profiles)), key=lambda i: profiles[i] != declared)
        results: dict[int, ProfileVerdict] = {}
        bound = float("inf")
        for i in first_of:
            count, first, finished = body.replay_bounded(
                log.game, orjson.dumps(profiles[i].relabel(header)), bound)
            if finished:
                bound = min(bound, count)
            results[i] = ProfileVerdict(profiles[i], Contradiction.of(first, where) if first else None,
                                        count if finished else None)
        verdicts = [results[i] for i in range(len(profiles))]
        # a profile fully replayed before the bound fell may have more than the best
        return GameInference(log.game, build, declared, tuple(verdicts))
    # not a clean sequence: the validator routes repeats, conflicts and gaps
    verdicts = []
    for profile in profiles:
        verdict = replay_as(log, profile)
        found = verdict.violations if verdict is not None else []
        first = min(found, key=lambda v: -1 if v["seq"] is None else v["seq"]) if found else None
        verdicts.append(ProfileVerdict(profile, Contradiction.of(first, where) if first else None,
                                       len(found)))
    return GameInference(log.game, build, declared, tuple(verdicts))


def infer_lines(
    lines: Iterable[Line], *, games: Sequence[str] | None = None,
    profiles: Sequence[Profile] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[GameInference]:
    """One inference per game of `lines` (in first-seen order)."""
    logs = collect_games(lines, games)
    out = []
    for i, log in enumerate(logs.values(), 1):
        out.append(infer_game(log, profiles))
        if progress is not None:
            progress(i, len(logs))
    return out


def infer_paths(paths: list[str], **kwargs: Any) -> list[GameInference]:
    """`infer_lines` over files and directories."""
    return infer_lines(read_paths(paths), **kwargs)


# ------------------------------------------------------------------------ per build


@dataclass(slots=True)
class BuildSummary:
    """One server build's games: how many comply with each profile, what their headers
    say, and what the logs play differently."""

    build: str
    games: int = 0
    compliant: Counter[Profile] = field(default_factory=Counter)
    headers: Counter[Profile] = field(default_factory=Counter)
    discrepancies: Counter[tuple[str, tuple[str, ...]]] = field(default_factory=Counter)
    examples: dict[tuple[str, tuple[str, ...]], tuple[str, Contradiction | None]] = field(default_factory=dict)

    def share(self, profile: Profile) -> float:
        return self.compliant[profile] / self.games if self.games else 0.0

    def table(self, limit: int | None = None) -> list[tuple[Profile, int, float]]:
        """Profiles by share of games compliant (highest first), with the headers' own
        profiles always included."""
        ranked = sorted(self.compliant, key=lambda p: -self.compliant[p])
        keep = ranked[:limit] if limit is not None else ranked
        keep += [p for p in self.headers if p not in keep]
        return [(p, self.compliant[p], self.share(p)) for p in keep]

    def findings(self) -> list[str]:
        """The auditor's sentences, most frequent first."""
        out = []
        for (ruleset, diff), count in self.discrepancies.most_common():
            game, where = self.examples[(ruleset, diff)]
            shown = f"; e.g. {game}, header contradicted at {where.where()}: {where.code}" if where else ""
            out.append(f"{self.build} plays {ruleset} {_phrase(diff)}: {count} of {self.games} "
                       f"game(s) make sense only that way{shown}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "build", "server_build": self.build, "games": self.games,
            "profiles": [{"profile": p.name, "games": n, "share": round(s, 4)} for p, n, s in self.table()],
            "headers": {p.name: n for p, n in self.headers.items()},
            "findings": self.findings(),
        }


def _phrase(diff: tuple[str, ...]) -> str:
    """`("tarkesh on → off",)` → "with tarkesh off although its headers say on"."""
    parts = []
    for item in diff:
        name, _, change = item.partition(" ")
        before, _, after = change.partition(" → ")
        if name == "ruleset":
            parts.append(f"rules although its headers say {before}")
        elif name == "mode":
            parts.append(f"in {after} mode although its headers say {before}")
        else:
            parts.append(f"with {name} {after} although its headers say {before}")
    return "; ".join(parts)


def summarize(inferences: Iterable[GameInference]) -> list[BuildSummary]:
    """Per server build (`?` when the header names none), in build order."""
    builds: dict[str, BuildSummary] = {}
    for inference in inferences:
        summary = builds.setdefault(inference.build or "?", BuildSummary(inference.build or "?"))
        summary.games += 1
        summary.compliant.update(inference.compliant)
        if inference.header is not None:
            summary.headers[inference.header] += 1
        diff = tuple(inference.discrepancy)
        inferred = inference.inferred
        if diff and inferred is not None:
            key = (inferred.ruleset, diff)
            summary.discrepancies[key] += 1
            summary.examples.setdefault(key, (inference.game, inference.header_contradiction))
    return [builds[b] for b in sorted(builds)]


# ------------------------------------------------------------------------ re-validation diff


@dataclass(frozen=True, slots=True)
class RulesDiff:
    """One game judged under its own header and under another profile, step by step."""

    game: str
    header: Profile | None
    other: Profile
    own: _core.Verdict
    as_other: _core.Verdict
    diverges_at: int | None  # the first seq whose violations differ (None: the same throughout)
    state_diverges_at: int | None  # the first seq after which the table differs

    def at(self, seq: int | None) -> tuple[list[_core.ViolationInfo], list[_core.ViolationInfo]]:
        """The violations at `seq` under the header and under the other profile."""
        return ([v for v in self.own.violations if v["seq"] == seq],
                [v for v in self.as_other.violations if v["seq"] == seq])

    def to_json(self) -> dict[str, Any]:
        def side(verdict: _core.Verdict) -> dict[str, Any]:
            return {"status": verdict.status, "violations": len(verdict.violations),
                    "hands": verdict.hands, "totals": verdict.totals, "winners": verdict.winners}

        own_at, other_at = self.at(self.diverges_at)
        return {"game": self.game, "header": self.header.name if self.header else None,
                "as": self.other.name, "diverges_at": self.diverges_at,
                "state_diverges_at": self.state_diverges_at,
                "at_divergence": {"header": own_at, "as": other_at},
                "header_verdict": side(self.own), "as_verdict": side(self.as_other)}


def diff_rules(lines: Iterable[Line], game: str, profile: str | Profile) -> RulesDiff:
    """Replay `game` as its header says and as `profile` says (a `Profile`, or text like
    `persian:tarkesh=false`: settings not named are the header's when it is of the same
    ruleset). ValueError when the game is not in `lines` or the profile cannot be read."""
    from engine.profiles import parse_profile

    log = collect_games(lines, [game]).get(game)
    if log is None:
        raise ValueError(f"no line of the log names game {game!r}")
    declared = _header_profile(game, log.header())
    other = profile if isinstance(profile, Profile) else parse_profile(profile, declared)
    own, as_other = replay_as(log, None, record=True), replay_as(log, other, record=True)
    if own is None or as_other is None:
        raise ValueError(f"game {game!r} has no line to replay")

    def by_seq(verdict: _core.Verdict) -> dict[int, dict[str, Any]]:
        return {s["seq"]: s for s in verdict.steps()}

    mine, theirs = by_seq(own), by_seq(as_other)
    diverges = state_diverges = None
    for seq in sorted(set(mine) | set(theirs)):
        a, b = mine.get(seq), theirs.get(seq)
        codes_a = sorted((v["code"], v["message"]) for v in (a or {}).get("violations", []))
        codes_b = sorted((v["code"], v["message"]) for v in (b or {}).get("violations", []))
        if diverges is None and codes_a != codes_b:
            diverges = seq
        if state_diverges is None and (a or {}).get("state") != (b or {}).get("state"):
            state_diverges = seq
        if diverges is not None and state_diverges is not None:
            break
    return RulesDiff(game, declared, other, own, as_other, diverges, state_diverges)
