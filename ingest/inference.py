"""Which ruleset profile each server build plays, and the what-if at a warehouse game's
step: plain functions of the warehouse reader (`ingest.read`), which the Compliance page's
auditor panel and the Replay page ask (`dashboards.cache` caches them), and the service's
`rules_changed` alert asks of a build's newest games.

Inference samples the newest games of each server build (`ingest.queries`' view
`inference_sample`, from `games.server_build`) and replays each under every candidate
profile (`engine.infer`); the what-if is `engine.whatif.what_if` over a game's raw lines.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from engine.infer import GameInference, infer_lines, summarize
from engine.whatif import WhatIf, what_if
from ingest import read


@dataclass(frozen=True, slots=True)
class BuildInference:
    """Per build: profiles × share of games compliant; the findings; one row per game."""

    shares: pl.DataFrame  # server_build, profile, games, compliant, share, in_headers
    findings: list[str]
    games: pl.DataFrame  # game_id, server_build, header, inferred, discrepancy, complies_with, contradiction, seq
    sampled: int


#: a game's raw line as the warehouse stored it: (line, file, line number)
Line = tuple[bytes, str | None, int | None]


def infer_sample(lines: Sequence[Line], builds: Mapping[str, str]) -> list[GameInference]:
    """Infer the rules of the games `builds` names (game → its warehouse `server_build`)
    from their stored `lines`: one `GameInference` each, under the warehouse's build (the
    header's meta, as ingested), which is the one aggregated. The Compliance page's panel
    and the service's `rules_changed` alert (`service.alerts`) both ask this."""
    return [dataclasses.replace(r, build=builds.get(r.game, r.build))
            for r in infer_lines(lines, games=list(builds))]


def infer_builds(reader: read.Reader, flt: read.GameFilter, per_build: int) -> BuildInference:
    """Infer the rules of the newest `per_build` games of each build the filter keeps."""
    where, params = flt.where("g")
    rows = reader.rows(f"""
        SELECT s.game_id, s.server_build FROM inference_sample s JOIN games g USING (game_id)
        WHERE {where} AND s.build_rank <= ? ORDER BY s.server_build, s.build_rank""", [*params, per_build])
    builds = {game: build for game, build in rows}
    lines: list[Line] = []
    if builds:
        events = reader.rows(
            "SELECT raw, file, line FROM events WHERE game_id IN (SELECT unnest(?::VARCHAR[])) "
            "ORDER BY game_id, ordinal", [list(builds)])
        lines = [(raw.encode("utf-8"), file, line) for raw, file, line in events]
    results = infer_sample(lines, builds)
    summaries = summarize(results)
    share_rows: list[dict[str, Any]] = []
    findings: list[str] = []
    for summary in summaries:
        findings += summary.findings()
        for profile, compliant, share in summary.table(12):
            share_rows.append({"server_build": summary.build, "profile": profile.name, "games": summary.games,
                               "compliant": compliant, "share": share, "in_headers": summary.headers[profile]})
    game_rows = []
    for r in results:
        contradiction = r.header_contradiction
        game_rows.append({
            "game_id": r.game, "server_build": r.build,
            "header": r.header.name if r.header else None,
            "inferred": (r.inferred.name if r.inferred else None),
            "closest_only": r.closest_only,
            "discrepancy": ", ".join(r.discrepancy),
            "complies_with": len(r.compliant),
            "contradiction": (f"{contradiction.code}: {contradiction.message}" if contradiction else None),
            "seq": contradiction.seq if contradiction else None,
        })
    shares = pl.DataFrame(share_rows, schema={"server_build": pl.String, "profile": pl.String, "games": pl.Int64,
                                              "compliant": pl.Int64, "share": pl.Float64, "in_headers": pl.Int64})
    games = pl.DataFrame(game_rows, schema={
        "game_id": pl.String, "server_build": pl.String, "header": pl.String, "inferred": pl.String,
        "closest_only": pl.Boolean, "discrepancy": pl.String, "complies_with": pl.Int64,
        "contradiction": pl.String, "seq": pl.Int64})
    return BuildInference(shares, findings, games, len(results))


def game_what_if(reader: read.Reader, game: str, seq: int, moves: Sequence[str],
                 viewer: str | None = None) -> WhatIf:
    """`engine.whatif.what_if` over a warehouse game's raw lines, in `viewer`'s view."""
    return what_if(read.game_lines(reader, game), game, seq, list(moves), viewer)
