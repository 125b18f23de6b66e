"""Writes the scenario cases of the contract's second revision (`rev2-*.jsonl` beside
`rev2-*.expect.json`, in the ruleset folders), pinning docs/decisions.md.

Built move by move with bazito/_casekit (card accounting only; it knows no rules); the
comments say why each move is legal or which rule it breaks, and so why each expected
verdict follows from rules.md / notation.md / docs/decisions.md.
Run: python tests/cases/_gen_rev2.py [-v NAME]
"""

from __future__ import annotations

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "bazito"))
from _casekit import (  # noqa: E402
    Game,
    hand_out,
    pis_value,
    write_expect,
    write_lines,
)

CASES: dict = {}

PERSIAN_POINTS = {"7": 0, "J": 20, "A": 14, "K": 13, "Q": 12, "T": 10}


def persian_value(hand: list[str]) -> int:
    return sum(PERSIAN_POINTS.get(c[0], int(c[0]) if c[0].isdigit() else 0) for c in hand)


def case(folder: str):
    def register(fn):
        CASES[f"{folder}/rev2-" + fn.__name__.replace("_", "-")] = fn
        return fn
    return register


def entry(status, violations, hands=..., tot=...):
    e = {"status": status, "violations": violations}
    if hands is not ...:
        e["hands"] = hands
    if tot is not ...:
        e["totals"] = tot
    return e


def violations_after(g: Game, first: int) -> list:
    """unexpected_event for every line from seq `first` on (the game is closed); the player
    is the line's `player` (null for lines without one; left out for a deal, whose player
    the contract does not name)."""
    return [[d["seq"], "unexpected_event"] if d["type"] == "deal"
            else [d["seq"], "unexpected_event", d.get("player")]
            for d in g.lines if d["seq"] >= first]


