"""The pair audit: each signal on hand-made moments (what the engine records of them and
what the signal makes of it), the combined score on known truth (a colluding pair heads
the queue with the signals that drive it; honest tables give no case)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ingest.pairs import (
    BEHAVIOUR,
    PairData,
    PairSource,
    _Signals,
    _Universe,
    audit_pairs,
    co_seating,
    pairs_from_warehouse,
    read_pair_rows,
)
from ingest.read import connect
from tests.ingest.fairplaykit import PAIR, pair_warehouse

#: one bazito hand, four moves: sara plays 5C holding 7C (omid next, 7 cards); omid plays
#: JD declaring hearts (sara holds hearts, lale only hearts, reza none); lale plays 7H on
#: reza; reza, holding 7D, draws the total rather than put 4 on sara
TINY = b"""\
{"game":"bz-pairs","seq":0,"type":"game","format":"haftkhabis/1","ruleset":"bazito","players":["sara","omid","lale","reza"]}
{"game":"bz-pairs","seq":1,"type":"deal","hand":1,"dealer":"reza","starter":"6C","hands":{"sara":["7C","5C","KD","3H","4H","9S","QS"],"omid":["JD","2S","3S","4S","5S","6S","8S"],"lale":["AH","2H","5H","6H","7H","8H","9H"],"reza":["TD","2D","3D","4D","5D","6D","7D"]}}
{"game":"bz-pairs","seq":2,"type":"play","player":"sara","card":"5C"}
{"game":"bz-pairs","seq":3,"type":"play","player":"omid","card":"JD","suit":"H"}
{"game":"bz-pairs","seq":4,"type":"play","player":"lale","card":"7H"}
{"game":"bz-pairs","seq":5,"type":"draw","player":"reza","cards":["AC","AD"]}
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ingest.pipeline import ingest

    root = tmp_path_factory.mktemp("pairs-tiny")
    (root / "tiny.jsonl").write_bytes(TINY)
    ingest([str(root / "tiny.jsonl")], str(root / "wh"), workers=1)
    return root / "wh"


def _rows(data: PairData, signal: str) -> dict[tuple[str, str, int], tuple[float, float]]:
    """(player, other, seq) → (outcome, expected) of a signal's decisions."""
    rows = data.arrays()
    out = {}
    for r in np.flatnonzero(rows["signal"] == BEHAVIOUR.index(signal)):
        players = data.game_players[int(rows["game"][r])]
        key = (data.names[players[int(rows["actor"][r])]], data.names[players[int(rows["other"][r])]],
               int(rows["seq"][r]))
        out[key] = (float(rows["outcome"][r]), float(rows["expected"][r]))
    return out


def _groups(data: PairSource) -> dict[tuple[str, int, str, str], list[float]]:
    """(signal, game index, player, other) → (decisions, Σx, Σe, Σe(1 − e)), chunk by chunk."""
    out = {}
    for start, chunk in data.chunks():
        groups = data.group_chunk(start, start + len(chunk))
        for r in range(len(groups["signal"])):
            g = int(groups["game"][r])
            players = chunk[g]
            key = (BEHAVIOUR[int(groups["signal"][r])], start + g, data.names[players[int(groups["actor"][r])]],
                   data.names[players[int(groups["other"][r])]])
            assert key not in out
            out[key] = [float(groups[c][r]) for c in ("decisions", "outcome", "expected", "variance")]
    return out


def _all_groups(data: PairSource) -> dict[str, np.ndarray]:
    """Every chunk's sums (`group_chunk`), the games counted from the first."""
    parts = []
    for start, chunk in data.chunks():
        groups = data.group_chunk(start, start + len(chunk))
        parts.append({**groups, "game": groups["game"] + start})
    return {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}


def test_the_engine_records_what_each_mover_faced(tiny: Path) -> None:
    reader = connect(tiny)
    try:
        rows = reader.rows("SELECT seq, player, phase, playable, obliged, may_draw, next_player, next_cards,"
                           " suits_held, suit_choices FROM decisions ORDER BY seq")
    finally:
        reader.close()
    assert rows == [
        (2, "sara", "turn", ["5C", "7C"], True, True, "omid", 7, None, None),
        # hearts 4, diamonds 2; sara, after her 5C, holds every suit
        (3, "omid", "turn", ["5S", "JD"], True, True, "lale", 7, {"sara": 15, "lale": 4, "reza": 2}, 15),
        (4, "lale", "turn", ["2H", "5H", "6H", "7H", "8H", "9H", "AH"], True, True, "reza", 7, None, None),
        # bazito: drawing the total is a free choice even holding a 7
        (5, "reza", "seven", ["7D"], False, True, "sara", 6, None, None),
    ]


