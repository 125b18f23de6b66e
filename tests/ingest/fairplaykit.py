"""A warehouse whose shuffle is rigged (known truth), for the deal audit's surfaces."""

from __future__ import annotations

from pathlib import Path

from engine.simulate import ShuffleBias, SimConfig, write_simulation

#: the card the rigged warehouse's shuffle sticks at the bottom of the stock
STUCK = "7S"
BUILD = "hk-server/2.4.0"


def rigged_warehouse(root: Path) -> Path:
    """40 persian games (3-4 seats, 3 hands each, every stock logged) whose shuffle keeps
    STUCK at the bottom of the deck, ingested; returns the warehouse's folder."""
    from ingest.pipeline import ingest

    root.mkdir(parents=True, exist_ok=True)
    log = root / "rigged.jsonl"
    with log.open("wb") as out:
        write_simulation(SimConfig("persian", games=40, seed=7, players=(3, 4), match={"hands": 3},
                                   stock_in_deal=1.0, shuffle=ShuffleBias("stuck_card", card=STUCK)), out)
    ingest([str(log)], str(root / "wh"), workers=1)
    return root / "wh"


#: the colluding pair of `pair_warehouse`, who do each other the simulator's favours
PAIR = ("sara", "omid")


def pair_warehouse(root: Path, collusion: float, games: int = 150, seed: int = 9,
                   players: tuple[int, int] | None = None, ruleset: str = "bazito") -> Path:
    """Bazito games (or `ruleset`'s) at tables of 4 (or of `players`, a range) drawn from 6
    names, 3 hands each; PAIR colludes with probability `collusion` (0: every table honest); ingested."""
    from ingest.pipeline import ingest

    root.mkdir(parents=True, exist_ok=True)
    log = root / "pairs.jsonl"
    with log.open("wb") as out:
        write_simulation(SimConfig(ruleset, games=games, seed=seed, match={"hands": 3},
                                   names=("sara", "omid", "lale", "reza", "neda", "kian"),
                                   colluders=PAIR, collusion=collusion,
                                   **({"players": players} if players else {})), out)
    ingest([str(log)], str(root / "wh"), workers=1)
    return root / "wh"