# ====================================================================== helpers
def _load(folder: str):
    spec = importlib.util.spec_from_file_location(f"gen_{folder.replace('-', '_')}",
                                                  os.path.join(HERE, folder, "_gen.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BZ = _load("bazito")  # fast_hand, dry_game … of the bazito cases
PY = _load("pis-yedili")  # fast_hand of the pis-yedili cases


FAST_MOVES = [  # bazito/_gen.py's fast hand: sara out on JH (x2) on her 7th card
    ("sara", "8C"), ("sara", "8D"), ("sara", "3D"), ("omid", "3S"), ("lale", "5S"),
    ("reza", "5C"), ("sara", "9C"), ("omid", "9H"), ("lale", "KH"), ("reza", "KC"),
    ("sara", "KS"), ("omid", "6S"), ("lale", "6H"), ("reza", "4H"), ("sara", "4D"),
    ("omid", "9D"), ("lale", "9S"), ("reza", "4S"),
]


def bz_fast(g: Game, hand: int, upto: int | None = None, **deal_extra) -> dict:
    """Deal bazito hand `hand` (dealer reza) and play the fast hand to sara's win, or stop
    once seq `upto` is written; returns the deal line."""
    deal = g.deal(hand, "reza", BZ.FAST, starter="6C", **deal_extra)
    for p, c in FAST_MOVES:
        if upto is not None and g.seq > upto:
            return deal
        g.play(p, c)
    if upto is None:
        g.play("sara", "JH", suit="D")
    return deal


# ====================================================================== notation
@case("notation")
def result_closes_the_game():
    # (a) bazito, one hand: a result while the hand runs closes the game
    a = BZ.new("rv-result-mid-hand")
    BZ.fast_hand(a, upto=4)  # sara: 8C 8D 3D; omid is to move
    r = a.result(totals={"sara": 0, "omid": 0, "lale": 0, "reza": 0})  # claims: not checked
    a.play("lale", "5S")  # would be not_your_turn and card_not_in_hand: not judged
    a.play("omid", "3S")  # omid's legal play: not replayed either
    a.end(1)
    va = violations_after(a, r["seq"])
    # (b) pis-yedili, a match of 2 hands: the result after hand 1 is premature; hand 2 is
    # not replayed, so not scored, and the game is not complete
    b = PY.new("rv-result-between-hands", match={"hands": 2})
    PY.fast_hand(b, 1, "deniz")  # ayse out on 7D: x3
    s1 = b.scores("ayse", pis_value, 3)
    b.end(1, winners=["ayse"], scores=s1)
    r = b.result(totals=s1, winners=["ayse"])
    PY.fast_hand(b, 2, "ayse", upto=b.seq + 3)  # not replayed
    b.end(2)
    vb = violations_after(b, r["seq"])
    # (c) bazito: a result while the decided hand has no end yet is premature (the hand is
    # still open); the hand, decided when the game closed, is listed; the end is not replayed
    c = BZ.new("rv-result-before-end")
    BZ.fast_hand(c)
    s = BZ.fast_scores(c, 2)
    r = c.result(totals=s, winners=["sara"])
    c.end(1, winners=["sara"], scores=s)
    vc = violations_after(c, r["seq"])
    return ("notation.md, second revision: a `result` before the match is over is "
            "unexpected_event and closes the game: every later line is unexpected_event too "
            "and is not replayed (no hand after it is scored; the game is not complete). Its "
            "claims are not checked (like those of an early end). (a) mid-hand: nothing "
            "decided; (b) after hand 1 of 2: only hand 1 is listed; (c) before the decided "
            "hand's end: that hand is listed, decided when the game closed.",
            [(a, entry("violations", va, [])),
             (b, entry("violations", vb, [hand_out(1, "ayse", s1)], s1)),
             (c, entry("violations", vc, [hand_out(1, "sara", s)], s))])


@case("notation")
def hand_without_outcome_counts():
    # (a) pis-yedili, 2 hands: hand 2 closed early by an `end` still counts, so the match
    # is over and the result is accepted (its totals: hand 1's)
    a = PY.new("rv-early-end-last-hand", match={"hands": 2})
    PY.fast_hand(a, 1, "deniz")  # ayse out on 7D: x3
    s1 = a.scores("ayse", pis_value, 3)
    a.end(1, winners=["ayse"], scores=s1)
    PY.fast_hand(a, 2, "ayse", upto=a.seq + 4)
    e2 = a.end(2)  # not decided: unexpected_event, closed without an outcome
    a.result(totals=s1, winners=["ayse"])  # the match is over: no violation
    # (b) bazito, one hand (the default): hand 1 closed early still counts, so the match is
    # over and a second deal is "after the match is over" (applied all the same)
    b = BZ.new("rv-early-end-then-deal")
    bz_fast(b, 1, upto=6)
    e1 = b.end(1)
    d2 = bz_fast(b, 2)
    sb = BZ.fast_scores(b, 2)
    b.end(2, winners=["sara"], scores=sb)
    # (c) bazito, one hand: the deal that abandons hand 1 (without an outcome) ends the
    # match by closing it, and is still one unexpected_event; the hand it deals is applied
    c = BZ.new("rv-abandoned-last-hand")
    bz_fast(c, 1, upto=6)
    d2c = bz_fast(c, 2)
    sc = BZ.fast_scores(c, 2)
    c.end(2, winners=["sara"], scores=sc)
    return ("notation.md, second revision: a hand closed without an outcome (an early `end`, "
            "or a `deal` while it ran) still counts as one of the match's hands "
            "({\"hands\": N}), with nothing added to totals. (a) the last hand of 2 closed "
            "early: the match is over, the result is accepted; (b) the only hand closed early: "
            "the next deal comes after the match is over; (c) a deal abandoning the only hand "
            "is one unexpected_event, though closing that hand ends the match.",
            [(a, entry("violations", [[e2["seq"], "unexpected_event", None]], [hand_out(1, "ayse", s1)], s1)),
             (b, entry("violations", [[e1["seq"], "unexpected_event", None], [d2["seq"], "unexpected_event"]],
                       [hand_out(2, "sara", sb)], sb)),
             (c, entry("violations", [[d2c["seq"], "unexpected_event"]], [hand_out(2, "sara", sc)], sc))])


def insert_line(g: Game, after_seq: int, type_: str, **fields: object) -> dict:
    """Put a line in after seq `after_seq`, renumbering the later ones."""
    index = next(i for i, d in enumerate(g.lines) if d["seq"] == after_seq) + 1
    for d in g.lines[index:]:
        d["seq"] += 1
    line = {"game": g.gid, "seq": after_seq + 1, "type": type_, **fields}
    g.lines.insert(index, line)
    g.seq += 1
    return line


# ====================================================================== reshuffles
@case("bazito")
def reshuffle_with_stock_not_applied():
    g = BZ.dry_game("rv-bz-reshuffle-early", with_stock=True)
    # after reza's JH (seq 5) the stock still holds 23 cards: unexpected_event, not
    # applied, and its `stock` (not the pile less its top) is not checked either
    x = insert_line(g, 5, "reshuffle", stock=["KS"])
    g.reshuffle(BZ.NEW_STOCK)  # the stock ran dry: the whole pile less KS, 5C JS 4S QS too
    BZ.dry_tail(g)  # 8C, the new stock's top
    return ("notation.md, second revision: a `reshuffle` while the stock still holds cards is "
            "unexpected_event and is not applied (the stock and the pile stay as they were). "
            "The later, due reshuffle then lists the whole pile less its top, the cards that "
            "were under the pile at the early one included, and the draws take its top: no "
            "other violation.",
            [(g, entry("violations", [[x["seq"], "unexpected_event", None]], []))])


@case("pis-yedili")
def reshuffle_not_applied_blocks():
    g = PY.new("rv-py-reshuffle-empty", players=["ayse", "mert"], match={"hands": 1})
    g.deal(1, "mert", {
        "ayse": "3C 9H KH QH 4H 6H 8H",
        "mert": "5C 9C 2S 3S 4S 6D 3D",
    })
    g.play("ayse", "3C")  # the opening club
    g.play("mert", "5C")  # suit
    while g.stock:
        g.draw("ayse", n=1)  # voluntary draws, one card a line; the last empties the stock
    g.pass_("ayse")  # after a draw: a pass is allowed (emptying the stock blocks nothing)
    g.play("mert", "9C")  # suit: mert has a legal card, no block
    x = g.add("reshuffle")  # the stock is empty, but pis-yedili never reshuffles: not applied
    g.play("ayse", "9H")  # rank
    g.none_of("mert", suits="H", ranks="9J")  # mert must draw and the stock is empty: blocked
    sc = {p: 0 if p == "mert" else pis_value(g.hands[p]) for p in g.players}
    g.end(1, winners=["mert"], scores=sc)
    return ("pis-yedili never reshuffles: a `reshuffle` there is unexpected_event and is not "
            "applied (decisions.md), even with the stock empty and cards under the pile's "
            "top; so when mert must draw after ayse's 9H the hand is blocked (rules.md "
            "'Stock exhausted'): the lowest hand value wins, the others score theirs.",
            [(g, entry("violations", [[x["seq"], "unexpected_event", None]],
                       [hand_out(1, "mert", sc, reason="blocked")], sc))])


# ====================================================================== persian settlement
PER4 = ["ali", "bita", "cyrus", "dara"]  # clockwise; dealer dara -> ali moves first


def per_quick_win(g: Game, hands: dict[str, str]) -> None:
    """ali sheds 8H 8S 8D 8C 3C in one turn (an 8 must be followed when a match is held),
    then 3D (a call is due: announced) and goes out on KS; nobody else plays a 7."""
    g.deal(1, "dara", hands, starter="4H", with_stock=False)
    for card in ("8H", "8S", "8D", "8C", "3C"):
        g.play("ali", card)  # 8H on 4H: suit; 8S 8D 8C: another 8; 3C: 8C's suit, not an 8
    g.play("bita", "9C")  # suit
    g.play("cyrus", "9D")  # rank
    g.play("dara", "5D")  # suit
    g.play("ali", "3D")  # suit; one card left: a call is due
    g.announce("ali")
    g.play("bita", "6D")  # suit
    g.play("cyrus", "QD")  # suit
    g.play("dara", "QS")  # rank
    g.play("ali", "KS")  # suit: ali's last card, ali wins


@case("persian")
def settlement_wrong_draws():
    g = Game("rv-per-settle-wrong", "persian", PER4, match={"hands": 1})
    per_quick_win(g, {
        "ali": "8H 8S 8D 8C 3C 3D KS",
        "bita": "9C 6D 7C KH 2S 4S QH",   # one 7: due first (the seat after ali)
        "cyrus": "9D QD 5S 6S TS 2H 4C",  # no 7: owes nothing
        "dara": "5D QS 7S 9H 5H 6C AC",   # one 7: due after bita (cyrus is passed over)
    })
    x1 = g.add("draw", player="dara", cards=["2C", "3S"])  # dara holds a 7, her draw is to come
    x2 = g.add("draw", player="ali", cards=["2C"])  # the winner: owes nothing
    x3 = g.add("draw", player="cyrus", cards=["2C", "3S"])  # holds no 7: owes nothing
    g.aside.append("7C")
    g.hands["bita"].remove("7C")
    g.draw("bita", "2C 3S")  # bita's due draw: 2 for her 7C; the same cards: nothing was applied
    x4 = g.add("draw", player="bita", cards=["4D"])  # settled already
    x5 = g.add("draw", player="cyrus", cards=["4D"])  # holds no 7
    g.aside.append("7S")
    g.hands["dara"].remove("7S")
    g.draw("dara", "4D 5C")  # dara's due draw for 7S
    sc = {p: 0 if p == "ali" else persian_value(g.hands[p]) for p in g.players}
    g.end(1, winners=["ali"], scores=sc)
    return ("rules.md persian settlement, second revision: a wrong settlement draw is "
            "reported and not applied: by a loser other than the one whose draw is due, "
            "not_your_turn (dara, who holds a 7 and comes after bita); by the winner, or by a "
            "loser who owes nothing (already settled: bita again; holding no 7: cyrus), "
            "unexpected_event. The due draws then take the very cards the wrong ones named, "
            "and the scores count only the due draws.",
            [(g, entry("violations", [[x1["seq"], "not_your_turn", "dara"],
                                      [x2["seq"], "unexpected_event", "ali"],
                                      [x3["seq"], "unexpected_event", "cyrus"],
                                      [x4["seq"], "unexpected_event", "bita"],
                                      [x5["seq"], "unexpected_event", "cyrus"]],
                       [hand_out(1, "ali", sc)], sc))])


# ====================================================================== tarkesh
def moves(g: Game, plays: list[tuple]) -> None:
    """(player, card[, suit]) plays; (player, None) an announce (a call due)."""
    for p, c, *suit in plays:
        if c is None:
            g.announce(p)
        else:
            g.play(p, c, suit=suit[0] if suit else None)


def per_seven_out(g: Game, hands: dict[str, str], dealer: str, between: list[list]) -> None:
    """The first player sheds 8H 8S 8D 8C 3C in one turn, then 3D (a call is due:
    announced) and plays 7D, their last card: under tarkesh they wait, the total of 2 on
    the next player. `between`: the others' moves after each of the first two turns."""
    first = g.players[(g.players.index(dealer) + 1) % len(g.players)]
    g.deal(1, dealer, hands, starter="4H", with_stock=False)
    for card in ("8H", "8S", "8D", "8C", "3C"):
        g.play(first, card)  # 8H on 4H: suit; 8S 8D 8C: another 8; 3C: 8C's suit, not an 8
    moves(g, between[0])
    g.play(first, "3D")
    g.announce(first)
    moves(g, between[1])
    g.play(first, "7D")  # the last card, a 7: not won yet


@case("persian")
def tarkesh_chain_dropped():
    # (a) points, 2 players: bita passes against ali's waiting 7: illegal_pass; the chain is
    # over too: ali wins right after that line, and bita's settlement follows
    a = Game("rv-tk-pass-points", "persian", ["ali", "bita"], match={"hands": 1})
    per_seven_out(a, {"ali": "8H 8S 8D 8C 3C 3D 7D", "bita": "3S 6D 7S KH 2S 4S QH"}, "bita",
                  [[("bita", "3S")], [("bita", "6D")]])  # rank, suit
    xa = a.pass_("bita")  # facing a total of 2 (holding 7S): a pass is illegal_pass
    a.aside.append("7S")
    a.hands["bita"].remove("7S")
    a.draw("bita", "2C 5C")  # settlement: 7S laid aside, 2 cards drawn
    sa = {"ali": 0, "bita": persian_value(a.hands["bita"])}
    a.end(1, winners=["ali"], scores=sa)
    # (b) points, 2 players: bita's last card, a non-7, played against the total: ali, who
    # went out first, wins, not bita (who is left with an empty hand: 0 points)
    b = Game("rv-tk-last-card-points", "persian", ["ali", "bita"], match={"hands": 1})
    per_seven_out(b, {"ali": "8H 8S 8D 8C 3C 3D 7D", "bita": "AC AS AH AD 9D 4D 9C"}, "bita",
                  [[("bita", "AC"), ("bita", "AS"), ("bita", "AH"), ("bita", "AD"),
                    ("bita", "9D")],  # each A skips ali (no A to deflect it): bita again
                   [("bita", "4D"), ("bita", None)]])
    xb = b.play("bita", "9C")  # not a 7: illegal_card; bita's last card
    sb = {"ali": 0, "bita": 0}
    b.end(1, winners=["ali"], scores=sb)
    # (c) elimination, 3 players: bita's TD against the total drops it: ali finishes at
    # once; the T reverses among the players still in the hand, so cyrus moves, not ali
    c = Game("rv-tk-non7-elim", "persian", ["ali", "bita", "cyrus"], mode="elimination")
    per_seven_out(c, {"ali": "8H 8S 8D 8C 3C 3D 7D", "bita": "9C 6D TD KH 2S 4S QH",
                      "cyrus": "9D QD 5S 6S TH 2H 4C"}, "cyrus",
                  [[("bita", "9C"), ("cyrus", "9D")], [("bita", "6D"), ("cyrus", "QD")]])
    xc = c.play("bita", "TD")  # not a 7: illegal_card
    c.play("cyrus", "TH")  # rank
    c.play("bita", "KH")  # suit
    # (d) elimination, 4 players: a wrong pass drops the total: ali finishes; play goes on
    # from the seat after the passer, and the rotation passes ali by from then on
    d = Game("rv-tk-pass-elim", "persian", ["ali", "bita", "cyrus", "dara"], mode="elimination")
    per_seven_out(d, {"ali": "8H 8S 8D 8C 3C 3D 7D", "bita": "9C 6D KD KH 2S 4S QH",
                      "cyrus": "9D QD 5S 6S TH 2H 4D", "dara": "5D JD 5C 6H QC 3H 6C"}, "dara",
                  [[("bita", "9C"), ("cyrus", "9D"), ("dara", "5D")],
                   [("bita", "6D"), ("cyrus", "QD"), ("dara", "JD", "D")]])  # JD: a match
    xd = d.pass_("bita")  # facing the total: illegal_pass
    d.play("cyrus", "4D")  # on ali's 7D: suit
    d.none_of("dara", suits="D", ranks="4J")
    d.draw("dara", "KC")  # no match: draw 1; KC does not match 4D: the turn ends
    d.play("bita", "4S")  # rank: bita, not ali (finished), moves after dara
    return ("rules.md tarkesh, second revision: when the total is dropped without being drawn "
            "(a wrong pass, or a non-7 played against it) the chain is over too: the hand is "
            "decided right after that line with the earliest waiting 7-player as winner, "
            "settlement following in points play (a); the waiting player went out first, so "
            "they win even when the non-7 was its player's last card (b); in elimination the "
            "waiting players finish (in the order they went out) and leave the rotation, the "
            "card's effect then applying among the players still in the hand (c: the T "
            "reverses, cyrus moves; d: after the pass, cyrus, dara, then bita).",
            [(a, entry("violations", [[xa["seq"], "illegal_pass", "bita"]], [hand_out(1, "ali", sa)], sa)),
             (b, entry("violations", [[xb["seq"], "illegal_card", "bita"]], [hand_out(1, "ali", sb)], sb)),
             (c, entry("violations", [[xc["seq"], "illegal_card", "bita"]], [])),
             (d, entry("violations", [[xd["seq"], "illegal_pass", "bita"]], []))])


ELIM4 = {"ali": "8H 8S 8D 8C 3C 3D 7D", "bita": "9C 6D 7S KH 2S 4S QH",
         "cyrus": "9D QD 5S 6S TH 2H 4D", "dara": "5D JD 5C 6H QC 3H 6C"}
ELIM4_BETWEEN = [[("bita", "9C"), ("cyrus", "9D"), ("dara", "5D")],
                 [("bita", "6D"), ("cyrus", "QD"), ("dara", "JD", "D")]]


@case("persian")
def tarkesh_finished_player_lines():
    # issue #14 item 10: these logs crashed the replay (list.remove in the tarkesh chain's
    # end): a waiting player who finished another way was finished a second time
    # (a) ali, waiting, plays a card she does not hold out of turn, not a 7, against the
    # total bita faces: the chain is dropped, ali finishes (once); cyrus later draws a
    # total of bita's: nobody is waiting any more, play goes on
    a = Game("rv-tk-waiting-plays-out", "persian", list(ELIM4), mode="elimination")
    per_seven_out(a, ELIM4, "dara", ELIM4_BETWEEN)
    xa = a.play("ali", "KS", not_held=True)  # not_your_turn, card_not_in_hand (unseen: stock)
    a.play("bita", "7S")  # ali is out: bita moves next; suit
    a.draw("cyrus", "2C 7C")  # the total of 2
    a.none_of("dara", suits="S", ranks="7J")
    a.draw("dara", "2D")  # no match on 7S: draw 1, no match: the turn ends
    a.play("bita", "4S")  # suit: bita follows dara (ali finished)
    # (b) ali, waiting, plays a second 7 she does not hold out of turn (the total grows; she
    # waits once, not twice), then a non-7 she does not hold (the chain is dropped: she
    # finishes), then, finished, draws the next total out of turn
    b = Game("rv-tk-finished-draws-total", "persian", list(ELIM4), mode="elimination")
    per_seven_out(b, ELIM4, "dara", ELIM4_BETWEEN)
    xb1 = b.play("ali", "7H", not_held=True)  # a 7 on the total: it grows to 4, bita faces it
    xb2 = b.play("ali", "KS", not_held=True)  # a non-7 against it: dropped, ali finishes
    b.play("bita", "7S")  # suit; the total of 2 is cyrus's
    xb3 = b.draw("ali", "2C 7C")  # the finished ali draws it out of turn: the total falls on her
    b.play("bita", "4S")  # ali does not rejoin the rotation: the seat after her moves; suit
    return ("Issue #14 item 10: a finished player's lines never finish anyone twice. "
            "(a) a waiting 7-player's out-of-turn non-7 (a card not held, taken from the "
            "stock) drops the chain, so she finishes as its waiting player; a later total "
            "drawn by another player ends nothing; (b) a waiting player's further 7 only adds "
            "to the total (she waits once), her non-7 then drops it (she finishes), and the "
            "next total, drawn by her out of turn, is simply drawn: not_your_turn (notation.md: "
            "an out-of-turn event takes the pending total on its actor), and she does not "
            "rejoin the rotation (decisions.md).",
            [(a, entry("violations", [[xa["seq"], "not_your_turn", "ali"],
                                      [xa["seq"], "card_not_in_hand", "ali"]], [])),
             (b, entry("violations", [[xb1["seq"], "not_your_turn", "ali"],
                                      [xb1["seq"], "card_not_in_hand", "ali"],
                                      [xb2["seq"], "not_your_turn", "ali"],
                                      [xb2["seq"], "card_not_in_hand", "ali"],
                                      [xb3["seq"], "not_your_turn", "ali"]], []))])


@case("persian")
def tarkesh_nothing_to_draw():
    # The player facing the waiting 7-player's total can draw nothing: no card anywhere (an
    # empty stock, nothing under the pile's top). In a good deal the 7 always lands on some
    # card, so this needs a deal without a starter (bad_deal, applied: the pile starts
    # empty) and a 1-card hand (bad_deal too; one line, one bad_deal)
    g = Game("rv-tk-nothing-to-draw", "persian", ["ali", "bita", "cyrus"], match={"hands": 1})
    g.deal(1, "cyrus", {
        "ali": "7C",
        "bita": "2H 3H 4H 5H 6H 8H 9H",
        "cyrus": "7D 7H 7S KS QS JS TS",
    }, with_stock=False, check=False)
    while g.unseen():
        g.penalty("bita", g.unseen()[0], reason="other")  # extra_fouls: accepted; the stock empties
    g.play("ali", "7C")  # on an empty pile anything fits; ali's last card, a 7: she waits
    # bita faces 2, holds no 7 and can draw nothing: ali wins as if it had been drawn;
    # settlement: bita holds no 7; cyrus lays aside 7D 7H 7S and owes 6, with no card
    # anywhere: settlement ends
    g.hands["cyrus"] = [c for c in g.hands["cyrus"] if c[0] != "7"]
    sc = {p: 0 if p == "ali" else persian_value(g.hands[p]) for p in g.players}
    g.end(1, winners=["ali"], scores=sc)
    return ("rules.md tarkesh: 'If the player facing the total cannot draw anything, the "
            "waiting 7-player wins as if it had been drawn' (no line for bita: a player who "
            "has nothing to do but draw is passed over without a line); settlement follows "
            "and ends at once, there being no card anywhere (rules.md settlement 3).",
            [(g, entry("violations", [[1, "bad_deal"]], [hand_out(1, "ali", sc)], sc))])


# ====================================================================== reported together
@case("persian")
def reported_together():
    # (a) a drawn match, then a draw of two cards: must_play (the table's row) and, the count
    # being wrong even for the one card a draw could take, illegal_draw
    a = Game("rv-rt-drawn-match", "persian", ["ali", "bita"])
    a.deal(1, "bita", {"ali": "4H 5H 6H KC QC 2C 3H", "bita": "9D 2S 3S 5S 6S KS QS"},
           starter="9S", with_stock=False)
    a.none_of("ali", suits="S", ranks="9J")
    a.draw("ali", "TS")  # no match: draw 1; TS matches 9S: it must be played
    xa = a.draw("ali", "5C 6C")  # must_play + illegal_draw
    a.play("bita", "9D")  # 6C, the last card drawn, does not fit: ali's turn ended; rank
    # (b) the same after an 8: the failed-follow draw brought a match
    b = Game("rv-rt-follow-drawn-match", "persian", ["ali", "bita"])
    b.deal(1, "bita", {"ali": "8H 2C 3C 5C 6C 9C KS", "bita": "9D 2S 3S 5S 6S 4D QS"},
           starter="4H", with_stock=False)
    b.play("ali", "8H")  # suit; a follow is due
    b.none_of("ali", suits="H", ranks="8J")
    b.draw("ali", "TH")  # the follow draw: TH matches 8H, it must be played
    xb = b.draw("ali", "QH KH")  # must_play + illegal_draw
    # "After a draw, faulty or not: ... the turn ends unless the drawn card may be played
    # now": KH, the last card drawn, still follows 8H, so ali's turn goes on
    b.play("ali", "KH")
    # (c) out of turn: not_your_turn, and what the line breaks as cyrus's own normal turn:
    # holding a match he draws (must_play), and two cards (illegal_draw)
    c = Game("rv-rt-out-of-turn", "persian", ["ali", "bita", "cyrus"])
    c.deal(1, "cyrus", {"ali": "5H 2C 3C 5C 6C 9C KS", "bita": "9D 2S 3S 5S 6S 4D QS",
                        "cyrus": "9H 2D 3D 6D TC QC KC"}, starter="4H", with_stock=False)
    c.play("ali", "5H")  # suit
    xc = c.draw("cyrus", "JC 4C")  # bita's turn; cyrus holds 9H, a match
    c.play("ali", "5C")  # the line was cyrus's turn; 4C does not fit 5H: it ended; rank
    # (d) a 2's target who is not next plays: unexpected_event and not_your_turn (reported
    # together), and, judged as cyrus's own normal turn, illegal_card (9C on 2H)
    d = Game("rv-rt-gift-target-plays", "persian", ["ali", "bita", "cyrus"])
    d.deal(1, "cyrus", {"ali": "2H 2C 3C 5C 6C 9S KS", "bita": "9D 2S 3S 5S 6S 4D QS",
                        "cyrus": "9H 2D 3D 6D TC QC 9C"}, starter="4H", with_stock=False)
    d.play("ali", "2H", target="cyrus")  # suit; cyrus owes the gift, bita moves next
    xd = d.play("cyrus", "9C")  # instead of drawing; not next; no match for 2H
    d.play("ali", "9S")  # applied as cyrus's turn: ali follows him; rank
    return ("notation.md, second revision: the combinations listed under 'reported "
            "together' are each reported every time they apply: must_play with illegal_draw "
            "after a drawn match (a) or a failed-follow draw that brought a match (b), the "
            "wrong count judged against the one card a draw could take (a single card more is "
            "must_play only: per-drawn-match); not_your_turn with what the line breaks as "
            "the actor's own normal turn (c); unexpected_event with not_your_turn for a 2's "
            "target who is not next and plays, and then what the play breaks (d).",
            [(a, entry("violations", [[xa["seq"], "must_play", "ali"], [xa["seq"], "illegal_draw", "ali"]], [])),
             (b, entry("violations", [[xb["seq"], "must_play", "ali"], [xb["seq"], "illegal_draw", "ali"]], [])),
             (c, entry("violations", [[xc["seq"], "not_your_turn", "cyrus"], [xc["seq"], "must_play", "cyrus"],
                                      [xc["seq"], "illegal_draw", "cyrus"]], [])),
             (d, entry("violations", [[xd["seq"], "unexpected_event", "cyrus"], [xd["seq"], "not_your_turn", "cyrus"],
                                      [xd["seq"], "illegal_card", "cyrus"]], []))])


# ====================================================================== card accounting
ACCOUNT = {
    "sara": "3H 4D 6C KD QC 2D 5H",
    "omid": "3C 5D 6H AD TH 6D KC",
    "lale": "4C 4H QD 8C 3D KH 2H",
    "reza": "AC 9D 7H QH 8D 4S KS",
}


@case("bazito")
def card_not_held_is_taken():
    # (a) the card is in the stock (its second card): taken from there, so the stock's
    # order goes on without it
    a = BZ.new("rv-cnh-from-stock")
    a.deal(1, "reza", ACCOUNT, starter="5C", stock_top="TS 9S 2S")
    xa = a.play("sara", "9S", not_held=True)  # card_not_in_hand (and no match: never illegal_card too)
    a.none_of("omid", suits="S", ranks="9J")
    a.draw("omid", "TS")  # the stock's top; it fits 9S: omid may pass
    a.pass_("omid")
    a.none_of("lale", suits="S", ranks="9J")
    a.draw("lale", "2S")  # the stock's top now that 9S has left it
    a.pass_("lale")
    a.play("reza", "KS")  # suit
    # (b) the card is in another player's hand: taken from there; when its holder plays it
    # later, it is a card not held in turn (taken from the discard pile, where it now is)
    b = BZ.new("rv-cnh-from-hand")
    b.deal(1, "reza", ACCOUNT, starter="5C", with_stock=False)
    xb1 = b.play("sara", "9D", not_held=True)  # reza's 9D: card_not_in_hand
    b.hands["reza"].remove("9D")
    b.play("omid", "5D")  # suit
    b.play("lale", "QD")  # suit
    xb2 = b.play("reza", "9D", not_held=True)  # he no longer holds it: card_not_in_hand
    b.pile.remove("9D")
    b.play("sara", "KD")  # on 9D: suit
    return ("docs/decisions.md (card accounting): a card played that its player does not "
            "hold is reported (card_not_in_hand) and still goes on the pile, taken from where "
            "the table has a copy, so that no card exists twice: the stock first (a), then "
            "the discard pile, then the other players' hands (b) … In (a) the draws then "
            "take the stock's top without 9S; in (b) reza has lost his 9D to sara's play, and "
            "his own 9D later is a card not held, taken from the pile.",
            [(a, entry("violations", [[xa["seq"], "card_not_in_hand", "sara"]], [])),
             (b, entry("violations", [[xb1["seq"], "card_not_in_hand", "sara"],
                                      [xb2["seq"], "card_not_in_hand", "reza"]], []))])


def main(argv: list[str]) -> None:
    only = argv[2] if len(argv) > 2 and argv[1] == "-v" else None
    for name, fn in CASES.items():
        built = fn()
        if built is None:
            continue
        desc, games = built
        if only and name.endswith(only):
            for g, _ in games:
                print(g.gid)
                print("\n".join(g.log))
        lines = [ln for g, _ in games for ln in g.lines]
        write_lines(os.path.join(HERE, name + ".jsonl"), lines)
        write_expect(os.path.join(HERE, name + ".expect.json"), desc, {g.gid: e for g, e in games})
    print(f"{len(CASES)} cases written")


if __name__ == "__main__":
    main(sys.argv)
