"""The alert rules file (`haftkhabis serve --alerts FILE`): its TOML format, read and checked
into typed rules. docs/operations.md ("Alerts and metrics") documents it for people.

```toml
[webhook]                       # optional: without it alerts are only listed (GET /v1/alerts)
url = "https://ops.example/hooks/haftkhabis"
timeout = "5s"                  # each attempt
attempts = 8                    # then the delivery is given up (and logged)
backoff = "1s"                  # the first retry's wait, doubled after each failure
max_backoff = "5m"
headers = { Authorization = "Bearer …" }

[[rule]]
name = "must-play"              # unique; names the alert in the list, the webhook, /metrics
kind = "violation_rate"         # the share of a build's games with a violation of `code`
code = "must_play"              # omit for any code
window = "10m"                  # a time window, or `games = 500`: the build's last 500 games
threshold = 5                   # percent: fires above it
min_games = 50                  # games in the window before it may fire

[[rule]]
name = "rules-changed"
kind = "rules_changed"          # a build's games play another ruleset profile than before
every = "1m"                    # how often the builds' recent games are inferred
sample = 20                     # the newest complete games of a build taken each time
min_games = 5
threshold = 50                  # percent of the sample playing another profile
accept_after = "1h"             # then the new profile is the build's own (the alert clears)

[[rule]]
name = "lag"
kind = "ingest_lag"             # seconds the oldest waiting push has waited
threshold = 30

[[rule]]
name = "quarantine"
kind = "quarantine_rate"        # quarantined lines, percent of the lines committed
window = "10m"                  # or `batches = 100`
threshold = 1
min_lines = 1000
```

Durations are a number of seconds or text with a unit (`90s`, `10m`, `1h`). A rule with a
field its kind does not take, an unknown code, or a threshold out of range is refused with
where it is and what was expected.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from engine.violations import Code

#: bounds that keep every window's memory small whatever the file says
MAX_GAMES_WINDOW = 100_000
MAX_BATCHES_WINDOW = 100_000
MAX_SAMPLE = 200
MAX_WINDOW_SECONDS = 7 * 24 * 3600.0


class AlertFileError(ValueError):
    """The alerts file cannot be used; the message says where and why."""


class Kind(StrEnum):
    violation_rate = "violation_rate"
    rules_changed = "rules_changed"
    ingest_lag = "ingest_lag"
    quarantine_rate = "quarantine_rate"

    @property
    def unit(self) -> str:
        return "seconds" if self is Kind.ingest_lag else "percent"

    @property
    def per_build(self) -> bool:
        return self in (Kind.violation_rate, Kind.rules_changed)


@dataclass(frozen=True, slots=True)
class Rule:
    """One alert rule. `threshold` is in the kind's unit (`Kind.unit`): percent, or
    seconds for `ingest_lag`."""

    name: str
    kind: Kind
    threshold: float
    code: str | None = None  # violation_rate: one code, or any (None)
    window: float | None = None  # seconds: a time window
    games: int | None = None  # violation_rate: the build's last N games
    batches: int | None = None  # quarantine_rate: the last N batches
    min_games: int = 1
    min_lines: int = 1
    every: float = 60.0  # rules_changed: seconds between inferences
    sample: int = 20  # rules_changed: games inferred per build
    accept_after: float | None = 3600.0  # rules_changed: a change held this long is the norm

    @property
    def unit(self) -> str:
        return self.kind.unit

    def describe_window(self) -> str:
        if self.games is not None:
            return f"the last {self.games} games"
        if self.batches is not None:
            return f"the last {self.batches} batches"
        if self.window is not None:
            return f"the last {seconds_text(self.window)}"
        return "now"


@dataclass(frozen=True, slots=True)
class Webhook:
    """Where state changes are POSTed, and how hard to try."""

    url: str
    timeout: float = 5.0
    attempts: int = 8
    backoff: float = 1.0
    max_backoff: float = 300.0
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class AlertConfig:
    rules: tuple[Rule, ...] = ()
    webhook: Webhook | None = None
    source: str = "no alerts file"

    @classmethod
    def from_file(cls, path: str | Path) -> AlertConfig:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise AlertFileError(f"cannot read the alerts file {path}: {exc.strerror or exc}") from None
        return cls.from_text(text, str(path))

    @classmethod
    def from_text(cls, text: str, source: str) -> AlertConfig:
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise AlertFileError(f"{source}: not TOML ({exc})") from None
        unknown = sorted(set(document) - {"webhook", "rule"})
        if unknown:
            raise AlertFileError(f"{source}: unknown table(s) {', '.join(unknown)} "
                                 "(expected [webhook] and [[rule]] entries)")
        hook = document.get("webhook")
        webhook = _webhook(hook, f"{source}: [webhook]") if hook is not None else None
        entries = document.get("rule", [])
        if not isinstance(entries, list):
            raise AlertFileError(f"{source}: `rule` must be a list of tables ([[rule]])")
        rules: list[Rule] = []
        for number, entry in enumerate(entries, 1):
            rule = _rule(entry, f"{source}: rule {number}")
            if any(r.name == rule.name for r in rules):
                raise AlertFileError(f"{source}: rule {number}: the name {rule.name!r} is used twice")
            rules.append(rule)
        return cls(tuple(rules), webhook, source)


# ------------------------------------------------------------------------ values

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(value: Any, where: str) -> float:
    """Seconds from `90`, `"90s"`, `"10m"`, `"1h"`, `"250ms"`."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (match := _DURATION.fullmatch(value)):
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
    else:
        raise AlertFileError(f"{where}: expected a duration (seconds, or text like \"90s\", "
                             f"\"10m\", \"1h\"), found {value!r}")
    if seconds < 0:
        raise AlertFileError(f"{where}: a duration is 0 or more, not {value!r}")
    return seconds


