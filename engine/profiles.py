"""Ruleset profiles as replay candidates: a ruleset with every option and the mode set, its
name (`persian:mode=elimination,tarkesh=false`), and a header rewritten to it.

The option names, their defaults and the modes come from the core's profile data
(`engine._core.rulesets()`, read from `engine/core/haftkhabis-core/profiles/*.toml`); this
module keeps no second copy of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from engine import _core

POINTS = "points"
_TRUE = ("true", "on", "1", "yes")
_FALSE = ("false", "off", "0", "no")


@cache
def ruleset_infos() -> dict[str, _core.RulesetInfo]:
    """The core's profiles by name, in the contract's order."""
    return {info["name"]: info for info in _core.rulesets()}


@dataclass(frozen=True, slots=True)
class Profile:
    """A ruleset with each of its options set and a mode: what a header can say.

    `options` holds every option of the ruleset, in the profile's order."""

    ruleset: str
    mode: str = POINTS
    options: tuple[tuple[str, bool], ...] = ()

    @classmethod
    def default(cls, ruleset: str) -> Profile:
        info = _info(ruleset)
        return cls(ruleset, POINTS, tuple((n, info["options"][n]) for n in info["option_names"]))

    @classmethod
    def of_settings(cls, settings: Mapping[str, Any]) -> Profile:
        """The profile of a header as the core read it (`GameRun.settings()`)."""
        ruleset = settings["ruleset"]
        info = _info(ruleset)
        given = settings.get("options") or {}
        return cls(ruleset, settings.get("mode") or POINTS,
                   tuple((n, bool(given.get(n, info["options"][n]))) for n in info["option_names"]))

    @property
    def option_map(self) -> dict[str, bool]:
        return dict(self.options)

    @property
    def name(self) -> str:
        """The ruleset, then what differs from its defaults: `persian`,
        `persian:tarkesh=false`, `persian:mode=elimination,ace_deflect=false`."""
        defaults = _info(self.ruleset)["options"]
        parts = [f"mode={self.mode}"] if self.mode != POINTS else []
        parts += [f"{n}={'true' if v else 'false'}" for n, v in self.options if defaults[n] != v]
        return self.ruleset + (":" + ",".join(parts) if parts else "")

    def __str__(self) -> str:
        return self.name

    def differences(self, other: Profile) -> list[str]:
        """What changes from this profile to `other`, in words: `tarkesh on → off`,
        `mode points → elimination`, `ruleset persian → bazito`."""
        if self.ruleset != other.ruleset:
            return [f"ruleset {self.ruleset} → {other.ruleset}"]
        out = [f"mode {self.mode} → {other.mode}"] if self.mode != other.mode else []
        theirs = other.option_map
        out += [f"{n} {_word(v)} → {_word(theirs[n])}" for n, v in self.options if theirs.get(n) != v]
        return out

    def distance(self, other: Profile) -> int:
        """How many settings differ (a ruleset change counts more than any option)."""
        if self.ruleset != other.ruleset:
            return 100
        theirs = other.option_map
        return (self.mode != other.mode) + sum(theirs.get(n) != v for n, v in self.options)

    def header_fields(self) -> dict[str, Any]:
        """The header fields that state this profile: `ruleset`, and for a ruleset with
        options or modes every option and the mode, written out."""
        info = _info(self.ruleset)
        fields: dict[str, Any] = {"ruleset": self.ruleset}
        if info["option_names"]:
            fields["options"] = dict(self.options)
        if len(info["modes"]) > 1:
            fields["mode"] = self.mode
        return fields

    def relabel(self, header: Mapping[str, Any]) -> dict[str, Any]:
        """`header` (a `game` line's object) saying this profile instead; the players,
        decks, match, meta and everything else as written."""
        out = {k: v for k, v in header.items() if k not in ("ruleset", "options", "mode")}
        out.update(self.header_fields())
        return out


def _word(value: bool | None) -> str:
    return "on" if value else "off"


def _info(ruleset: str) -> _core.RulesetInfo:
    infos = ruleset_infos()
    if ruleset not in infos:
        raise ValueError(f"unknown ruleset {ruleset!r} (known: {', '.join(infos)})")
    return infos[ruleset]


@cache
def candidates(ruleset: str | None = None) -> tuple[Profile, ...]:
    """Every profile a log can be replayed under: each ruleset, and for one with options
    every combination of them in each of its modes. Within a ruleset the defaults come
    first, then by how many settings differ from them (ties in option order)."""
    out: list[Profile] = []
    for name, info in ruleset_infos().items():
        if ruleset is not None and name != ruleset:
            continue
        names = info["option_names"]
        default = Profile.default(name)
        ruleset_profiles = [
            Profile(name, mode, tuple(zip(names, values, strict=True)))
            for mode in info["modes"]
            for values in itertools.product((True, False), repeat=len(names))
        ]
        ruleset_profiles.sort(key=lambda p: (default.distance(p), p.mode != POINTS,
                                             [v != info["options"][n] for n, v in p.options][::-1]))
        out.extend(ruleset_profiles)
    return tuple(out)


def parse_profile(text: str, base: Profile | None = None) -> Profile:
    """`persian`, `persian:tarkesh=false`, `persian:mode=elimination,ace_deflect=off`.

    Settings not named come from `base` when it is of the same ruleset (so `--as
    persian:tarkesh=false` against a persian header changes that one option), else from the
    ruleset's defaults. ValueError names what is wrong."""
    ruleset, _, rest = text.strip().partition(":")
    ruleset = ruleset.strip()
    info = _info(ruleset)
    start = base if base is not None and base.ruleset == ruleset else Profile.default(ruleset)
    mode, options = start.mode, start.option_map
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = (s.strip() for s in item.partition("="))
        word = value.lower()
        if key == "mode":
            if value not in info["modes"]:
                raise ValueError(f"{ruleset} has no mode {value!r} (modes: {', '.join(info['modes'])})")
            mode = value
        elif key in options:
            if not sep or word not in _TRUE + _FALSE:
                raise ValueError(f"option {key} wants true or false, got {item!r}")
            options[key] = word in _TRUE
        else:
            known = ", ".join(["mode", *info["option_names"]])
            raise ValueError(f"{ruleset} has no setting {key!r} (known: {known})")
    return Profile(ruleset, mode, tuple((n, options[n]) for n in info["option_names"]))
