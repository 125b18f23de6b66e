"""API keys: who is calling, what they may see, and how often.

Keys live in a TOML or JSON file (`haftkhabis serve --keys FILE`, or the path in
`HAFTKHABIS_API_KEYS_FILE`) or in the environment itself (`HAFTKHABIS_API_KEYS`, the same
document as text). Each entry stores the key's SHA-256 digest, never the key: keys are
random 256-bit tokens (`haftkhabis api-key` makes one), so a fast hash is the right one —
a slow password hash protects low-entropy secrets, and would cost every request
milliseconds. A request presents its key as `Authorization: Bearer KEY` (or `X-API-Key`).

```toml
[[key]]
name = "table servers"
roles = ["ingest"]
sha256 = "…64 hex digits…"
rate = 50          # requests a second, optional (default: serve --rate)
burst = 100        # optional (default: twice the rate)

[[key]]
name = "mina's app"
player = "mina"    # a player-scoped token: only mina's own view of the hands she played
sha256 = "…"
expires = 2027-06-30T00:00:00Z   # optional: refused from then on
```

A keys file is watched: every request compares the file's identity and modification time
with what was read (one `stat`), and reads it again when it changed — a key removed or
expired is refused from the next request on, a key added works at once, no restart. A file
that cannot be read any more as keys leaves the keys as they were (and the server says so
in its log and in `/v1/health`), so a half-saved edit never locks everyone out.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import threading
import time
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

log = logging.getLogger("haftkhabis.service")

KEYS_ENV = "HAFTKHABIS_API_KEYS"
KEYS_FILE_ENV = "HAFTKHABIS_API_KEYS_FILE"
KEY_PREFIX = "hk_"


class Role(StrEnum):
    """What a key is for (docs/api.md has the table of who may call what)."""

    ingest = "ingest"  # game servers: push logs, follow their batches
    support = "support"  # the support desk: every view of a game
    analyst = "analyst"  # aggregates: leaderboard, players, compliance figures
    auditor = "auditor"  # compliance figures and the violations themselves


class KeyFileError(ValueError):
    """The keys file (or variable) cannot be used; the message says where and why."""


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller a key names."""

    name: str
    roles: frozenset[Role] = frozenset()
    player: str | None = None  # set for a player-scoped token (which has no role)
    rate: float | None = None  # requests a second; None: the server's default
    burst: int | None = None
    demo: bool = False  # a published demo key: refused unless bound to loopback
    expires: datetime | None = None  # refused from this moment on

    def describe(self) -> str:
        if self.player is not None:
            return f"key {self.name!r} (player {self.player})"
        return f"key {self.name!r} ({', '.join(sorted(self.roles)) or 'no role'})"