def seconds_text(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _number(entry: dict[str, Any], key: str, where: str, low: float, high: float) -> float:
    value = entry[key]
    if not isinstance(value, int | float) or isinstance(value, bool) or not low <= value <= high:
        raise AlertFileError(f"{where}: `{key}` must be a number from {low:g} to {high:g}, found {value!r}")
    return float(value)


def _count(entry: dict[str, Any], key: str, where: str, high: int) -> int:
    value = entry[key]
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= high:
        raise AlertFileError(f"{where}: `{key}` must be a whole number from 1 to {high}, found {value!r}")
    return value


_COMMON = {"name", "kind", "threshold"}
_FIELDS: dict[Kind, set[str]] = {
    Kind.violation_rate: _COMMON | {"code", "window", "games", "min_games"},
    Kind.rules_changed: _COMMON | {"every", "sample", "min_games", "accept_after"},
    Kind.ingest_lag: _COMMON,
    Kind.quarantine_rate: _COMMON | {"window", "batches", "min_lines"},
}


def _rule(entry: Any, where: str) -> Rule:
    if not isinstance(entry, dict):
        raise AlertFileError(f"{where}: expected a table")
    entry = dict(entry)  # defaults are filled in below
    name = entry.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", name):
        raise AlertFileError(f"{where}: `name` must be 1–64 characters of A–Z a–z 0–9 . _ -, "
                             f"found {name!r}")
    where = f"{where} ({name!r})"
    try:
        kind = Kind(entry.get("kind"))
    except ValueError:
        raise AlertFileError(f"{where}: `kind` must be one of {', '.join(k.value for k in Kind)}, "
                             f"found {entry.get('kind')!r}") from None
    unknown = sorted(set(entry) - _FIELDS[kind])
    if unknown:
        raise AlertFileError(f"{where}: a {kind.value} rule does not take {', '.join(unknown)} "
                             f"(its fields: {', '.join(sorted(_FIELDS[kind]))})")
    if "threshold" not in entry and kind is not Kind.rules_changed:
        raise AlertFileError(f"{where}: `threshold` is missing ({kind.unit})")
    fields: dict[str, Any] = {"name": name, "kind": kind}
    if kind is Kind.ingest_lag:
        fields["threshold"] = _number(entry, "threshold", where, 0, 1e9)
    else:
        entry.setdefault("threshold", 50)
        fields["threshold"] = _number(entry, "threshold", where, 0, 100)
    if "code" in entry:
        try:
            fields["code"] = Code(entry["code"]).value
        except ValueError:
            raise AlertFileError(f"{where}: unknown violation code {entry['code']!r} "
                                 f"(codes: {', '.join(c.value for c in Code)})") from None
    if "window" in entry:
        fields["window"] = parse_duration(entry["window"], f"{where}: `window`")
        if not 1.0 <= fields["window"] <= MAX_WINDOW_SECONDS:
            raise AlertFileError(f"{where}: `window` must be from 1s to 7d, found {entry['window']!r}")
    if "games" in entry:
        fields["games"] = _count(entry, "games", where, MAX_GAMES_WINDOW)
    if "batches" in entry:
        fields["batches"] = _count(entry, "batches", where, MAX_BATCHES_WINDOW)
    if kind in (Kind.violation_rate, Kind.quarantine_rate):
        counted = "games" if kind is Kind.violation_rate else "batches"
        if ("window" in fields) == (counted in fields):
            raise AlertFileError(f"{where}: give either `window` (a duration) or `{counted}` "
                                 "(a count), one of them")
    if "min_games" in entry:
        fields["min_games"] = _count(entry, "min_games", where, MAX_GAMES_WINDOW)
    if "min_lines" in entry:
        fields["min_lines"] = _count(entry, "min_lines", where, 1 << 40)
    if "every" in entry:
        fields["every"] = parse_duration(entry["every"], f"{where}: `every`")
    if "sample" in entry:
        fields["sample"] = _count(entry, "sample", where, MAX_SAMPLE)
    if "accept_after" in entry:
        accept = entry["accept_after"]
        fields["accept_after"] = None if accept == "never" or accept is False else \
            parse_duration(accept, f"{where}: `accept_after`")
    rule = Rule(**fields)
    if kind is Kind.rules_changed and rule.min_games > rule.sample:
        raise AlertFileError(f"{where}: `min_games` ({rule.min_games}) cannot exceed `sample` ({rule.sample})")
    return rule


def _webhook(entry: Any, where: str) -> Webhook:
    if not isinstance(entry, dict):
        raise AlertFileError(f"{where}: expected a table")
    known = {"url", "timeout", "attempts", "backoff", "max_backoff", "headers"}
    unknown = sorted(set(entry) - known)
    if unknown:
        raise AlertFileError(f"{where}: unknown field(s) {', '.join(unknown)} (expected {', '.join(sorted(known))})")
    url = entry.get("url")
    if not isinstance(url, str) or not re.match(r"https?://[^/\s]+", url):
        raise AlertFileError(f"{where}: `url` must be an http:// or https:// URL, found {url!r}")
    fields: dict[str, Any] = {"url": url}
    for key in ("timeout", "backoff", "max_backoff"):
        if key in entry:
            fields[key] = parse_duration(entry[key], f"{where}: `{key}`")
    if "attempts" in entry:
        fields["attempts"] = _count(entry, "attempts", where, 100)
    headers = entry.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                for k, v in headers.items()):
        raise AlertFileError(f"{where}: `headers` must be a table of strings")
    fields["headers"] = tuple(sorted(headers.items()))
    return Webhook(**fields)
