"""Ruleset inference (issue 13): crafted logs whose header says one profile while the game
was played under another, and simulated logs of every candidate profile."""

from __future__ import annotations

import orjson
import pytest

from engine import _core
from engine.infer import diff_rules, infer_lines, summarize
from engine.profiles import Profile, candidates, parse_profile
from tests.engine.inferkit import as_lines, relabelled, simulated

BUILD = "hk-server/2.4.1-rc"


def _first_violation(lines: list[tuple[bytes, str | None, int | None]], game: str) -> dict[str, object]:
    validator = _core.Validator(only={game})
    for raw, file, number in lines:
        validator.feed_line(raw, file or "-", number or 0)
    (verdict,) = [v for v in validator.finish() if v.game == game]
    return dict(verdict.violations[0])


def test_candidates_come_from_the_core_profiles() -> None:
    persian = _core.rulesets()[1]
    profiles = candidates()
    assert len(candidates("persian")) == 2 ** len(persian["option_names"]) * len(persian["modes"]) == 64
    assert len(profiles) == 66 and len(set(profiles)) == 66
    assert profiles[0] == Profile.default("bazito")
    assert candidates("persian")[0] == Profile.default("persian")
    assert parse_profile("persian:tarkesh=false").name == "persian:tarkesh=false"
    base = parse_profile("persian:mode=elimination,ace_deflect=off")
    assert parse_profile("persian:tarkesh=false", base).name == \
        "persian:mode=elimination,tarkesh=false,ace_deflect=false"
    with pytest.raises(ValueError, match="no setting 'tarkesch'"):
        parse_profile("persian:tarkesch=false")


def _fed_line_by_line(game: str, header: bytes, body: list[tuple[bytes, int]], bound: float,
                      ) -> tuple[int, object, bool]:
    """`ParsedLines.replay_bounded` as `GameRun.feed` one line at a time gives it."""
    run = _core.GameRun(game)
    found = run.feed(header, None)
    count, first = len(found), (found[0] if found else None)
    if count > bound:
        return count, first, False
    for raw, line in body:
        found = run.feed(raw, line)
        count += len(found)
        first = first or (found[0] if found else None)
        if count > bound:
            return count, first, False
    return count, first, True


def test_lines_parsed_once_replay_as_lines_fed_one_by_one() -> None:
    """Under every bound (none, the first violation, a few), with faults planted and under
    a header of another profile: the same count, first violation and end."""
    played = parse_profile("persian:tarkesh=false")
    games = relabelled(simulated(played, 12, seed=41, faults=0.5), Profile.default("persian"), BUILD)
    checked = stopped = 0
    for lines in games:
        game = orjson.loads(lines[0])["game"]
        body = [(raw, n) for n, raw in enumerate(lines[1:], 2)]
        parsed = _core.ParsedLines([raw for raw, _ in body], [n for _, n in body])
        assert len(parsed) == len(body)
        for bound in (float("inf"), 0, 2):
            expected = _fed_line_by_line(game, lines[0], body, bound)
            assert parsed.replay_bounded(game, lines[0], bound) == expected, (game, bound)
            checked += 1
            stopped += not expected[2]
    assert checked == 36 and stopped > 0
    with pytest.raises(ValueError, match="the line is"):
        _core.ParsedLines([b"{not json"], [1])