def test_each_signal_reads_its_moments(tiny: Path) -> None:
    reader = connect(tiny)
    try:
        data = read_pair_rows(reader).data()
        summed = pairs_from_warehouse(reader)
    finally:
        reader.close()
    # the audit's own read sums the same decisions in DuckDB
    assert _groups(data) and _same(_groups(summed), _groups(data))
    # a 7 playable and something else allowed: 1 when the total went on the next player
    assert _rows(data, "sevens_spared") == {("sara", "omid", 2): (0.0, pytest.approx(math.nan, nan_ok=True)),
                                            ("lale", "reza", 4): (1.0, pytest.approx(math.nan, nan_ok=True)),
                                            ("reza", "sara", 5): (0.0, pytest.approx(math.nan, nan_ok=True))}
    # the J's suit suits lale (1, against 1 suit in 4) and not reza (0, 1 in 4); sara holds
    # every suit, so any suit suits her: no information, no decision
    assert _rows(data, "jacks_suited") == {("omid", "lale", 3): (1.0, 0.25), ("omid", "reza", 3): (0.0, 0.25)}
    # nobody was next on one card; no 2 gave a gift
    assert _rows(data, "soft_play") == {} and _rows(data, "twos_spared") == {}


def _decision(seq: int, playable: list[str], card: str | None, *, next_cards: int = 1, obliged: bool = True,
              may_draw: bool = True) -> dict[str, object]:
    return {"game_id": "g", "players": ["ali", "bita", "cyrus"], "ruleset": "bazito", "hand": 1, "seq": seq,
            "player": "ali", "playable": playable, "obliged": obliged, "may_draw": may_draw,
            "next_player": "bita", "next_cards": next_cards, "suits_held": None, "suit_choices": None,
            "type": "play" if card else "draw", "card": card, "suit": None}


def test_soft_play_is_an_attack_held_back_from_a_player_on_one_card() -> None:
    data = PairData()
    data.add_decisions(pl.DataFrame([
        _decision(1, ["5C", "7C"], "5C"),  # held the 7 back: 1
        _decision(2, ["5C", "7C"], "7C"),  # put the total on them: 0
        _decision(3, ["AC", "5C"], "5C"),  # bazito's A skips: held back, 1
        _decision(4, ["7C"], "7C"),  # nothing else allowed (drawing is a foul): no decision
        _decision(5, ["7C"], None, obliged=False),  # a free draw instead of the 7: 1
        _decision(6, ["5C", "7C"], "5C", next_cards=3),  # not on one card: a 7 decision, not soft play
    ]))
    soft = _rows(data, "soft_play")
    assert {seq: x for (_, _, seq), (x, _) in soft.items()} == {1: 1.0, 2: 0.0, 3: 1.0, 5: 1.0}
    assert {seq: x for (_, _, seq), (x, _) in _rows(data, "sevens_spared").items()} == {6: 0.0}


def test_a_2s_gift_is_one_decision_per_candidate() -> None:
    data = PairData()
    data.add_gift("g", ["ali", "bita", "cyrus", "dara"], 1, 7, "ali", "cyrus", ["ali", "bita", "cyrus", "dara"])
    data.add_gift("g", ["ali", "bita", "cyrus", "dara"], 1, 9, "ali", "ali", ["ali", "bita"])  # no gift: skipped
    assert _rows(data, "twos_spared") == {("ali", "bita", 7): (0.0, pytest.approx(1 / 3)),
                                          ("ali", "cyrus", 7): (1.0, pytest.approx(1 / 3)),
                                          ("ali", "dara", 7): (0.0, pytest.approx(1 / 3))}
    assert data.gifts == 1


