"""Simulated games replay compliant, conserve every card at every step, and are
reproducible: the engine's random-simulation test (style.md, "Tests")."""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Iterable

import orjson
import pytest
from typer.testing import CliRunner

from cli.app import app
from engine import _core
from engine.rulesets import PERSIAN_OPTIONS
from engine.simulate import SimConfig, SimulatedGame, simulate, simulate_bytes, simulate_seatings
from tests.corekit import drain, validate_paths

# rules.md's points tables and winning-card multipliers, written out again on purpose
POINTS = {
    "bazito": {"7": 0, "J": 20, "A": 11, "K": 4, "Q": 3, "T": 10},
    "persian": {"7": 0, "J": 20, "A": 14, "K": 13, "Q": 12, "T": 10},
    "pis-yedili": {"J": 25, "7": 20, "A": 15, "K": 10, "Q": 10, "T": 10},
}
MULTIPLIERS = {"bazito": {"J": 2}, "persian": {"J": 2}, "pis-yedili": {"7": 3, "J": 2}}


def value(ruleset: str, cards: Iterable[str]) -> int:
    table = POINTS[ruleset]
    return sum(table[c[0]] if c[0] in table else int(c[0]) for c in cards)


def check_scores(games: list[SimulatedGame], verdicts: dict[str, _core.Verdict]) -> int:
    """Recompute every scored hand from the cards left and the winner's last card."""
    checked = 0
    for game in games:
        verdict = verdicts[game.game]
        ruleset = verdict.ruleset
        assert ruleset is not None and verdict.settings() is not None
        last_play: dict[tuple[int, str], str] = {}
        hand = 0
        for raw in game.lines:
            obj = orjson.loads(raw)
            if obj["type"] == "deal":
                hand = obj["hand"]
            elif obj["type"] == "play":
                last_play[hand, obj["player"]] = obj["card"]
        for record in verdict.hand_records():
            outcome = record["outcome"]
            if outcome is None or outcome["scores"] is None:
                continue
            values = {p: value(ruleset, cards) for p, cards in record["cards_left"].items()}
            if outcome["reason"] == "blocked":
                lowest = min(values.values())
                assert sorted(outcome["winners"]) == sorted(p for p, v in values.items() if v == lowest)
                expected = {p: 0 if v == lowest else v for p, v in values.items()}
            else:
                (winner,) = outcome["winners"]
                card = last_play[record["hand"], winner]
                times = MULTIPLIERS[ruleset].get(card[0], 1)
                expected = {p: 0 if p == winner else v * times for p, v in values.items()}
            assert outcome["scores"] == expected, (game.game, record["hand"], record["cards_left"])
            checked += 1
    return checked


def replay(games: Iterable[SimulatedGame]) -> dict[str, _core.Verdict]:
    """Feed every line to a Validator, checking after each one that the table holds the
    whole pack (hands + pile + stock + laid-aside 7s): each game's lines also go, in seq
    order and without a shipper's identical retries, to a run of its own whose card count
    is read after every line."""
    validator = _core.Validator()
    number = 0
    for game in games:
        run = _core.GameRun(game.game)
        fed: dict[int, bytes] = {}
        for raw in game.lines:
            number += 1
            validator.feed_line(raw, "sim.jsonl", number)
            seq = orjson.loads(raw)["seq"]
            if seq in fed:  # a retry: the validator drops it, so the run never sees it
                assert fed[seq] == raw, f"{game.game} line {number}: a different line at seq {seq}"
                continue
            fed[seq] = raw
            assert run.feed(raw, number) == [], f"{game.game} line {number}"
            count = run.card_count()
            if count is not None and run.hand_open:
                assert count == 52 * run.settings()["decks"], (
                    f"{game.game} line {number}: {count} cards on the table")
    verdicts, errors = drain(validator)
    assert errors == []
    assert len({v.game for v in verdicts}) == len(verdicts)
    return {v.game: v for v in verdicts}


