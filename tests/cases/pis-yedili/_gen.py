"""Writes the pis-yedili scenario cases (NAME.jsonl + NAME.expect.json) in this folder.

Built move by move with ../bazito/_casekit.py (card accounting only); the comments say why
each move is legal or which rule it breaks. Run: python _gen.py [-v NAME]
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bazito"))
from _casekit import Game, hand_out, pis_value, totals, write_expect, write_lines  # noqa: E402

P3 = ["ayse", "mert", "deniz"]  # clockwise; dealer deniz -> ayse opens
P7 = ["ayse", "mert", "deniz", "emre", "selin", "can", "ece"]  # dealer ece -> ayse opens
CASES: dict = {}


def case(fn):
    CASES[fn.__name__.replace("_", "-")] = fn
    return fn


def new(gid: str, players=P3, **extra) -> Game:
    return Game(gid, "pis-yedili", players, **extra)


ONE = {"match": {"hands": 1}}


def game_entry(status, violations, hands=..., tot=...):
    e = {"status": status, "violations": violations}
    if hands is not ...:
        e["hands"] = hands
    if tot is not ...:
        e["totals"] = tot
    return e


# --------------------------------------------------------------------------------------
# The fast hand: the opener sheds 3C, then AH AD 9D in one turn (A follows), then one card
# a turn and goes out on her 7th card (7D: x3). The second seat keeps JS 4D (worked check 7).
FAST = {
    "opener": "3C AH AD 9D KH 6C",  # + the last card
    "second": "AC 5C 9S QH 6D JS 4D",
    "third": "5H KS QC 2D TC 3S 4H",
}


def fast_hand(g: Game, hand: int, dealer: str, last=("7D", None), upto=None, **deal_extra):
    ps = g.players
    o = ps[(ps.index(dealer) + 1) % 3]
    s = ps[(ps.index(dealer) + 2) % 3]
    t = dealer
    g.deal(hand, dealer, {o: FAST["opener"] + " " + last[0], s: FAST["second"],
                          t: FAST["third"]}, **deal_extra)
    moves = [
        (o, "3C"),  # the opening club
        (s, "AC"),  # on 3C: suit; an A: one more card matching it
        (s, "5C"),  # the A's suit; not an A: the turn ends
        (t, "5H"),  # rank
        (o, "AH"),  # suit
        (o, "AD"),  # follows the A by rank, and asks again
        (o, "9D"),  # follows AD by suit
        (s, "9S"),  # rank
        (t, "KS"),  # suit
        (o, "KH"),  # rank
        (s, "QH"),  # suit
        (t, "QC"),  # rank
        (o, "6C"),  # suit
        (s, "6D"),  # rank
        (t, "2D"),  # suit (a 2 has no effect)
    ]
    for p, c in moves:
        if upto is not None and g.seq > upto:
            return o, s, t
        g.play(p, c)
    g.play(o, last[0], suit=last[1])  # the opener's last card: she wins at once
    return o, s, t


def fast_scores(g: Game, winner: str, mult: int) -> dict:
    return g.scores(winner, pis_value, mult)


# ---------------------------------------------------------------- scoring
@case
def wc7_out_on_seven_triples():
    g = new("py-wc7", **ONE)
    _o, _s, _t = fast_hand(g, 1, "deniz")
    g.holds("mert", "JS 4D")
    sc = fast_scores(g, "ayse", 3)
    assert sc["mert"] == 87
    g.end(1, winners=["ayse"], scores=sc)
    g.result(totals=sc, winners=["ayse"])
    return ("Worked check 7 (rules.md): out on a 7 while a rival holds JS 4D: 29 x 3 = 87 "
            "(deniz's TC 3S 4H: 17 x 3 = 51). The last card's effect (+3) is not applied; A "
            "follows (AH AD 9D in one turn); `match` {\"hands\": 1}: end and result claims "
            "right, compliant.",
            [(g, game_entry("compliant", [], [hand_out(1, "ayse", sc)], sc))])


@case
def jack_finish_doubles():
    a = new("py-j-finish", **ONE)
    fast_hand(a, 1, "deniz", last=("JC", "S"))  # on 2D: any J; declares spades (not diamonds)
    sa = fast_scores(a, "ayse", 2)
    assert sa["mert"] == 58
    a.end(1, winners=["ayse"], scores=sa)
    b = new("py-j-finish-same-suit", **ONE)
    fast_hand(b, 1, "deniz", last=("JC", "D"))  # declares the current suit: bad_suit
    w = b.lines[-1]["seq"]
    sb = fast_scores(b, "ayse", 2)
    b.end(1, winners=["ayse"], scores=sb)
    return ("pis-yedili points: won with a J, others x2 (JS 4D: 29 x 2 = 58). A J declares a "
            "suit different from the current suit; declaring the same is bad_suit, and this "
            "holds for a winning J too (rules.md decision): game same-suit wins all the same.",
            [(a, game_entry("compliant", [], [hand_out(1, "ayse", sa)], sa)),
             (b, game_entry("violations", [[w, "bad_suit", "ayse"]], [hand_out(1, "ayse", sb)], sb))])


@case
def no_starter_in_deal():
    g = new("py-starter", **ONE)
    fast_hand(g, 1, "deniz", starter="9C")  # pis-yedili has no starter: bad_deal (applied)
    sc = fast_scores(g, "ayse", 3)
    g.end(1, winners=["ayse"], scores=sc)
    return ("pis-yedili: no starter, the discard pile starts empty (rules.md); a starter in "
            "the deal is a forbidden starter: bad_deal (notation.md). The opening 3C is a club "
            "and also matches the 9C, so the rest replays alike under any handling.",
            [(g, game_entry("violations", [[1, "bad_deal", None]], [hand_out(1, "ayse", sc)], sc))])


# ---------------------------------------------------------------- the opening
@case
def opening_draws_until_club():
    g = new("py-open-draw", **ONE)
    g.deal(1, "deniz", {
        "ayse": "5D 9H KS QD 4H 8D TS",
        "mert": "9C 3S 6H AD 7H 8S KH",
        "deniz": "9D 2D QS 3H 8C 6S KC",
    }, stock_top="5H KD 2C")
    g.none_of("ayse", suits="C")
    g.draw("ayse", n=1)  # 5H: no club, draw again
    g.draw("ayse", n=1)  # KD
    g.draw("ayse", n=1)  # 2C: a club
    g.play("ayse", "2C")  # and she plays it
    g.play("mert", "9C")  # clubs
    g.play("deniz", "9D")  # rank
    g.play("ayse", "5D")  # suit
    return ("pis-yedili opening: the seat after the dealer must play a club; holding none, "
            "they draw one card at a time, one `draw` line per card, until they draw one, and "
            "play it (rules.md). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


OPEN = {
    "ayse": "4C 9H KS QD 4H 8D TS",
    "mert": "9C 4S 6H AD 7H 8S KH",
    "deniz": "9D 2D QS 3H 8C 6S KC",
}


@case
def opening_holding_club_must_play():
    a = new("py-open-mp-draw", **ONE)
    a.deal(1, "deniz", OPEN, stock_top="5H")
    a.draw("ayse", n=1)  # holding 4C: must_play
    a.play("ayse", "4C")  # the opening goes on until she lays a club
    a.play("mert", "4S")  # rank
    a.play("deniz", "6S")  # suit
    b = new("py-open-mp-pass", **ONE)
    b.deal(1, "deniz", OPEN)
    b.pass_("ayse")  # holding 4C: must_play
    return ("pis-yedili opening: drawing while holding a club is must_play (rules.md; "
            "wrong-action table: opener holding a club, draw or pass -> must_play). Game draw: "
            "the opener then lays her club (see DECISIONS.md: the opening turn goes on). Game "
            "pass: the log stops after the pass.",
            [(a, game_entry("violations", [[2, "must_play", "ayse"]], [])),
             (b, game_entry("violations", [[2, "must_play", "ayse"]], []))])


@case
def opening_not_a_club():
    g = new("py-open-nonclub", **ONE)
    g.deal(1, "deniz", OPEN)
    g.play("ayse", "4H")  # the opening must be a club: illegal_card; applied
    g.play("mert", "4S")  # on 4H: rank
    g.play("deniz", "6S")  # suit
    return ("pis-yedili opening must be a club; a non-club opening is illegal_card "
            "(notation.md code table); applied, play goes on on the 4H.",
            [(g, game_entry("violations", [[2, "illegal_card", "ayse"]], []))])


JC_OPEN = {
    "ayse": "JC 9H KS QD 4H 8D TS",
    "mert": "9C JD 6H AD 7H 8S KH",
    "deniz": "9D 2D QS 3H 8C 6S KC",
}


@case
def opening_jack_of_clubs():
    a = new("py-open-jc", **ONE)
    a.deal(1, "deniz", JC_OPEN)
    a.play("ayse", "JC")  # the opening's effect is not applied: no suit declared, clubs current
    a.play("mert", "9C")  # a club
    a.play("deniz", "9D")  # rank
    b = new("py-open-jc-jack", **ONE)
    b.deal(1, "deniz", JC_OPEN)
    b.play("ayse", "JC")
    b.play("mert", "JD", suit="H")  # on the JC the next must lay a club, not a J: illegal_card
    c = new("py-open-jc-suit", **ONE)
    c.deal(1, "deniz", JC_OPEN, stock_top="5H")
    c.play("ayse", "JC", suit="H")  # the opening J declares nothing: a `suit` on it is bad_suit
    c.draw("mert", n=1)  # drawing is always allowed
    c.pass_("mert")  # and after a draw he may pass
    return ("pis-yedili opening: a JC opening declares nothing, the current suit is clubs, "
            "and the next player must lay a club, not a J (rules.md). Game jc: a club follows, "
            "no violation. Game jc-jack: a J on it is illegal_card. Game jc-suit: a `suit` on "
            "the opening J is 'a suit on a card that declares none': bad_suit; mert's draw and "
            "pass are legal whatever the current suit.",
            [(a, game_entry("incomplete", [], [])),
             (b, game_entry("violations", [[3, "illegal_card", "mert"]], [])),
             (c, game_entry("violations", [[2, "bad_suit", "ayse"]], []))])


# ---------------------------------------------------------------- normal turns
@case
def free_draws_then_play_or_pass():
    g = new("py-free-draw", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 9H KS QD 4H 8D TS",
        "mert": "9C 3S 6H AD 7H 8S KH",
        "deniz": "9D 2D QS 3H 8C 6S KC",
    }, stock_top="5H 2S TD")
    g.play("ayse", "4C")
    g.draw("mert", n=1)  # holds 9C, may draw anyway
    g.draw("mert", n=1)  # after a draw: draw again
    g.play("mert", "9C")  # or play any legal card
    g.draw("deniz", n=1)  # TD
    g.pass_("deniz")  # or pass
    g.play("ayse", "9H")  # rank
    g.play("mert", "5H")  # suit, the card he drew
    return ("pis-yedili normal turn: drawing is always allowed, even when holding a legal "
            "card; after at least one draw the player may draw again (one card a line), play "
            "any legal card, or pass (rules.md). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def pass_before_any_draw():
    g = new("py-pass", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 9H KS QD 4H 8D TS",
        "mert": "9C 3S 6H AD 7H 8S KH",
        "deniz": "9D 2D QS 3H 8C 6S KC",
    })
    g.play("ayse", "4C")
    g.pass_("mert")  # nothing drawn yet this turn: illegal_pass; the turn ends
    g.play("deniz", "KC")  # suit
    g.play("ayse", "KS")  # rank
    return ("Wrong-action table: pis-yedili normal turn, nothing drawn yet this turn, pass -> "
            "illegal_pass (even holding nothing else to do but draw); a wrong pass ends the "
            "turn.",
            [(g, game_entry("violations", [[3, "illegal_pass", "mert"]], []))])


@case
def voluntary_draw_of_two():
    g = new("py-draw-two", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 9H KS QD 4H 8D TS",
        "mert": "9C 3S 6H AD 7H 8S KH",
        "deniz": "9D 2D QS 3H 8C 6S KC",
    }, stock_top="5H 2S")
    g.play("ayse", "4C")
    g.draw("mert", n=2)  # a voluntary draw is one card a line: illegal_draw
    return ("Wrong-action table: a voluntary draw of more than one card -> illegal_draw "
            "(rules.md: draw again, one card a line). The log stops there.",
            [(g, game_entry("violations", [[3, "illegal_draw", "mert"]], []))])


@case
def two_takes_no_target():
    g = new("py-two-target", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 9H KS QD 4H 8D TS",
        "mert": "2C 3S 6H AD 7H 8S KH",
        "deniz": "9D 2D QS 3H 8C 6S KC",
    })
    g.play("ayse", "4C")
    g.play("mert", "2C", target="deniz")  # in pis-yedili a 2 has no effect: bad_target, no gift
    g.play("deniz", "2D")  # deniz moves at once: rank
    return ("pis-yedili: 2, Q, K have no effect (rules.md); a `target` on a card that takes "
            "none is bad_target (notation.md), and no gift is owed: deniz plays on.",
            [(g, game_entry("violations", [[3, "bad_target", "mert"]], []))])


# ---------------------------------------------------------------- J
@case
def jack_wild_but_not_on_jack():
    g = new("py-jack", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 9H JS QD 4H 8D TS",
        "mert": "JH 3S 6H AD 7H JD KH",
        "deniz": "9D 2D QS 3H 8C 6S KC",
    })
    g.play("ayse", "4C")
    g.play("mert", "JH", suit="D")  # any J on a non-J; declares a suit other than clubs
    g.play("deniz", "9D")  # on a J only the declared suit
    g.play("ayse", "JS", suit="H")  # 9D on top: a J is legal again
    g.play("mert", "JD", suit="C")  # a J on a J: illegal_card
    return ("pis-yedili legal cards: when the top card is not a J, a match or any J; when it "
            "is a J, only a card of the declared suit, never a J on a J (rules.md).",
            [(g, game_entry("violations", [[6, "illegal_card", "mert"]], []))])


@case
def jack_declares_current_suit():
    g = new("py-jack-same", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 9H KS QD 4H 8D TS",
        "mert": "JH 3S 6H AD 7H 8S KH",
        "deniz": "9D 2D QS 3H 8C 6S KC",
    })
    g.play("ayse", "4C")
    g.play("mert", "JH", suit="C")  # clubs is the current suit: bad_suit; applied as declared
    g.play("deniz", "KC")  # clubs, as declared
    g.play("ayse", "KS")  # rank
    return ("pis-yedili decision: a J declares a suit different from the current suit before "
            "it; declaring the same suit is bad_suit (rules.md). The line is applied as "
            "recorded.",
            [(g, game_entry("violations", [[3, "bad_suit", "mert"]], []))])


# ---------------------------------------------------------------- 7s
@case
def seven_stack_of_three():
    g = new("py-seven", **ONE)
    g.deal(1, "deniz", {
        "ayse": "7C 9H KS QD 4H 8D TS",
        "mert": "7D 3S 6H AD 5H 8S KH",
        "deniz": "7H 2D QS 3H 8C 6S KC",
    })
    g.play("ayse", "7C")  # the opening club's effect is not applied: no total
    g.play("mert", "7D")  # rank; deniz faces 3
    g.play("deniz", "7H")  # stacks: ayse faces 6
    g.none_of("ayse", ranks="7")
    g.draw("ayse", n=6)  # the whole total; her turn ends
    g.play("mert", "6H")  # 7H is ordinary now: suit
    g.play("deniz", "6S")  # rank
    return ("pis-yedili 7: +3, stacking (3, 6, 9 ...) (rules.md); the opening 7C puts "
            "nothing on mert (the opening club's effect is not applied), so ayse draws 6, "
            "not 9. No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


SEVEN_F = {
    "ayse": "4C 9C KS QD 4H 8D TS",
    "mert": "7C 3S 6H AD 5H 8S KH",
    "deniz": "JD 2D QS 3H 8C 6S KC",
}


@case
def seven_total_faults():
    a = new("py-seven-jack", **ONE)
    a.deal(1, "deniz", SEVEN_F)
    a.play("ayse", "4C")
    a.play("mert", "7C")  # deniz faces 3
    a.play("deniz", "JD", suit="H")  # not even a J answers a total: illegal_card
    b = new("py-seven-pass", **ONE)
    b.deal(1, "deniz", SEVEN_F)
    b.play("ayse", "4C")
    b.play("mert", "7C")
    b.pass_("deniz")  # facing a total: illegal_pass; the turn ends, the total is dropped
    b.play("ayse", "9C")  # on the 7C, no total: suit
    c = new("py-seven-short", **ONE)
    c.deal(1, "deniz", SEVEN_F, stock_top="5D")
    c.play("ayse", "4C")
    c.play("mert", "7C")
    c.draw("deniz", n=1)  # facing 3, a draw of 1 (the stock holds plenty): illegal_draw
    return ("Wrong-action table, facing a total: a non-7 play (a J too) -> illegal_card; "
            "pass -> illegal_pass (ends the turn, dropping the total); a draw of the wrong "
            "number -> illegal_draw. Games jack and short stop after the fault.",
            [(a, game_entry("violations", [[4, "illegal_card", "deniz"]], [])),
             (b, game_entry("violations", [[4, "illegal_pass", "deniz"]], [])),
             (c, game_entry("violations", [[4, "illegal_draw", "deniz"]], []))])


# ---------------------------------------------------------------- 8, T, A
@case
def eight_skips_ten_reverses():
    g = new("py-eight-ten", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 8D 5S QD 4H 9H TS",
        "mert": "8C 5D 6H AD 7H 3S KH",
        "deniz": "TD 2D QS 3H 9C 6S KC",
    })
    g.play("ayse", "4C")
    g.play("mert", "8C")  # suit; deniz is skipped
    g.play("ayse", "8D")  # rank; mert is skipped
    g.play("deniz", "TD")  # suit; reverse: counter-clockwise, mert next
    g.play("mert", "5D")  # suit; then ayse
    g.play("ayse", "5S")  # rank; then deniz
    g.play("deniz", "6S")  # suit
    return ("pis-yedili 8: the next player is skipped; T: reverse (rules.md). No violation; "
            "incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def ace_follow_effects():
    g = new("py-ace", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 8S 9H QD 4H 5D TS",
        "mert": "AC AD 8D 3S 6H 7H KH",
        "deniz": "AS 7S 2D QS 3H 9C KC",
    })
    g.play("ayse", "4C")
    g.play("mert", "AC")  # suit; one more card matching the A
    g.play("mert", "AD")  # an A by rank: it asks again
    g.play("mert", "8D")  # AD's suit; the 8 acts: deniz is skipped
    g.play("ayse", "8S")  # rank; mert skipped
    g.play("deniz", "AS")  # suit
    g.play("deniz", "7S")  # follows by suit; the 7 acts: ayse faces 3
    g.none_of("ayse", ranks="7")
    g.draw("ayse", n=3)
    g.play("mert", "3S")  # 7S ordinary: suit
    return ("pis-yedili A: the player may follow with one more card matching the A's suit or "
            "rank; every card played so has its own effect (an A asks again, an 8 skips, a 7 "
            "puts +3) (rules.md). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def ace_follow_pass_or_none():
    g = new("py-ace-pass", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 5H 9H QD 4H 8D TS",
        "mert": "AC 9C 6H 3S 7H 8S KH",
        "deniz": "AH 2D QS 3D 5D 6S KD",
    })
    g.play("ayse", "4C")
    g.play("mert", "AC")
    g.pass_("mert")  # he holds 9C, a follow; he may pass instead
    g.play("deniz", "AH")  # rank
    g.none_of("deniz", suits="H", ranks="A")  # no follow: the turn ends by itself
    g.play("ayse", "5H")  # suit
    g.play("mert", "6H")  # suit
    return ("pis-yedili A: holding a follow the player plays it or passes; holding none the "
            "turn ends by itself (no line) (rules.md). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def ace_follow_draw_illegal():
    g = new("py-ace-draw", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 5H 9H QD 4H 8D TS",
        "mert": "AC 9C 6H 3S 7H 8S KH",
        "deniz": "2C 2D QS 3H 5D 6S KD",
    }, stock_top="5S")
    g.play("ayse", "4C")
    g.play("mert", "AC")
    g.draw("mert", n=1)  # after an A, a draw is illegal_draw and ends the turn
    g.play("deniz", "2C")  # suit
    return ("pis-yedili A: holding a follow, the player plays it or passes; a draw is "
            "illegal_draw (rules.md; wrong-action table) and ends the turn (rules.md, After a "
            "draw), so deniz moves next.",
            [(g, game_entry("violations", [[4, "illegal_draw", "mert"]], []))])


ACE_J = {
    "ayse": "4C 5H 9H QD 4H 8D TS",
    "mert": "AC JC JD 3S 7H 8S KH",
    "deniz": "3H 2D QS 9C 5D 6S KD",
}


@case
def ace_follow_jack():
    a = new("py-ace-jack", **ONE)
    a.deal(1, "deniz", ACE_J)
    a.play("ayse", "4C")
    a.play("mert", "AC")
    a.play("mert", "JC", suit="H")  # a J of the A's suit follows, and declares (not clubs)
    a.play("deniz", "3H")  # hearts declared
    a.play("ayse", "4H")  # suit
    b = new("py-ace-jack-bad", **ONE)
    b.deal(1, "deniz", ACE_J)
    b.play("ayse", "4C")
    b.play("mert", "AC")
    b.play("mert", "JD", suit="H")  # a J of another suit is no follow: illegal_card
    return ("pis-yedili A: the follow matches the A's suit or rank, a J only if of the A's "
            "suit; it then declares (rules.md). Game jack: JC after AC, no violation. Game "
            "jack-bad: JD after AC is illegal_card.",
            [(a, game_entry("incomplete", [], [])),
             (b, game_entry("violations", [[4, "illegal_card", "mert"]], []))])


@case
def reshuffle_line_in_pis_yedili():
    g = new("py-reshuffle", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 9H KS QD 4H 8D TS",
        "mert": "9C 3S 6H AD 7H 8S KH",
        "deniz": "9D 2D QS 3H 8C 6S KC",
    })
    g.play("ayse", "4C")
    g.play("mert", "9C")
    x = g.add("reshuffle")  # pis-yedili never reshuffles: unexpected_event
    g.play("deniz", "9D")
    g.play("ayse", "9H")
    return ("pis-yedili never reshuffles (rules.md); a `reshuffle` is allowed 'never in "
            "pis-yedili' (notation.md): unexpected_event, player null; nothing changes.",
            [(g, game_entry("violations", [[x["seq"], "unexpected_event", None]], []))])


@case
def penalty_line_in_pis_yedili():
    g = new("py-penalty", **ONE)
    g.deal(1, "deniz", {
        "ayse": "4C 9H KS QD 4H 8D TS",
        "mert": "9C 3S 6H AD 7H 8S KH",
        "deniz": "9D 2D QS 3H 8C 6S KC",
    }, stock_top="5S")
    g.play("ayse", "4C")
    x = g.penalty("mert", "5S", reason="delay")  # persian only: unjustified_penalty, card drawn
    g.play("mert", "9C")  # still mert's turn
    g.play("deniz", "9D")
    return ("`penalty` exists in persian only; outside persian it is unjustified_penalty, "
            "reported and its card drawn (notation.md Fine points); it is not a turn event.",
            [(g, game_entry("violations", [[x["seq"], "unjustified_penalty", "mert"]], []))])


# ---------------------------------------------------------------- blocked hands (7 players)
BLOCK = {
    "ayse": "3C AS KS QS JS TS 9S",
    "mert": "2C 4C 5C 6C 7C 8C 9C",
    "deniz": "TC JC QC KC AC 7S 3D",
    "emre": "4D 5D 6D 7D 8D 9D TD",
    "selin": "QD KD AD 2H 4H 5H 6H",  # 52, nothing fits 3C
    "can": "7H 8H 9H TH QH KH AH",
    "ece": "2S 4S 5S 6S 8S JH 2D",  # 52 too
}


def blocked_start(gid: str) -> Game:
    g = new(gid, players=P7, **ONE)
    g.deal(1, "ece", BLOCK, stock_top="3H 3S JD")  # 52 - 49: a stock of 3
    g.play("ayse", "3C")
    for p in ("mert", "deniz", "emre"):
        g.draw(p, n=1)  # a voluntary draw (emre's empties the stock: no block by itself)
        g.pass_(p)
    assert g.stock == []
    g.none_of("selin", suits="C", ranks="3J")  # selin must draw and cannot: blocked
    return g


@case
def blocked_stock_empty_tie():
    a = blocked_start("py-blocked")
    sa = {p: pis_value(a.hands[p]) for p in P7}
    low = min(sa.values())
    winners = [p for p in P7 if sa[p] == low]
    assert winners == ["selin", "ece"], sa
    sa = {p: 0 if p in winners else v for p, v in sa.items()}
    a.end(1, winners=winners, scores=sa)
    b = blocked_start("py-blocked-play-after")
    x = b.play("selin", "6H")  # the hand is over: unexpected_event, not applied
    b.end(1, winners=winners, scores=sa)
    return ("pis-yedili decision: the hand is blocked when the stock is empty and the player "
            "to move must draw (selin: no legal card, no draw yet); a voluntary draw that "
            "empties the stock does not block by itself (emre). Winners: every player with "
            "the lowest hand value (selin and ece, 52 each, score 0); the others score their "
            "hand value, no multiplier (J 25, 7 20, A 15, K Q T 10). Game play-after: a play "
            "after the blocked hand is unexpected_event and not applied.",
            [(a, game_entry("compliant", [], [hand_out(1, winners, sa, "blocked")], sa)),
             (b, game_entry("violations", [[x["seq"], "unexpected_event", "selin"]],
                            [hand_out(1, winners, sa, "blocked")], sa))])


@case
def blocked_total_short():
    g = new("py-blocked-short", players=P7, **ONE)
    g.deal(1, "ece", {
        "ayse": "3C AS KS QS JS TS 9S",
        "mert": "2C 4C 5C 6C 8C 9C 2D",
        "deniz": "7C TC JC QC KC AC 3D",
        "emre": "4D 5D 6D 8D 9D TD KD",
        "selin": "QD AD 2H 4H 5H 6H 8S",
        "can": "7H 8H 9H TH QH KH AH",
        "ece": "2S 4S 5S 6S 7S 7D JH",
    }, stock_top="3H JD 3S")
    g.play("ayse", "3C")
    g.draw("mert", n=1)
    g.pass_("mert")
    g.play("deniz", "7C")  # suit; emre faces 3, the stock holds 2
    g.none_of("emre", ranks="7")
    g.draw("emre", n=2)  # the draw owed takes the stock's last card short of its total: blocked
    assert g.stock == []
    sc = {p: pis_value(g.hands[p]) for p in P7}
    low = min(sc.values())
    winners = [p for p in P7 if sc[p] == low]
    sc = {p: 0 if p in winners else v for p, v in sc.items()}
    g.end(1, winners=winners, scores=sc)
    return ("pis-yedili decision: the hand is also blocked when a draw owed took the stock's "
            "last card short of its total (emre owes 3, 2 are left: his `draw` of 2 is right, "
            "not illegal_draw); the next line is `end`; lowest hand value wins, no multiplier.",
            [(g, game_entry("compliant", [], [hand_out(1, winners, sc, "blocked")], sc))])


@case
def blocked_opener_without_club():
    g = new("py-blocked-opener", players=P7, **ONE)
    g.deal(1, "ece", {
        "ayse": "AS KS QS JS TS 9S 8S",
        "mert": "2C 4C 5C 6C 7C 8C 9C",
        "deniz": "TC JC QC KC AC 3C 3D",
        "emre": "4D 5D 6D 7D 8D 9D TD",
        "selin": "QD KD AD 2H 4H 5H 6H",
        "can": "7H 8H 9H TH QH KH AH",
        "ece": "2S 4S 5S 6S 7S JH 2D",
    }, stock_top="3H 3S JD")
    for _ in range(3):
        g.none_of("ayse", suits="C")
        g.draw("ayse", n=1)  # no club yet: draw again
    g.none_of("ayse", suits="C")  # still no club and the stock is empty: blocked
    sc = {p: pis_value(g.hands[p]) for p in P7}
    low = min(sc.values())
    winners = [p for p in P7 if sc[p] == low]
    sc = {p: 0 if p in winners else v for p, v in sc.items()}
    g.end(1, winners=winners, scores=sc)
    return ("pis-yedili decision: the hand is blocked when the stock is empty and the opener "
            "has no club (rules.md, Stock exhausted); the opener draws the 3-card stock of a "
            "7-player table one card a line first.",
            [(g, game_entry("compliant", [], [hand_out(1, winners, sc, "blocked")], sc))])


@case
def reshuffle_when_stock_empty():
    g = new("py-reshuffle-empty", players=P7, **ONE)
    g.deal(1, "ece", {
        "ayse": "3C AS KS QS JS TS 9S",
        "mert": "2C 4C 5C 6C 7C 8C 9C",
        "deniz": "TC JC QC KC AC 7S 3D",
        "emre": "7H 8H 9H TH QH KH AH",
        "selin": "QD KD AD 2H 4H 5H 3H",
        "can": "4D 5D 6D 7D 8D 9D TD",
        "ece": "2S 4S 5S 6S 8S JH 2D",
    }, stock_top="6H 3S JD")
    g.play("ayse", "3C")
    for p in ("mert", "deniz", "emre"):
        g.draw(p, n=1)
        g.pass_(p)
    assert g.stock == []
    x = g.add("reshuffle")  # even with an empty stock: pis-yedili never reshuffles
    g.play("selin", "3H")  # rank: selin has a legal card, no block
    g.none_of("can", suits="H", ranks="3J")  # can must draw, the stock is empty: blocked
    sc = {p: pis_value(g.hands[p]) for p in P7}
    low = min(sc.values())
    winners = [p for p in P7 if sc[p] == low]
    sc = {p: 0 if p in winners else v for p, v in sc.items()}
    g.end(1, winners=winners, scores=sc)
    return ("pis-yedili never reshuffles (rules.md; notation.md: a reshuffle is allowed "
            "whenever the stock is empty, never in pis-yedili): unexpected_event with player "
            "null even though the stock is empty; it is not applied, so when can must draw "
            "the hand is blocked.",
            [(g, game_entry("violations", [[x["seq"], "unexpected_event", None]],
                            [hand_out(1, winners, sc, "blocked")], sc))])


# ---------------------------------------------------------------- matches
def rotated_hands(g: Game, plan) -> list[dict]:
    """plan: [(dealer, last card, suit, multiplier)]; returns each hand's scores."""
    res = []
    for i, (dealer, card, suit, mult) in enumerate(plan, start=1):
        o, _s, _t = fast_hand(g, i, dealer, last=(card, suit))
        sc = fast_scores(g, o, mult)
        g.end(i, winners=[o], scores=sc)
        res.append((o, sc))
    return res


