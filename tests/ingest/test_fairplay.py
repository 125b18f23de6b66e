"""The deal audit on known truth: fair shuffles are not flagged above the level, each
planted bias is found, and the warehouse's deal lines are what the audit reads."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from engine.cards import RANKS, SUITS
from engine.simulate import ShuffleBias, simulate_deals
from ingest.fairplay import (
    NOT_ENOUGH,
    audit_deals,
    deals_from_records,
    deals_from_warehouse,
    hypergeom_sum_pmf,
)
from ingest.pairs import audit_pairs, pairs_from_warehouse
from tests.ingest.fairplaykit import STUCK, rigged_warehouse


def _audit(ruleset: str, n: int, seed: int, bias: ShuffleBias | None = None, **kw: int):
    deals = deals_from_records(simulate_deals(ruleset, n, seed=seed, bias=bias, **kw), ruleset=ruleset)
    return audit_deals(deals, 0.01, intervals=False)


def test_the_exact_sum_is_the_convolved_hypergeometric() -> None:
    one = stats.hypergeom(52, 24, 7).pmf(np.arange(8))
    assert np.allclose(hypergeom_sum_pmf(52, 24, 1), one)
    assert np.allclose(hypergeom_sum_pmf(52, 24, 3), np.convolve(np.convolve(one, one), one))
    pmf = hypergeom_sum_pmf(104, 48, 500)
    assert pmf.sum() == pytest.approx(1.0)
    assert (np.arange(len(pmf)) * pmf).sum() == pytest.approx(500 * 7 * 48 / 104, rel=1e-9)


@pytest.mark.parametrize("ruleset", ["bazito", "persian", "pis-yedili"])
def test_fair_shuffles_are_flagged_at_most_at_the_level(ruleset: str) -> None:
    # 30 fair audits at 1 %: three or more flagged has probability 0.3 % if the level holds
    flagged = sum(bool(_audit(ruleset, 300, seed).findings) for seed in range(30))
    assert flagged <= 2


def test_an_extra_special_card_for_one_seat_is_found_at_that_seat() -> None:
    report = _audit("bazito", 1500, 1, ShuffleBias("extra_special", rate=0.5, seat=2))
    found = {(t.family, t.scope.get("seat")) for t in report.findings}
    assert ("hand.special", 2) in found
    seat = next(t for t in report.findings if t.family == "hand.special" and t.scope.get("seat") == 2)
    assert seat.ci_low is not None and seat.ci_low <= 0.5 <= seat.ci_high
    assert not any(t.scope.get("seat") in (0, 1, 3) for t in report.findings)


def test_a_stuck_card_is_found_at_the_bottom_of_the_stock() -> None:
    report = _audit("persian", 400, 2, ShuffleBias("stuck_card", rate=0.3, card="QH"))
    stuck = [t for t in report.findings if t.family == "stock.position"]
    assert [t.scope["card"] for t in stuck] == ["QH"]
    assert stuck[0].effect > 0.1


def test_a_clock_seeded_shuffle_repeats_deals() -> None:
    report = _audit("pis-yedili", 300, 3, ShuffleBias("clock_seed", seeds=200))
    repeat = next(t for t in report.tests if t.family == "deals.repeat")
    assert repeat.finding and repeat.statistic and repeat.statistic > 0
    assert "exact repeats" in repeat.detail
    fair = next(t for t in _audit("pis-yedili", 300, 3).tests if t.family == "deals.repeat")
    assert fair.statistic == 0 and not fair.finding


@pytest.mark.parametrize(("ruleset", "decks"), [("bazito", 1), ("persian", 2)])
def test_repeats_are_the_pairs_of_deals_a_comparison_of_every_pair_finds(ruleset: str, decks: int) -> None:
    """The linear search for deals sharing two hands against the definition, every pair
    of deals compared: some deals copied whole (one three times), some sharing two hands,
    some three, some one (not a repeat); in one chunk and in chunks of 7 games."""
    from collections import Counter

    from ingest.fairplay import DealTally, _hand_keys

    records = list(simulate_deals(ruleset, 120, seed=5, decks=decks))
    rng = np.random.default_rng(11)

    def copy_hands(source: dict, target: dict, count: int) -> None:
        seats = [s for s in target["hands"] if s in source["hands"]][:count]
        for seat in seats:
            target["hands"][seat] = list(source["hands"][seat])

    for a, b in rng.choice(len(records), size=(12, 2), replace=False):
        copy_hands(records[a], records[b], int(rng.integers(1, 4)))
    for b in (30, 31, 32):  # one deal repeated three times
        records[b] = {**records[7], "game": records[b]["game"], "hand": records[b]["hand"],
                      "hands": {k: list(v) for k, v in records[7]["hands"].items()}}
    deals = deals_from_records(records, ruleset=ruleset, decks=decks).frozen()
    keys = _hand_keys(deals.cards)
    hands = [Counter(keys[deals.hand_deal == d].tolist()) for d in range(len(deals))]
    pairs = [(a, b) for a, b in itertools.combinations(range(len(deals)), 2)
             if sum((hands[a] & hands[b]).values()) >= 2]
    assert pairs, "the planted repeats are there"
    involved = sorted({d for pair in pairs for d in pair})
    # a group: the deals holding one pair of hands (a multiset's two smallest, …)
    holders: dict[tuple[int, int], set[int]] = {}
    for d, held in enumerate(hands):
        ordered = sorted(held.elements())
        for i, j in itertools.combinations(range(len(ordered)), 2):
            holders.setdefault((ordered[i], ordered[j]), set()).add(d)
    groups = sorted(pair for pair, ds in holders.items() if len(ds) > 1)
    name = {d: f"{deals.game_id(d)}#{deals.hand_no[d]}" for d in range(len(deals))}
    examples = [(name[a], name[b]) for a, b in (sorted(holders[g])[:2] for g in groups[:5])]
    signature = [(tuple(sorted(hands[d].elements())), deals.starter[d]) for d in range(len(deals))]
    exact = len(involved) - len({signature[d] for d in involved})
    assert exact >= 3
    games = sorted({r["game"] for r in records})
    chunked = [deals_from_records([r for r in records if r["game"] in games[i:i + 7]], ruleset=ruleset,
                                  decks=decks).frozen() for i in range(0, len(games), 7)]
    for chunks in ([deals], chunked):
        with DealTally() as tally:
            for chunk in chunks:
                tally.add(chunk)
            assert tally._repeats() == {(ruleset, decks): (len(groups), examples, len(involved), exact)}


def test_a_hand_carried_over_from_the_last_deal_is_serial_correlation() -> None:
    records = list(simulate_deals("bazito", 600, seed=3))
    for before, now in itertools.pairwise(records):
        if now["game"] == before["game"] and now["hand"] % 3 == 0:  # a third of the deals
            now["hands"]["p1"] = list(before["hands"]["p1"])
    report = audit_deals(deals_from_records(records, ruleset="bazito"), 0.01)
    assert [(t.family, t.scope["seat"]) for t in report.findings] == [("deals.serial", 1)]
    serial = report.findings[0]
    assert serial.ci_low < (7 - 49 / 52) / 3 < serial.ci_high


def test_small_samples_say_not_enough_games() -> None:
    report = _audit("bazito", 12, 4)
    assert not report.findings
    assert {t.status for t in report.tests if t.family != "deals.repeat"} == {NOT_ENOUGH}


def test_the_audit_reads_the_warehouses_deal_lines(tmp_path: Path) -> None:
    from ingest.read import connect

    reader = connect(rigged_warehouse(tmp_path))
    try:
        with deals_from_warehouse(reader) as deals:
            assert len(deals) >= 100
            assert all(len(chunk.stock_offsets) == len(chunk) + 1 for chunk in deals.chunks())
            report = audit_deals(deals, 0.01)
        stuck = [t for t in report.findings if t.family == "stock.position"]
        assert stuck and {t.scope["card"] for t in stuck} == {STUCK}  # in each build
        assert len(deals_from_warehouse(reader, build="no-such-build")) == 0
        assert len(deals_from_warehouse(reader, since="2100-01-01")) == 0
    finally:
        reader.close()


def test_the_fairplay_sample_shows_its_rigged_build(tmp_path: Path) -> None:
    """data/sample-fairplay (data/make_sample.py): the rigged build's seat 0 is the one
    finding; the fair build's games are not flagged; the club's colluding pair is the one
    case of the pair audit, driven by the signals the simulator plants."""
    from ingest.pipeline import ingest
    from ingest.read import connect

    ingest([str(Path(__file__).resolve().parents[2] / "data" / "sample-fairplay")], str(tmp_path / "wh"),
           workers=1)
    reader = connect(tmp_path / "wh")
    try:
        report = audit_deals(deals_from_warehouse(reader), 0.01)
        pairs = audit_pairs(pairs_from_warehouse(reader), 0.01, permutations=200)
    finally:
        reader.close()
    assert [{c.a, c.b} for c in pairs.cases] == [{"sara", "omid"}]
    assert {"twos_spared", "sevens_spared", "jacks_suited"} <= set(pairs.cases[0].drivers)
    assert [(t.family, t.scope.get("seat"), t.scope.get("build")) for t in report.findings] == [
        ("hand.special", 0, "hk-server/2.5.0-beta")]
    assert report.findings[0].ci_low < 0.5 < report.findings[0].ci_high


def _tampered_warehouse(root: Path) -> Path:
    """Bazito games with a planted bias (seat 2's extra special card), a fault in most
    games (a forbidden starter among them), and by hand: a second, different deal line at
    a taken seq (one of the two is set aside) and a deal with a misspelt card; ingested."""
    import io

    import orjson

    from engine.simulate import SimConfig, write_simulation
    from ingest.pipeline import ingest

    out = io.BytesIO()
    write_simulation(SimConfig("bazito", games=60, seed=21, match={"hands": 3},
                               fault_rate=0.9, shuffle=ShuffleBias("extra_special", rate=0.5, seat=2)), out)
    lines = out.getvalue().splitlines()
    deals = [i for i, raw in enumerate(lines) if b'"type":"deal"' in raw]
    conflict = orjson.loads(lines[deals[0]])
    first, second = list(conflict["hands"])[:2]
    conflict["hands"][first][0], conflict["hands"][second][0] = (conflict["hands"][second][0],
                                                                 conflict["hands"][first][0])
    misspelt = orjson.loads(lines[deals[5]])
    card = misspelt["hands"][next(iter(misspelt["hands"]))][0]
    misspelt["hands"][next(iter(misspelt["hands"]))][0] = card.lower()
    lines[deals[5]] = orjson.dumps(misspelt)
    lines.insert(deals[0] + 3, orjson.dumps(conflict))
    root.mkdir(parents=True, exist_ok=True)
    (root / "tampered.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    ingest([str(root / "tampered.jsonl")], str(root / "wh"), workers=1)
    return root / "wh"


@pytest.mark.parametrize("warehouse", ["rigged", "tampered"])
def test_the_engines_deal_facts_are_the_deal_lines(tmp_path: Path, warehouse: str) -> None:
    """The deals read from the engine's typed columns are the deals read from the raw
    `deal` lines (the audit's reading before schema 7), deal by deal and seat by seat,
    with every filter, and the audits of the two agree test by test; the tampered
    warehouse's set-aside and violating deal lines are left out by both."""
    from ingest.fairplay import deals_from_events
    from ingest.read import connect

    root = rigged_warehouse(tmp_path) if warehouse == "rigged" else _tampered_warehouse(tmp_path)
    reader = connect(root)
    try:
        if warehouse == "tampered":
            left_out = reader.rows("SELECT count(*) FILTER (set_aside), count(*) FILTER (code IS NOT NULL)"
                                   " FROM events WHERE type = 'deal'")[0]
            assert left_out[0] >= 1 and left_out[1] >= 2, left_out
        build = reader.rows("SELECT coalesce(server_build, 'unknown') FROM games LIMIT 1")[0][0]
        for filters in ({}, {"build": build}, {"since": "2026-06-01"}, {"ruleset": "persian"}):
            typed = deals_from_warehouse(reader, **filters)
            raw = deals_from_events(reader, **filters).frozen()
            assert typed.rows() == raw.rows(), filters
        typed, raw = deals_from_warehouse(reader), deals_from_events(reader).frozen()
        assert len(typed) >= 100
        hands = reader.rows("SELECT count(*) FROM hands")[0][0]
        assert (len(typed) < hands) == (warehouse == "tampered")
        assert audit_deals(typed, 0.01).to_json() == audit_deals(raw, 0.01).to_json()
    finally:
        reader.close()


def test_a_warehouse_ingested_before_the_deal_facts_is_audited_from_its_deal_lines(tmp_path: Path) -> None:
    """Parts written before schema 7 have no deal facts: they read as null and the audit
    reads the `deal` lines instead, with the same deals as a warehouse that has them."""
    import pyarrow.parquet as pq

    from ingest.read import connect
    from ingest.schema import LATER_COLUMNS

    root = rigged_warehouse(tmp_path)
    reader = connect(root)
    try:
        expected = deals_from_warehouse(reader).rows()
    finally:
        reader.close()
    for table, (_version, columns) in LATER_COLUMNS.items():
        for part in (root / table).rglob("*.parquet"):  # as a build before 7 wrote it
            pq.write_table(pq.read_table(part).drop_columns(list(columns)), part)
    reader = connect(root)
    try:
        assert reader.rows("SELECT count(*), count(dealer_seat) FROM hands")[0][1] == 0
        assert deals_from_warehouse(reader).rows() == expected
        with deals_from_warehouse(reader, chunk_games=7) as chunked:  # the lines read 7 games at a time
            assert len(list(chunked.chunks())) > 3 and chunked.rows() == expected
    finally:
        reader.close()


def test_the_card_codes_are_the_cores() -> None:
    from engine._core import card_codes
    from ingest.fairplay import RANK_OF, SUIT_OF, card_code, card_name

    assert [card_name(card_code(c)) for c in card_codes()] == card_codes()
    assert len(set(card_codes())) == 52
    assert all(card_codes()[code] == RANKS[RANK_OF[code]] + SUITS[SUIT_OF[code]] for code in range(52))


def test_a_newer_writer_gives_an_older_table_the_deal_columns_so_a_compact_keeps_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables created before schema 7 (without the deal columns): the first batch that
    writes parts with them adds them to the table's own schema, so a compact (which reads
    that schema) keeps them, and the audit reads the facts."""
    from ingest import schema
    from ingest.maintenance import compact
    from ingest.pipeline import ingest
    from ingest.read import connect
    from ingest.store import Warehouse

    root = tmp_path / "wh"
    with monkeypatch.context() as patch:
        for table, (_version, columns) in schema.LATER_COLUMNS.items():
            spec = schema.TABLES[table]
            older = schema.TableSpec(table, pa.schema([f for f in spec.schema if f.name not in columns]),
                                     spec.partition_by)
            patch.setitem(schema.TABLES, table, older)
        Warehouse(root).ensure()
    rigged = rigged_warehouse(tmp_path / "rigged")
    lines = (rigged.parent / "rigged.jsonl").read_bytes().splitlines(keepends=True)
    games = sorted({line.split(b'"game":"')[1].split(b'"')[0] for line in lines})
    for half in (games[::2], games[1::2]):  # two batches: two parts a partition to merge
        log = tmp_path / f"half-{len(half)}-{half[0].decode()}.jsonl"
        log.write_bytes(b"".join(line for line in lines if line.split(b'"game":"')[1].split(b'"')[0] in half))
        ingest([str(log)], str(root), workers=1)
    assert compact(str(root), retain_hours=0).files_removed["hands"] > 0
    reader = connect(root)
    try:
        hands = reader.rows("SELECT count(*), count(dealer_seat), count(deal_violations) FROM hands")[0]
        assert hands[0] > 0 and hands[0] == hands[1] == hands[2]
        assert reader.rows("SELECT count(*) = count(opening_cards) FROM hand_players")[0][0]
        assert len(deals_from_warehouse(reader)) == hands[0]
    finally:
        reader.close()


def _same_report(chunked: object, whole: object, path: str = "") -> None:
    """Two reports equal: every key, string, count and flag; floats to 1e-12 relative
    (sums over other chunks may round in the last bits)."""
    if isinstance(whole, dict):
        assert isinstance(chunked, dict) and chunked.keys() == whole.keys(), path
        for key in whole:
            _same_report(chunked[key], whole[key], f"{path}.{key}")
    elif isinstance(whole, list):
        assert isinstance(chunked, list) and len(chunked) == len(whole), path
        for i, (a, b) in enumerate(zip(chunked, whole, strict=True)):
            _same_report(a, b, f"{path}[{i}]")
    elif isinstance(whole, float) and isinstance(chunked, float):
        assert chunked == pytest.approx(whole, rel=1e-12, abs=1e-15), path
    else:
        assert chunked == whole, path


def test_the_audit_a_chunk_of_games_at_a_time_is_the_audit_of_all(tmp_path: Path) -> None:
    """A warehouse with a biased seat (bazito, seat 2's extra special card) and repeated
    deals (persian, a clock-seeded shuffle), every stock logged: audited 7 games at a
    time, the report is the one-chunk report, test by test, with every filter."""
    import io

    from engine.simulate import SimConfig, write_simulation
    from ingest.pipeline import ingest
    from ingest.read import connect

    out = io.BytesIO()
    write_simulation(SimConfig("bazito", games=50, seed=31, match={"hands": 3}, stock_in_deal=1.0,
                               build="hk-server/3.0.0",
                               shuffle=ShuffleBias("extra_special", rate=0.6, seat=2)), out)
    write_simulation(SimConfig("persian", games=40, seed=32, match={"hands": 3}, stock_in_deal=1.0,
                               build="hk-server/3.1.0", shuffle=ShuffleBias("clock_seed", seeds=25)), out)
    (tmp_path / "planted.jsonl").write_bytes(out.getvalue())
    ingest([str(tmp_path / "planted.jsonl")], str(tmp_path / "wh"), workers=1)
    reader = connect(tmp_path / "wh")
    try:
        for filters in ({}, {"ruleset": "persian"}, {"build": "hk-server/3.0.0"}):
            with deals_from_warehouse(reader, **filters, chunk_games=10**6) as whole, \
                    deals_from_warehouse(reader, **filters, chunk_games=7) as chunked:
                assert len(list(whole.chunks())) == 1 and len(list(chunked.chunks())) > 5
                expected = audit_deals(whole, 0.01).to_json()
                _same_report(audit_deals(chunked, 0.01).to_json(), expected)
            found = {(t["family"], t["scope"].get("seat")) for t in expected["findings"]}
            if not filters:
                assert {("hand.special", 2), ("deals.repeat", None)} <= found, found
                repeat = next(t for t in expected["findings"] if t["family"] == "deals.repeat")
                assert "exact repeats" in repeat["detail"] and " = " in repeat["detail"]
    finally:
        reader.close()