def test_tarkesh_off_under_a_header_saying_on_is_named() -> None:
    played = parse_profile("persian:tarkesh=false")
    said = Profile.default("persian")
    games = relabelled(simulated(played, 150, seed=31), said, BUILD)
    lines = as_lines(games)
    results = infer_lines(lines)
    assert len(results) == 150
    caught = [r for r in results if r.discrepancy]
    assert len(caught) >= 3, "the simulation should reach a last-card 7 in some games"
    for r in results:
        assert played in r.compliant, r.game
        if r in caught:
            assert r.header == said
            assert r.discrepancy == ["tarkesh on → off"]
            assert r.inferred == played and not r.closest_only
            # the first line contradicting the header's profile, as `validate` names it
            first = _first_violation(lines, r.game)
            contradiction = r.header_contradiction
            assert contradiction is not None
            assert (contradiction.seq, contradiction.code, contradiction.line) == \
                (first["seq"], first["code"], first["line"])
            assert r.verdict(said) is not None and not r.verdict(said).compliant  # type: ignore[union-attr]
        else:
            assert said in r.compliant and r.inferred == said
    (summary,) = summarize(results)
    assert summary.build == BUILD and summary.games == 150
    assert summary.share(played) == 1.0 and summary.share(said) < 1.0
    (finding,) = summary.findings()
    assert finding.startswith(f"{BUILD} plays persian with tarkesh off although its headers say on: "
                              f"{len(caught)} of 150 game(s)")


def test_the_closest_profile_is_named_when_none_complies() -> None:
    played = Profile.default("bazito")
    said = Profile.default("pis-yedili")
    games = relabelled(simulated(played, 60, seed=5, faults=0.6), said, "hk-server/2.3.1")
    results = infer_lines(as_lines(games))
    faulty = [r for r in results if r.closest_only]
    assert faulty, "some simulated games should carry a fault"
    for r in results:
        assert r.inferred == played, (r.game, r.inferred)
        assert r.discrepancy == ["ruleset pis-yedili → bazito"]
    for r in faulty:
        own = r.verdict(played)
        other = r.verdict(said)
        assert own is not None and other is not None and own.violations is not None
        assert other.violations is None or other.violations > own.violations
    (summary,) = summarize(results)
    assert summary.findings()[0].startswith(
        "hk-server/2.3.1 plays bazito rules although its headers say pis-yedili: 60 of 60")


def test_diff_rules_names_the_first_diverging_step() -> None:
    played = parse_profile("persian:tarkesh=false")
    games = simulated(played, 150, seed=31)
    lines = as_lines(games)
    caught = [r for r in infer_lines(as_lines(relabelled(games, Profile.default("persian"))))
              if r.discrepancy]
    game = caught[0].game
    diff = diff_rules(lines, game, "persian:tarkesh=true")
    assert diff.header == played and diff.other == Profile.default("persian")
    assert diff.own.status == "compliant" and diff.as_other.status == "violations"
    first = diff.as_other.violations[0]
    assert diff.diverges_at == first["seq"]
    own_at, other_at = diff.at(diff.diverges_at)
    assert own_at == [] and other_at
    assert diff.state_diverges_at is not None and diff.state_diverges_at <= diff.diverges_at
    same = diff_rules(lines, game, "persian:tarkesh=false")
    assert same.diverges_at is None and same.state_diverges_at is None
    assert orjson.dumps(diff.to_json())


@pytest.mark.slow
@pytest.mark.parametrize("index", range(66))
def test_inference_finds_the_generating_profile(index: int) -> None:
    """200 games of each candidate, labelled as another candidate: the generating profile
    complies with every game, and no game is said to play the label when it does not."""
    profiles = candidates()
    played = profiles[index]
    label = next(p for p in profiles[index + 1:] + profiles[:index] if p.ruleset == played.ruleset
                 and p.mode == played.mode and p.distance(played) == 1) \
        if played.ruleset == "persian" else profiles[(index + 1) % 66]
    results = infer_lines(as_lines(relabelled(simulated(played, 200, seed=100 + index), label, BUILD)))
    assert len(results) == 200
    for r in results:
        assert played in r.compliant, (r.game, r.header_contradiction)
        inferred = r.inferred
        assert inferred is not None and inferred in r.compliant
        if label not in r.compliant:
            assert r.discrepancy and inferred != label
    (summary,) = summarize(results)
    best = max(summary.share(p) for p in profiles)
    assert summary.share(played) == best == 1.0
