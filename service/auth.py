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
```
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

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


@dataclass
class KeyStore:
    """The configured keys, by digest."""

    by_digest: dict[str, Principal] = field(default_factory=dict)
    source: str = "no keys"

    def __len__(self) -> int:
        return len(self.by_digest)

    def lookup(self, key: str) -> Principal | None:
        return self.by_digest.get(digest(key))

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
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise KeyFileError(f"cannot read the keys file {path}: {exc.strerror or exc}") from None
        return cls.from_text(text, str(path))

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


_FIELDS = {"name", "roles", "player", "sha256", "rate", "burst", "demo"}


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
    principal = Principal(name, roles, player, None if rate is None else float(rate), burst, demo)
    return principal, hexdigest.lower()


def key_entry(name: str, key: str, roles: Iterable[str] = (), player: str | None = None) -> str:
    """The TOML entry that configures `key` (its digest, never the key)."""
    lines = ["[[key]]", f"name = {json.dumps(name)}"]
    if player is not None:
        lines.append(f"player = {json.dumps(player)}")
    else:
        lines.append(f"roles = {json.dumps(sorted(roles))}")
    lines.append(f'sha256 = "{digest(key)}"')
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