@case
def match_default_four_hands():
    g = new("py-match4")
    res = rotated_hands(g, [("deniz", "7D", None, 3), ("ayse", "JC", "S", 2),
                            ("mert", "3D", None, 1), ("deniz", "7D", None, 3)])
    tot = totals(*[sc for _, sc in res])
    low = min(tot.values())
    g.result(totals=tot, winners=[p for p in P3 if tot[p] == low])
    return ("pis-yedili: a game is 4 hands unless the header's `match` says otherwise; the "
            "lowest total wins (rules.md). Four hands (dealer rotating; out on 7 x3, J x2, "
            "a plain card x1, 7 x3), each with its `end`, then a right `result`: compliant.",
            [(g, game_entry("compliant", [], [hand_out(i, o, sc) for i, (o, sc) in enumerate(res, 1)],
                            tot))])


@case
def match_header_two_hands():
    g = new("py-match2", match={"hands": 2})
    res = rotated_hands(g, [("deniz", "3D", None, 1), ("ayse", "7D", None, 3)])
    tot = totals(*[sc for _, sc in res])
    low = min(tot.values())
    g.result(totals=tot, winners=[p for p in P3 if tot[p] == low])
    return ("`match` {\"hands\": 2} ends the game after 2 hands (notation.md Fine points, "
            "Matches); the `result` after hand 2 is in place: compliant.",
            [(g, game_entry("compliant", [], [hand_out(i, o, sc) for i, (o, sc) in enumerate(res, 1)],
                            tot))])