def test_co_seating_against_activity() -> None:
    data = PairData()
    # ali and bita sit together in all four games; cyrus and dara share the other seats
    for g, third in enumerate(["cyrus", "dara", "cyrus", "dara"]):
        data.add_game(f"g{g}", ["ali", "bita", third])
    universe = _Universe(data.game_players, len(data.names))
    together, chance, variance = universe.co_seating()
    pairs = {(data.names[int(k) // universe.names], data.names[int(k) % universe.names]): i
             for i, k in enumerate(universe.keys)}
    ab, ac, cd = pairs[("ali", "bita")], pairs[("ali", "cyrus")], ("cyrus", "dara") in pairs
    assert together[ab] == 4 and together[ac] == 2 and not cd
    # 12 seats; 24 ordered seat pairs spread over n_a n_b / (Σn² … ): ali + bita 4·4·24/(144 − 40)
    assert chance[ab] == pytest.approx(16 * 24 / 104) and chance[ac] == pytest.approx(8 * 24 / 104)
    # each game holds ali + bita with chance q = 6·16/104: the count's variance 4q(1 − q)
    q = 6 * 16 / 104
    assert variance[ab] == pytest.approx(4 * q * (1 - q))
    # a table of k whose q would pass 1 counts as certain (variance 0, not negative)
    big = PairData()
    for g in range(3):
        big.add_game(f"g{g}", ["ali", "bita"])
    big.add_game("g3", ["cyrus", "dara"])
    together, chance, variance = _Universe(big.game_players, len(big.names)).co_seating()
    assert (variance >= 0).all() and (chance <= 4).all()
    # the signal alone, named: ali + bita's z is (4 − 4q)/√(4q(1 − q))
    alone = co_seating(data)
    named = {(a, b): z for a, b, z in zip(alone.a, alone.b, alone.z, strict=True)}
    assert named[("ali", "bita")] == pytest.approx((4 - 4 * q) / math.sqrt(4 * q * (1 - q)))
    assert co_seating(PairData()).z.size == 0


def _report(root: Path, collusion: float, level: float = 0.05):
    reader = connect(pair_warehouse(root, collusion))
    try:
        return audit_pairs(pairs_from_warehouse(reader), level, permutations=100)
    finally:
        reader.close()


def test_a_colluding_pair_heads_the_queue_with_its_signals_and_steps(tmp_path: Path) -> None:
    report = _report(tmp_path, 1.0)
    assert [frozenset((c.a, c.b)) for c in report.cases] == [frozenset(PAIR)]
    case = report.cases[0]
    assert case.p_value <= 0.05
    # the simulator's colluders spare each other 2s and 7 totals and declare the other's suits
    assert {"twos_spared", "sevens_spared", "jacks_suited"} <= set(case.drivers)
    steps = report.to_json()["cases"][0]["steps"]
    assert {s["signal"] for s in steps} >= {"twos_spared", "sevens_spared", "jacks_suited"}
    assert all({s["player"], s["partner"]} == set(PAIR) for s in steps)
    assert all(s["replay"] == f"replay?game={s['game']}&hand={s['hand']}&seq={s['seq']}" for s in steps)


def test_honest_tables_give_no_case(tmp_path: Path) -> None:
    report = _report(tmp_path, 0.0)
    assert report.pairs_scored >= 10
    assert report.cases == []
    # the null's highest scores are spread as the scores of a whole warehouse are
    assert len(report.null_max) == 100 and min(report.null_max) < max(report.null_max)


def test_small_honest_simulations_are_flagged_at_most_at_the_level(tmp_path: Path) -> None:
    """Eight disjoint sets of 40 honest games (deterministic seeds) at level 0.05: more
    than two flagged has probability 0.6 % if the level holds."""
    reader = connect(pair_warehouse(tmp_path, 0.0, games=320, seed=31))
    try:
        rows = read_pair_rows(reader)
    finally:
        reader.close()
    games = sorted(g for g, _ in rows.games)
    assert len(games) == 320
    flagged = sum(bool(audit_pairs(rows.data(set(games[i::8])), 0.05, permutations=100, seed=i).cases)
                  for i in range(8))
    assert flagged <= 2


def test_no_decisions_no_pairs() -> None:
    empty = audit_pairs(PairData(), 0.05, permutations=50)
    assert empty.pairs_scored == 0 and empty.cases == []


def test_a_warehouse_read_in_parts_gives_the_same_audit(tmp_path: Path) -> None:
    """A big warehouse's decisions are read a share of its games at a time (the join's
    memory bounded): the audit is the one of a single read, case for case, step for step."""
    reader = connect(pair_warehouse(tmp_path, 1.0))
    try:
        whole = audit_pairs(pairs_from_warehouse(reader), 0.05, permutations=100)
        total = reader.rows("SELECT count(*) FROM decisions")[0][0]
        parted = audit_pairs(pairs_from_warehouse(reader, per_read=total // 5), 0.05, permutations=100)
    finally:
        reader.close()
    assert total > 1000  # so that per_read cuts it into 5 or 6 parts
    one, many = whole.to_json(), parted.to_json()
    assert many["cases"] and [c["players"] for c in many["cases"]] == [c["players"] for c in one["cases"]]
    assert _same(many, one)


def _same(a: object, b: object) -> bool:
    """Equal, floats to 1e-9 (a sum's order may differ between reads)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-9, abs=1e-12, nan_ok=True)
    return a == b


def test_the_audits_read_sums_what_the_per_row_read_gives(tmp_path: Path) -> None:
    """`pairs_from_warehouse` sums each signal's decisions in DuckDB per (game, actor,
    other) and keeps only the first favours for the steps; the per-row read
    (`read_pair_rows`: a row a decision, the signals made in polars) must give the same
    sums and the same audit, score for score, case for case, step for step."""
    reader = connect(pair_warehouse(tmp_path, 1.0))
    try:
        rows = read_pair_rows(reader).data()
        summed = pairs_from_warehouse(reader)
    finally:
        reader.close()
    assert len(rows.arrays()["signal"]) > 5_000
    assert all(rows.decisions().values()) and rows.decisions() == summed.decisions()
    assert rows.gifts == summed.gifts > 0
    assert rows.game_count() == summed.game_count() and rows.names == summed.names
    a, b = rows.groups(), _all_groups(summed)
    for column in ("signal", "game", "actor", "other", "decisions", "outcome"):
        assert np.array_equal(a[column], b[column]), column
    for column in ("expected", "variance"):
        assert np.allclose(a[column], b[column], rtol=1e-12, atol=1e-12, equal_nan=True), column
    one = audit_pairs(rows, 0.05, permutations=100).to_json()
    other = audit_pairs(summed, 0.05, permutations=100).to_json()
    assert one["cases"] and one["cases"][0]["steps"]
    assert _same(other, one)


def test_the_audit_in_chunks_of_games_is_the_audit_in_one(tmp_path: Path) -> None:
    """The scores read a chunk of games at a time, each chunk adding to every
    relabelling's sums per pair; the relabellings draw every game's seats as one draw over
    all games would. Chunks of 7 games (persian tables of 2 to 4 seats, so every chunk holds games
    of several sizes and a size's games span chunks) give the audit of one chunk, score
    for score, null for null, step for step, read from the warehouse or held in memory."""
    reader = connect(pair_warehouse(tmp_path, 0.6, games=90, seed=5, players=(2, 4), ruleset="persian"))
    try:
        whole = pairs_from_warehouse(reader)
        chunked = pairs_from_warehouse(reader, chunk_games=7)
        rows = read_pair_rows(reader)
    finally:
        reader.close()
    with whole, chunked:
        assert whole.game_count() == 90 and len(list(whole.chunks())) == 1
        assert len(list(chunked.chunks())) == 13
        sizes = [{len(p) for p in chunk} for _, chunk in chunked.chunks()]
        assert sum(len(s) > 1 for s in sizes) >= 6 and set().union(*sizes) == {2, 3, 4}
        one = audit_pairs(whole, 0.2, permutations=60, seed=3)
        many = audit_pairs(chunked, 0.2, permutations=60, seed=3)
        assert one.cases and one.pairs_scored >= 10
        assert _same(many.to_json(), one.to_json())
        assert many.null_max == pytest.approx(one.null_max, rel=1e-12)
        # the in-memory data in chunks of 7 too
        data = rows.data()
        data.chunk_games = 7
        assert len(list(data.chunks())) == 13
        assert _same(audit_pairs(data, 0.2, permutations=60, seed=3).to_json(), one.to_json())
    # the read's temporary folders go with it
    assert not whole.root.exists() and not chunked.root.exists()


def test_relabellings_summed_in_turns_are_the_audit_in_one(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """When pairs × relabellings outgrow `SUMS_MEMORY`, the relabellings' sums are made a
    few at a time, each turn a pass over the chunks: the same audit, null for null."""
    import ingest.pairs as pairs_module

    reader = connect(pair_warehouse(tmp_path, 0.6, games=90, seed=5, players=(2, 4), ruleset="persian"))
    try:
        chunked = pairs_from_warehouse(reader, chunk_games=7)
    finally:
        reader.close()
    with chunked:
        passes: list[int] = []
        chunks = chunked.chunks

        def counted() -> Iterator[tuple[int, list[list[int]]]]:
            passes.append(1)
            return chunks()

        monkeypatch.setattr(chunked, "chunks", counted)
        one = audit_pairs(chunked, 0.2, permutations=60, seed=3)
        once = len(passes)  # every labelling in one pass (and the seating's own reads)
        passes.clear()
        monkeypatch.setattr(pairs_module, "SUMS_MEMORY", 1)  # one labelling a turn
        turns = audit_pairs(chunked, 0.2, permutations=60, seed=3)
        assert len(passes) == once + 60  # the players as seated, then each relabelling
        passes.clear()
        monkeypatch.setattr(pairs_module, "SUMS_MEMORY", 7 * pairs_module._Sums.size(64, len(chunked.names)))
        sevens = audit_pairs(chunked, 0.2, permutations=60, seed=3)
    assert one.cases and once + 1 < len(passes) < once + 60
    for other in (turns, sevens):
        assert _same(other.to_json(), one.to_json())
        assert other.null_max == pytest.approx(one.null_max, rel=1e-12)


def test_scores_summed_per_seat_pair_are_the_per_decision_sums(tmp_path: Path) -> None:
    """The scores read the decisions summed per (signal, game, actor, other); a
    relabelling moves every decision of such a sum together, so under any relabelling each
    pair's decisions, Σx, Σe and z are those of the decisions counted one by one."""
    reader = connect(pair_warehouse(tmp_path, 0.6))
    try:
        data = read_pair_rows(reader).data()
    finally:
        reader.close()
    universe = _Universe(data.game_players, len(data.names))
    signals = _Signals(data.groups(), universe)
    pairs = len(universe.keys)
    index = {int(k): p for p, k in enumerate(universe.keys)}
    rows = data.arrays()
    assert len(signals.outcome) < len(rows["outcome"])  # the sums do sum
    rng = np.random.default_rng(7)
    for labels in (universe.identity(), universe.relabelling(rng), universe.relabelling(rng)):
        count, observed, expected, z = signals.scores(universe, labels)
        # one decision at a time: who decides about whom once the game's seats are relabelled
        base = universe.offsets[rows["game"]]
        actor = universe.slots[base + labels[base + rows["actor"]]]
        other = universe.slots[base + labels[base + rows["other"]]]
        made: dict[tuple[int, int], list[float]] = {}
        for s, a, x in zip(rows["signal"].tolist(), actor.tolist(), rows["outcome"].tolist(), strict=True):
            made.setdefault((s, a), []).append(x)
        sums = np.zeros((4, len(BEHAVIOUR), pairs))
        for r, (s, a, b) in enumerate(zip(rows["signal"].tolist(), actor.tolist(), other.tolist(), strict=True)):
            x, e = float(rows["outcome"][r]), float(rows["expected"][r])
            if BEHAVIOUR[s] in ("sevens_spared", "soft_play"):
                e = sum(made[(s, a)]) / len(made[(s, a)])
            p = index[min(a, b) * universe.names + max(a, b)]
            sums[:, s, p] += (1.0, x, e, e * (1 - e))
        assert np.array_equal(count, sums[0]) and np.array_equal(observed, sums[1])
        assert np.allclose(expected, sums[2], rtol=1e-12, atol=1e-9)
        known = sums[3] >= 2.0 - 1e-9
        assert np.array_equal(~np.isnan(z), known)
        sign = np.asarray([-1.0, -1.0, 1.0, 1.0])[:, None]
        naive = sign * (sums[1] - sums[2]) / np.sqrt(np.where(known, sums[3], 1.0))
        assert np.allclose(z[known], naive[known], rtol=1e-9, atol=1e-9)
        assert known.sum() > 20
