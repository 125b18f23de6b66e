"""Simulated logs for the inference and what-if tests: games of one profile, optionally
relabelled (the header saying another profile, a server build)."""

from __future__ import annotations

import orjson

from engine.infer import Line
from engine.profiles import Profile
from engine.simulate import SimConfig, simulate

PLAYERS = {"bazito": (4, 4), "persian": (2, 3), "pis-yedili": (2, 3)}


def simulated(profile: Profile, games: int, seed: int, *, faults: float = 0.0,
              stock: float = 0.5, hands: int | None = 1) -> list[list[bytes]]:
    """`games` games played under `profile`, each as its lines."""
    config = SimConfig(profile.ruleset, games=games, seed=seed, players=PLAYERS[profile.ruleset],
                       options=profile.option_map or None, mode=profile.mode if profile.ruleset == "persian" else None,
                       match={"hands": hands} if hands else None, fault_rate=faults, stock_in_deal=stock)
    return [game.lines for game in simulate(config)]


def relabelled(games: list[list[bytes]], profile: Profile | None, build: str | None = None) -> list[list[bytes]]:
    """The same games with headers saying `profile` (None: as played) and `build`."""
    out = []
    for lines in games:
        new = []
        for raw in lines:
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                new.append(raw)
                continue
            if isinstance(obj, dict) and obj.get("seq") == 0 and obj.get("type") == "game":
                if profile is not None:
                    obj = profile.relabel(obj)
                if build is not None:
                    obj["meta"] = {**(obj.get("meta") or {}), "server_build": build}
                raw = orjson.dumps(obj)
            new.append(raw)
        out.append(new)
    return out


def as_lines(games: list[list[bytes]], file: str = "sim.jsonl") -> list[Line]:
    """The games one after another, as one file's numbered lines."""
    flat = [raw for lines in games for raw in lines]
    return [(raw, file, i) for i, raw in enumerate(flat, 1)]