def digest(key: str) -> str:
    """The stored form of a key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    """A fresh random key (256 bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


class KeyExpired(Exception):
    """A configured key past its `expires`."""

    def __init__(self, principal: Principal) -> None:
        super().__init__(f"{principal.describe()} expired at {principal.expires:%Y-%m-%d %H:%M} UTC")
        self.principal = principal


@dataclass
class KeyStore:
    """The configured keys, by digest; read again whenever their file changes."""

    by_digest: dict[str, Principal] = field(default_factory=dict)
    source: str = "no keys"
    path: Path | None = None  # the file they were read from (watched)
    problem: str | None = None  # why the file's last change could not be taken
    _stamp: tuple[int, int, int, int] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __len__(self) -> int:
        return len(self.by_digest)

    def lookup(self, key: str, now: datetime | None = None) -> Principal | None:
        """The key's principal (None: not configured); `KeyExpired` past its expiry."""
        self.refresh()
        found = self.by_digest.get(digest(key))
        if found is not None and found.expires is not None and (now or datetime.now(UTC)) >= found.expires:
            raise KeyExpired(found)
        return found

    def refresh(self) -> None:
        """Read the keys file again if it changed since it was read (one `stat`)."""
        if self.path is None:
            return
        stamp = _stamp(self.path)
        if stamp == self._stamp:
            return
        with self._lock:
            if stamp == self._stamp:
                return
            try:
                fresh = KeyStore.from_file(self.path)
            except KeyFileError as exc:
                self._stamp, self.problem = stamp, str(exc)
                log.error("the keys file changed and cannot be read; the keys stay as they were: %s", exc)
                return
            self.by_digest, self._stamp, self.problem = fresh.by_digest, stamp, None
            log.info("keys read again from %s: %d keys", self.path, len(fresh.by_digest))

    @property
    def has_demo_keys(self) -> bool:
        return any(p.demo for p in self.by_digest.values())

    @classmethod
    def from_document(cls, document: Mapping[str, Any], source: str) -> KeyStore:
        entries = document.get("key", document.get("keys"))
        if entries is None:
            raise KeyFileError(f"{source}: no [[key]] entries")
        if not isinstance(entries, list):
            raise KeyFileError(f"{source}: `key` must be a list of tables")
        store = cls(source=source)
        for number, entry in enumerate(entries, 1):
            principal, hexdigest = _entry(entry, f"{source}: key {number}")
            if hexdigest in store.by_digest:
                raise KeyFileError(f"{source}: key {number} ({principal.name!r}) repeats the "
                                   f"digest of {store.by_digest[hexdigest].name!r}")
            store.by_digest[hexdigest] = principal
        return store

    @classmethod
    def from_text(cls, text: str, source: str) -> KeyStore:
        document: Any
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as toml_error:
            try:
                document = json.loads(text)
            except json.JSONDecodeError:
                raise KeyFileError(f"{source}: neither TOML ({toml_error}) nor JSON") from None
        if isinstance(document, list):
            document = {"key": document}
        if not isinstance(document, dict):
            raise KeyFileError(f"{source}: expected a table of keys")
        return cls.from_document(document, source)

    @classmethod
    def from_file(cls, path: str | Path) -> KeyStore:
        stamp = _stamp(Path(path))
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise KeyFileError(f"cannot read the keys file {path}: {exc.strerror or exc}") from None
        store = cls.from_text(text, str(path))
        store.path, store._stamp = Path(path), stamp
        return store

    @classmethod
    def configured(cls, path: str | Path | None, environ: Mapping[str, str] | None = None) -> KeyStore:
        """The keys file given, else `$HAFTKHABIS_API_KEYS_FILE`, else the document in
        `$HAFTKHABIS_API_KEYS`; no keys at all is an empty store (every call is 401)."""
        env = os.environ if environ is None else environ
        if path is not None:
            return cls.from_file(path)
        if env.get(KEYS_FILE_ENV):
            return cls.from_file(env[KEYS_FILE_ENV])
        if env.get(KEYS_ENV):
            return cls.from_text(env[KEYS_ENV], f"${KEYS_ENV}")
        return cls()


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    """What tells one version of a file from another: device, inode, size, mtime."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


_FIELDS = {"name", "roles", "player", "sha256", "rate", "burst", "demo", "expires"}


def _entry(entry: Any, where: str) -> tuple[Principal, str]:
    if not isinstance(entry, dict):
        raise KeyFileError(f"{where}: expected a table")
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        raise KeyFileError(f"{where}: unknown field(s) {', '.join(unknown)} "
                           f"(expected {', '.join(sorted(_FIELDS))})")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise KeyFileError(f"{where}: `name` must be a non-empty string")
    hexdigest = entry.get("sha256")
    if not (isinstance(hexdigest, str) and len(hexdigest) == 64
            and all(c in "0123456789abcdef" for c in hexdigest.lower())):
        raise KeyFileError(f"{where} ({name!r}): `sha256` must be the key's SHA-256 digest "
                           "(64 hex digits), not the key")
    player = entry.get("player")
    roles_given = entry.get("roles", [])
    if not isinstance(roles_given, list) or not all(isinstance(r, str) for r in roles_given):
        raise KeyFileError(f"{where} ({name!r}): `roles` must be a list of strings")
    try:
        roles = frozenset(Role(r) for r in roles_given)
    except ValueError:
        raise KeyFileError(f"{where} ({name!r}): unknown role in {roles_given} "
                           f"(roles: {', '.join(r.value for r in Role)})") from None
    if player is not None:
        if not isinstance(player, str) or not player:
            raise KeyFileError(f"{where} ({name!r}): `player` must be a player's name")
        if roles:
            raise KeyFileError(f"{where} ({name!r}): a player-scoped key has no roles")
    elif not roles:
        raise KeyFileError(f"{where} ({name!r}): give `roles` or `player`")
    rate, burst = entry.get("rate"), entry.get("burst")
    if rate is not None and (not isinstance(rate, int | float) or isinstance(rate, bool) or rate < 0):
        raise KeyFileError(f"{where} ({name!r}): `rate` must be a number ≥ 0 (0: unlimited)")
    if burst is not None and (not isinstance(burst, int) or isinstance(burst, bool) or burst < 1):
        raise KeyFileError(f"{where} ({name!r}): `burst` must be an integer ≥ 1")
    demo = entry.get("demo", False)
    if not isinstance(demo, bool):
        raise KeyFileError(f"{where} ({name!r}): `demo` must be true or false")
    expires = parse_moment(entry.get("expires"), f"{where} ({name!r})")
    principal = Principal(name, roles, player, None if rate is None else float(rate), burst, demo,
                          expires)
    return principal, hexdigest.lower()


def parse_moment(value: Any, where: str) -> datetime | None:
    """An `expires` value: a TOML date or date-time, or an ISO 8601 string (UTC unless it
    says otherwise; a date is its midnight UTC)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise KeyFileError(f"{where}: `expires` must be a date or date-time like "
                               f"2027-06-30T00:00:00Z, not {value!r}") from None
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    raise KeyFileError(f"{where}: `expires` must be a date or date-time, not {type(value).__name__}")


def key_entry(name: str, key: str, roles: Iterable[str] = (), player: str | None = None,
              expires: datetime | None = None) -> str:
    """The TOML entry that configures `key` (its digest, never the key)."""
    lines = ["[[key]]", f"name = {json.dumps(name)}"]
    if player is not None:
        lines.append(f"player = {json.dumps(player)}")
    else:
        lines.append(f"roles = {json.dumps(sorted(roles))}")
    lines.append(f'sha256 = "{digest(key)}"')
    if expires is not None:
        lines.append(f"expires = {expires.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}")
    return "\n".join(lines) + "\n"


class RateLimiter:
    """A token bucket per key: `rate` requests a second on average, bursts of `burst`."""

    def __init__(self, rate: float, burst: int | None = None) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}  # key name → (tokens, when)
        self._lock = threading.Lock()

    def take(self, principal: Principal) -> float | None:
        """Spend one request of `principal`'s allowance: None when allowed, else the
        seconds until the next one is."""
        rate = self.rate if principal.rate is None else principal.rate
        if rate <= 0:
            return None
        burst = principal.burst or self.burst or max(1, int(rate * 2))
        now = time.monotonic()
        with self._lock:
            tokens, when = self._buckets.get(principal.name, (float(burst), now))
            tokens = min(float(burst), tokens + (now - when) * rate)
            if tokens >= 1.0:
                self._buckets[principal.name] = (tokens - 1.0, now)
                return None
            self._buckets[principal.name] = (tokens, now)
            return (1.0 - tokens) / rate