def assert_compliant(verdicts: dict[str, _core.Verdict], games: list[SimulatedGame]) -> None:
    aborted = {g.game for g in games if g.aborted is not None}
    for verdict in verdicts.values():
        expected = "aborted" if verdict.game in aborted else "compliant"
        assert verdict.status == expected, (verdict.game, verdict.violations)
    # an aborted game is a guard against endless hands, never routine
    assert len(aborted) <= max(1, len(games) // 100)


@pytest.mark.parametrize("chunk", range(4))
def test_bazito_games_replay_compliant(chunk: int) -> None:
    games = list(simulate(SimConfig("bazito", games=500, seed=1000 + chunk)))
    verdicts = replay(games)
    assert len(verdicts) == 500
    assert_compliant(verdicts, games)
    # every hand was decided and claimed; bazito never blocks
    assert all(h["reason"] == "out" for v in verdicts.values() for h in v.hands or [])
    assert check_scores(games, verdicts) >= 500


@pytest.mark.parametrize("mode", ["points", "elimination"])
def test_persian_every_option_combination(mode: str) -> None:
    names = sorted(PERSIAN_OPTIONS)
    games: list[SimulatedGame] = []
    counts: set[int] = set()
    for number, values in enumerate(itertools.product((False, True), repeat=len(names))):
        options = dict(zip(names, values, strict=True))
        players = 2 + number % 13
        counts.add(players)
        config = SimConfig("persian", games=2, seed=number, options=options, mode=mode,
                           players=(players, players))
        games.extend(simulate(config))
    assert counts == set(range(2, 15))
    verdicts = replay(games)
    assert len(verdicts) == 64
    assert_compliant(verdicts, games)
    assert check_scores(games, verdicts) >= (64 if mode == "points" else 0)
    for verdict in verdicts.values():
        header = verdict.header()
        assert header is not None and header["mode"] in (mode, None)
        if mode == "elimination":
            assert verdict.totals is None
            assert all(h["order"] and h["reason"] == "elimination" for h in verdict.hands or [])


def test_persian_random_tables() -> None:
    games = list(simulate(SimConfig("persian", games=60, seed=77)))
    verdicts = replay(games)
    assert_compliant(verdicts, games)
    check_scores(games, verdicts)
    sizes = {len(header["players"]) for v in verdicts.values() if (header := v.header()) is not None}
    assert len(sizes) >= 8  # the default range is 2-14
    assert any((settings := v.settings()) is not None and settings["decks"] == 2
               for v in verdicts.values())


def test_pis_yedili_every_table_size_and_blocked_hands() -> None:
    games: list[SimulatedGame] = []
    for players in range(2, 8):
        games.extend(simulate(SimConfig("pis-yedili", games=25, seed=players,
                                        players=(players, players))))
    verdicts = replay(games)
    assert len(verdicts) == 150
    assert_compliant(verdicts, games)
    # blocked hands happen and are scored by hand value, no multiplier (check_scores)
    blocked = [h for v in verdicts.values() for h in v.hands or [] if h["reason"] == "blocked"]
    assert len(blocked) >= 20
    assert all(h["scores"] and min(h["scores"].values()) == 0 for h in blocked)
    assert check_scores(games, verdicts) >= 150


def test_same_seed_same_bytes() -> None:
    for config in (
        SimConfig("bazito", games=30, seed=5, fault_rate=0.3),
        SimConfig("persian", games=10, seed=5, fault_rate=0.3),
        SimConfig("pis-yedili", games=15, seed=5, fault_rate=0.3),
    ):
        first = simulate_bytes(config)
        assert first == simulate_bytes(config)
        assert first != simulate_bytes(SimConfig(config.ruleset, games=config.games, seed=6))


def test_header_honours_the_settings() -> None:
    config = SimConfig("persian", games=12, seed=3, players=(5, 6),
                       options={"tarkesh": False, "eight_bonus_optional": True},
                       mode="points", match={"target": 120}, stock_in_deal=1.0)
    for game in simulate(config):
        header = orjson.loads(game.lines[0])
        assert header["options"] == {"tarkesh": False, "eight_bonus_optional": True}
        assert header["match"] == {"target": 120}
        assert 5 <= len(header["players"]) <= 6
        assert header["meta"]["server_build"].startswith("hk-server/")
        deals = [orjson.loads(line) for line in game.lines if b'"type":"deal"' in line]
        assert deals and all("stock" in deal for deal in deals)


def test_bad_settings_are_refused() -> None:
    for kwargs in (
        {"ruleset": "bazito", "players": (3, 4)},
        {"ruleset": "pis-yedili", "options": {"tarkesh": True}},
        {"ruleset": "persian", "options": {"no_such_rule": True}},
        {"ruleset": "bazito", "mode": "elimination"},
        {"ruleset": "persian", "mode": "elimination", "match": {"target": 100}},
        {"ruleset": "persian", "fault_rate": 1.5},
        {"ruleset": "whist"},
    ):
        with pytest.raises(ValueError):
            SimConfig(**kwargs)  # type: ignore[arg-type]


def test_cli_writes_gzip_and_manifest(tmp_path: pytest.TempPathFactory) -> None:
    out = tmp_path / "run.jsonl.gz"  # type: ignore[operator]
    args = ["simulate", "--ruleset", "pis-yedili", "--games", "20", "--seed", "9",
            "--players", "3-5", "--faults", "0.5", "--out", str(out), "--stock-in-deal", "0.3"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    assert data[:2] == b"\x1f\x8b"
    lines = gzip.decompress(data).splitlines()
    manifest = orjson.loads((tmp_path / "run.jsonl.gz.faults.json").read_bytes())  # type: ignore[operator]
    assert manifest and {"game", "seq", "kind", "expected_codes"} <= set(manifest[0])
    assert CliRunner().invoke(app, args).exit_code == 0
    assert gzip.decompress(out.read_bytes()).splitlines() == lines  # deterministic
    verdicts, errors = validate_paths([str(out)])
    assert len(verdicts) == 20
    assert {e["line"] for e in errors} == {f["file_line"] for f in manifest if f["record"] == "error"}


def test_cli_refuses_bad_arguments() -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["simulate", "-r", "bazito", "--players", "2-3"]).exit_code == 2
    assert runner.invoke(app, ["simulate", "-r", "persian", "--options", "tarkesh"]).exit_code == 2
    assert runner.invoke(app, ["simulate", "-r", "persian", "--match", "rounds=3"]).exit_code == 2
    assert runner.invoke(app, ["simulate", "-r", "bazito", "--faults", "0.1"]).exit_code == 2
    result = runner.invoke(app, ["simulate", "-r", "bazito", "--games", "2", "--seed", "4"])
    assert result.exit_code == 0
    assert sum(1 for line in result.stdout.splitlines() if '"type":"game"' in line) == 2


def test_shuffle_biases_are_checked_and_planted() -> None:
    import random

    from engine.rulesets import RULESETS
    from engine.simulate import ShuffleBias, deal_hands

    for bad in ({"kind": "loaded"}, {"kind": "clock_seed", "rate": 1.5}, {"kind": "stuck_card", "card": "1X"}):
        with pytest.raises(ValueError):
            ShuffleBias(**bad)  # type: ignore[arg-type]
    rules, seats = RULESETS["bazito"], ("a", "b", "c", "d")
    special = {r for r, e in rules.effects.items() if e != "plain"}
    rng = random.Random(1)
    fair = sum(sum(c[0] in special for c in deal_hands(rng, rules, seats, 1)[0]["b"]) for _ in range(400))
    rigged = sum(sum(c[0] in special for c in deal_hands(rng, rules, seats, 1, ShuffleBias("extra_special", seat=1))[0]["b"])
                 for _ in range(400))
    assert rigged - fair > 300  # one more special card in (nearly) every deal
    hands, deck = deal_hands(rng, rules, seats, 1, ShuffleBias("stuck_card", card="QH"))
    assert deck[0] == "QH" and all("QH" not in h for h in hands.values())
    one = random.Random(5)
    first = deal_hands(one, rules, seats, 1, ShuffleBias("clock_seed", seeds=1))
    assert deal_hands(one, rules, seats, 1, ShuffleBias("clock_seed", seeds=1)) == first


def test_colluders_need_a_pool_that_seats_them() -> None:
    with pytest.raises(ValueError):
        SimConfig("bazito", names=("a", "b", "c"), colluders=("a", "b"), collusion=0.5)
    with pytest.raises(ValueError):
        SimConfig("bazito", names=("a", "b", "c", "d"), colluders=("a", "b"), collusion=2.0)


def test_a_seeking_pair_shares_more_tables() -> None:
    """`seeking`: tables of 4 drawn from 6 names seat a given pair together in 6 of 15
    draws; a pair who always seek each other sit together whenever one of them is drawn
    (14 of 15 tables)."""
    names = ("sara", "omid", "lale", "reza", "neda", "kian")

    def together(seeking: float) -> int:
        config = SimConfig("bazito", games=150, seed=4, match={"hands": 1}, names=names,
                           colluders=("sara", "omid"), seeking=seeking)
        return sum({"sara", "omid"} <= set(orjson.loads(game.lines[0])["players"]) for game in simulate(config))

    honest, seeking = together(0.0), together(1.0)
    assert 35 <= honest <= 85  # Binomial(150, 0.4): mean 60, sd 6
    assert seeking >= 130  # Binomial(150, 14/15): mean 140, sd 3
    # the seatings alone (the co-seating bench) are drawn by the same function
    tables = list(simulate_seatings(SimConfig("bazito", games=150, seed=4, names=names,
                                              colluders=("sara", "omid"), seeking=1.0)))
    assert len(tables) == 150 and all(len(set(t)) == len(t) >= 2 for t in tables)
    assert sum({"sara", "omid"} <= set(t) for t in tables) >= 130
    with pytest.raises(ValueError, match="colluders"):
        SimConfig("bazito", seeking=0.5)
    with pytest.raises(ValueError, match="seeking"):
        SimConfig("bazito", names=names, colluders=("sara", "omid"), seeking=1.5)