@case
def match_header_target():
    g = new("py-target", match={"target": 100})
    res = rotated_hands(g, [("deniz", "7D", None, 3), ("ayse", "7D", None, 3)])
    tot = totals(*[sc for _, sc in res])
    assert max(totals(res[0][1]).values()) < 100 <= max(tot.values())
    low = min(tot.values())
    g.result(totals=tot, winners=[p for p in P3 if tot[p] == low])
    return ("`match` {\"target\": 100} ends the game after the hand in which any player's "
            "total reaches 100 or more (notation.md Fine points, Matches): after hand 1 the "
            "highest is 87, after hand 2 deniz has 138; the `result` then: compliant.",
            [(g, game_entry("compliant", [], [hand_out(i, o, sc) for i, (o, sc) in enumerate(res, 1)],
                            tot))])


# --------------------------------------------------------------------------------------
def main(argv: list[str]) -> None:
    only = argv[2] if len(argv) > 2 and argv[1] == "-v" else None
    for name, fn in CASES.items():
        desc, games = fn()
        if only == name:
            for g, _ in games:
                print(g.gid)
                print("\n".join(g.log))
        write_lines(os.path.join(HERE, name + ".jsonl"), [ln for g, _ in games for ln in g.lines])
        write_expect(os.path.join(HERE, name + ".expect.json"), desc, {g.gid: e for g, e in games})
    print(f"{len(CASES)} cases written")


if __name__ == "__main__":
    main(sys.argv)
