"""The pair audit on known truth: a pair who spare each other from their 2s heads the
queue; honest tables give no case; the permutation null is what calibrates it."""

from __future__ import annotations

from pathlib import Path

from ingest.pairs import audit_pairs, gifts_from_warehouse
from ingest.read import connect
from tests.ingest.fairplaykit import PAIR, pair_warehouse


def _report(root: Path, collusion: float, level: float = 0.05):
    reader = connect(pair_warehouse(root, collusion))
    try:
        return audit_pairs(gifts_from_warehouse(reader), level, permutations=100)
    finally:
        reader.close()


def test_a_colluding_pair_heads_the_queue_with_its_steps(tmp_path: Path) -> None:
    report = _report(tmp_path, 1.0)
    assert [frozenset((c.a, c.b)) for c in report.cases] == [frozenset(PAIR)]
    case = report.cases[0]
    assert case.gifts_to_partner < case.expected and case.p_value <= 0.05
    steps = report.to_json()["cases"][0]["steps"]
    assert steps and all(s["giver"] in PAIR and s["spared"] in PAIR and s["target"] not in PAIR
                         for s in steps)
    assert steps[0]["replay"].startswith("replay?game=")


def test_honest_tables_give_no_case(tmp_path: Path) -> None:
    report = _report(tmp_path, 0.0)
    assert report.pairs_scored >= 10
    assert report.cases == []
    # the null's highest scores are spread as the scores of a whole warehouse are
    assert len(report.null_max) == 100 and min(report.null_max) < max(report.null_max)


def test_no_gifts_no_pairs() -> None:
    from ingest.pairs import GiftSet

    empty = audit_pairs(GiftSet(), 0.05, permutations=50)
    assert empty.pairs_scored == 0 and empty.cases == []
