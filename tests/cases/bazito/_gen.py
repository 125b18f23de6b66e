"""Writes the bazito scenario cases (NAME.jsonl + NAME.expect.json) in this folder.

Each case is built move by move with _casekit (card accounting only); the comments say
why each move is legal or which rule it breaks. Run: python _gen.py [-v NAME]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _casekit import Game, bazito_value, hand_out, write_expect, write_lines

HERE = os.path.dirname(os.path.abspath(__file__))
P = ["sara", "omid", "lale", "reza"]  # clockwise; dealer reza -> sara moves first
CASES: dict = {}


def case(fn):
    CASES[fn.__name__.replace("_", "-")] = fn
    return fn


def new(gid: str, **extra) -> Game:
    return Game(gid, "bazito", P, **extra)


def game_entry(status, violations, hands=..., tot=...):
    """hands/totals: omitted when not given (not compared); None means null."""
    e = {"status": status, "violations": violations}
    if hands is not ...:
        e["hands"] = hands
    if tot is not ...:
        e["totals"] = tot
    return e


# --------------------------------------------------------------------------------------
# The fast hand: sara sheds 8C 8D 3D in one turn, then one card a turn, out on JH (x2).
# reza is left with 5H QS 7D (worked check 5). Used by several cases.
FAST = {
    "sara": "8C 8D 3D 9C KS 4D JH",
    "omid": "3S 9H 6S 9D 2D TC QH",
    "lale": "5S KH 6H 9S AC 3C 8H",
    "reza": "5C KC 4H 4S 5H QS 7D",
}


def fast_hand(g: Game, starter="6C", last=("JH", "D"), hands=FAST, upto=None, pre=None,
              **deal_extra):
    """Plays the fast hand; returns after sara's last card (or once seq `upto` is written).

    pre: {move index: fn(g)} called before that move (0..18, 18 = sara's last card)."""
    pre = pre or {}
    g.deal(1, "reza", hands, starter=starter, **deal_extra)
    moves = [
        ("sara", "8C"),  # on 6C: suit
        ("sara", "8D"),  # follow: another 8
        ("sara", "3D"),  # follow: 8D's suit; not an 8, the turn ends
        ("omid", "3S"),  # on 3D: rank
        ("lale", "5S"),  # on 3S: suit
        ("reza", "5C"),  # on 5S: rank
        ("sara", "9C"),  # on 5C: suit
        ("omid", "9H"),  # rank
        ("lale", "KH"),  # suit
        ("reza", "KC"),  # rank
        ("sara", "KS"),  # rank
        ("omid", "6S"),  # suit
        ("lale", "6H"),  # rank
        ("reza", "4H"),  # suit
        ("sara", "4D"),  # rank
        ("omid", "9D"),  # suit
        ("lale", "9S"),  # rank
        ("reza", "4S"),  # suit; reza keeps 5H QS 7D
    ]
    for i, (p, c) in enumerate(moves):
        if upto is not None and g.seq > upto:
            return g
        if i in pre:
            pre[i](g)
        g.play(p, c)
    if upto is not None and g.seq > upto:
        return g
    if 18 in pre:
        pre[18](g)
    card, suit = last
    g.play("sara", card, suit=suit)  # last card: sara wins at once
    return g


def fast_scores(g: Game, mult: int) -> dict:
    return g.scores("sara", bazito_value, mult)



# ---------------------------------------------------------------- worked checks 1-5
WC1 = {
    "sara": "9H 3H 4D 6C KD QC 2D",
    "omid": "3C 5D 6H AD TH 6D KC",
    "lale": "5C 4C 4H QD 8C 9D KS",
    "reza": "AC 3D 5H KH 8D QH 2C",
}


@case
def wc1_nine_of_spades():
    a = new("bz-wc1-legal")
    a.deal(1, "reza", WC1, starter="9S")
    a.play("sara", "9H")  # on 9S: 9H matches by rank; 3H would not
    a.play("omid", "6H")  # suit
    a.play("lale", "4H")  # suit
    a.play("reza", "KH")  # suit
    a.play("sara", "KD")  # rank
    b = new("bz-wc1-illegal")
    b.deal(1, "reza", WC1, starter="9S")
    b.play("sara", "3H")  # on 9S: neither suit nor rank -> illegal_card; applied
    b.play("omid", "3C")  # on 3H: rank
    b.play("lale", "5C")  # suit
    b.play("reza", "5H")  # rank
    return ("Worked check 1 (rules.md): on 9S holding 9H and 3H only 9H is legal. "
            "Game legal plays 9H (no violation, log stops mid-hand); game illegal plays 3H: "
            "illegal_card, and the card is applied so play continues on 3H.",
            [(a, game_entry("incomplete", [], [])),
             (b, game_entry("violations", [[2, "illegal_card", "sara"]], []))])


@case
def wc2_two_sevens_draw_four():
    g = new("bz-wc2")
    g.deal(1, "reza", {
        "sara": "7C 9H JS 2D QC 4S 8C",
        "omid": "7D 3C KH AS 6D 9S TD",
        "lale": "5H QS 2C 8D 4H KC 3D",
        "reza": "AH 6C 9C TS 5D JD 2H",
    }, starter="5C", stock_top="KS 4C 6H TH 8H")
    g.play("sara", "7C")  # on 5C: suit; omid faces 2
    g.play("omid", "7D")  # stacks: lale faces 4
    g.none_of("lale", ranks="7")
    g.draw("lale", n=4)  # lale has no 7: draws the whole total, turn ends
    g.play("reza", "5D")  # the 7D is an ordinary card now: suit
    g.play("sara", "2D", target="lale")  # suit; gift to lale
    g.draw("lale", n=1)  # the gift
    g.play("omid", "6D")  # play goes on from sara: omid, not skipped
    return ("Worked check 2 (rules.md): after two 7s a player without a 7 draws 4, then the "
            "next player moves (the notation.md example, with a stock). No violation; the "
            "log stops mid-hand: incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def wc3_eight_follow_jack():
    a = new("bz-wc3-jd")
    a.deal(1, "reza", {
        "sara": "8D JD 5S 6C 9H QC 3H",
        "omid": "6S 2C KH 9C TC 5H AD",
        "lale": "6H 2S 3C KC QS 9S 4C",
        "reza": "4H 5C 8S AC KD TS 2H",
    }, starter="4D")
    a.play("sara", "8D")  # suit; sara must follow
    a.play("sara", "JD", suit="S")  # J of the 8's suit: a legal follow, declares spades
    a.play("omid", "6S")  # spades current
    a.play("lale", "6H")  # rank
    a.play("reza", "4H")  # suit
    b = new("bz-wc3-jh")
    b.deal(1, "reza", {
        "sara": "8D JH 5S 6C 9S QC 3C",
        "omid": "9C 2C KH 6S TC 5H AD",
        "lale": "9H 2S 3S KC QS 6H 4C",
        "reza": "4H 5C 8S AC KD TS 2H",
    }, starter="4D")
    b.play("sara", "8D")  # suit; sara must follow
    b.play("sara", "JH", suit="C")  # a J of another suit is no follow: illegal_card; applied, declares clubs
    b.play("omid", "9C")  # clubs current after the applied JH
    b.play("lale", "9H")  # rank
    return ("Worked check 3 (rules.md): after 8D, JD is a legal follow and declares a suit "
            "(game jd: no violation); JH is not (game jh: illegal_card at the JH, which is "
            "applied and declares clubs). Both stop mid-hand.",
            [(a, game_entry("incomplete", [], [])),
             (b, game_entry("violations", [[3, "illegal_card", "sara"]], []))])


@case
def wc4_two_targets_fourth_seat():
    g = new("bz-wc4")
    g.deal(1, "reza", {
        "sara": "2C 9H JS 4D QC 4S 8H",
        "omid": "9C 3C KH AS 6D TD 3H",
        "lale": "9D QS 2H 8D 4H KC 3D",
        "reza": "AH 6C TS 5D JD 2S 6S",
    }, starter="5C", stock_top="KD")
    g.play("sara", "2C", target="reza")  # suit; reza (fourth seat) gets the gift
    g.draw("reza", n=1)  # the gift, at once
    g.play("omid", "9C")  # the second seat still moves next: suit
    g.play("lale", "9D")  # rank
    g.play("reza", "5D")  # suit
    g.play("sara", "4D")  # suit
    return ("Worked check 4 (rules.md): a 2 targeting the fourth seat while the second seat "
            "is next: the fourth draws 1, the second seat still moves next. No violation; "
            "incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def wc5_score_jack_finish_doubles():
    g = new("bz-wc5-j")
    fast_hand(g)
    g.holds("reza", "5H QS 7D")
    s = fast_scores(g, 2)
    assert s["reza"] == 16
    g.end(1, winners=["sara"], scores=s)
    return ("Worked check 5 (rules.md): reza is left with 5H QS 7D = 8 points, and sara goes "
            "out on JH, so 16 (every loser x2: omid 2D TC QH 15 -> 30, lale AC 3C 8H 22 -> 44). "
            "Also 8-follow chains (8C 8D 3D in one turn). The end's claims are right: "
            "compliant.",
            [(g, game_entry("compliant", [], [hand_out(1, "sara", s)], s))])


@case
def wc5_score_plain_finish_with_result():
    g = new("bz-wc5-plain")
    h = dict(FAST)
    h["sara"] = "8C 8D 3D 9C KS 4D 4C"
    fast_hand(g, hands=h, last=("4C", None))  # 4C on 4S: rank
    g.holds("reza", "5H QS 7D")
    s = fast_scores(g, 1)
    assert s["reza"] == 8
    g.end(1, winners=["sara"], scores=s)
    g.result(totals=s, winners=["sara"])
    return ("Worked check 5 (rules.md): 5H QS 7D left = 8 when the winner goes out on a "
            "plain card (4C). A complete one-hand bazito game (the default match) with right "
            "`end` and `result` claims: compliant.",
            [(g, game_entry("compliant", [], [hand_out(1, "sara", s)], s))])

# ---------------------------------------------------------------- turn and hand faults
@case
def not_your_turn_plays_ahead():
    g = new("bz-nyt-play")
    g.deal(1, "reza", {
        "sara": "9H 3H 4D 6C KD QC 2D",
        "omid": "9C 5D 6H AD TH 6D KC",
        "lale": "9D 4C 4H QD 8C 3S KS",
        "reza": "AC 3D 5H KH 8D QH 2C",
    }, starter="5C")
    g.play("omid", "9C")  # sara (seat after the dealer) should move: not_your_turn; a legal card otherwise
    g.play("lale", "9D")  # applied as omid's turn, so lale is next: rank
    g.play("reza", "3D")  # suit
    g.play("sara", "4D")  # suit
    g.play("omid", "6D")  # suit
    return ("bazito first player is the seat after the dealer (rules.md); someone else acting "
            "is not_your_turn, and the event is applied as the actor's normal turn "
            "(notation.md, Judging and continuing), so play goes on after omid.",
            [(g, game_entry("violations", [[2, "not_your_turn", "omid"]], []))])


@case
def not_your_turn_total_falls_on_actor():
    g = new("bz-nyt-total")
    g.deal(1, "reza", {
        "sara": "7C 3H 4D 6C 9H QC 2D",
        "omid": "9C 5D 6H AD TH 6D KC",
        "lale": "9D 4C 4H QD 8C 2S KS",
        "reza": "AC 3D 5H KH 8D QH 3C",
    }, starter="5C", stock_top="KD 3S")
    g.play("sara", "7C")  # omid faces 2
    g.draw("lale", n=2)  # lale draws the 2 instead of omid: not_your_turn; the total falls on her
    g.play("reza", "3C")  # her turn ended with the drawn total; the 7C is ordinary: suit
    g.play("sara", "3H")  # rank
    g.play("omid", "6H")  # suit
    return ("An out-of-turn event is applied as a normal turn of its actor, except that a "
            "pending total falls on them (notation.md, Judging and continuing): lale draws "
            "the 2 out of turn, only not_your_turn, and reza moves next.",
            [(g, game_entry("violations", [[3, "not_your_turn", "lale"]], []))])


@case
def card_not_in_hand_goes_on_pile():
    g = new("bz-cnih")
    g.deal(1, "reza", {
        "sara": "9H 3H 4D 6C KD QC 2D",
        "omid": "3C 5D 6H AD TH 6D KC",
        "lale": "9D 4C 4H QD 8C 3S KS",
        "reza": "AC 3D 5H KH 8D QH 4S",
    }, starter="5C", with_stock=False)
    g.play("sara", "9C", not_held=True)  # an unseen card that would match: card_not_in_hand
    g.play("omid", "3C")  # it went on the pile: clubs
    g.play("lale", "6S", not_held=True)  # not held and no match: card_not_in_hand only
    g.play("reza", "4S")  # 6S is on the pile: suit
    g.play("sara", "4D")  # rank
    return ("card_not_in_hand (notation.md); the card still goes on the pile; "
            "card_not_in_hand is never reported with illegal_card (lale's 6S on 3C).",
            [(g, game_entry("violations", [[2, "card_not_in_hand", "sara"],
                                           [4, "card_not_in_hand", "lale"]], []))])


@case
def illegal_card_jack_against_total():
    g = new("bz-ic-total")
    g.deal(1, "reza", {
        "sara": "7C 3H 4D 6D 9H QC 2D",
        "omid": "JD 5D 6H AD TH 6C KC",
        "lale": "9D 4C 4H QD 8C 2S KS",
        "reza": "AC 3D 5H KH 8D QH 3C",
    }, starter="5C")
    g.play("sara", "7C")  # omid faces 2
    g.play("omid", "JD", suit="H")  # nothing but a 7 answers a total, not a J: illegal_card
    return ("rules.md Common ground, 7s: nothing else answers a pending total, not a J; "
            "facing a total a non-7 play is illegal_card (wrong-action table). The log stops "
            "there.",
            [(g, game_entry("violations", [[3, "illegal_card", "omid"]], []))])


MP = {
    "sara": "9C 3H 4D 6D 9H QD 2D",  # 9C is her only legal card on 5C
    "omid": "3C 5D 6H AD TH 8S KC",
    "lale": "9D 4C 2H QS 8C 3S KS",
    "reza": "AC 3D 5H KH 8D QH 2C",
}


@case
def must_play_draw_and_pass():
    a = new("bz-mp-draw")
    a.deal(1, "reza", MP, starter="5C", stock_top="4H")
    a.draw("sara", n=1)  # holds 9C: must_play; 4H does not fit 5C so her turn ends
    a.play("omid", "3C")  # suit
    a.play("lale", "4C")  # suit
    b = new("bz-mp-pass")
    b.deal(1, "reza", MP, starter="5C")
    b.pass_("sara")  # holds 9C: must_play; a wrong pass ends the turn
    b.play("omid", "3C")
    b.play("lale", "4C")
    return ("bazito Must play if able: drawing or passing while holding a legal card is "
            "must_play (rules.md; wrong-action table, first row). The drawn 4H does not fit, "
            "so the turn ends; a wrong pass ends the turn.",
            [(a, game_entry("violations", [[2, "must_play", "sara"]], [])),
             (b, game_entry("violations", [[2, "must_play", "sara"]], []))])


NOLEGAL = {
    "sara": "9H 3H 4D 6D KD QD 2D",  # nothing fits 5C: no club, no 5, no J
    "omid": "3C 5D 6H AD TH 8S KC",
    "lale": "9D 4C 2H QS 8C 3S KS",
    "reza": "AC 3D 5H KH 8D QH 2C",
}


@case
def illegal_pass_without_draw():
    g = new("bz-ipass")
    g.deal(1, "reza", NOLEGAL, starter="5C")
    g.none_of("sara", suits="C", ranks="5J")
    g.pass_("sara")  # no legal card, nothing drawn: illegal_pass; the turn ends
    g.play("omid", "3C")
    g.play("lale", "4C")
    return ("Wrong-action table: bazito normal turn, nothing drawn yet, no legal card, pass "
            "-> illegal_pass (she must draw 1). A wrong pass ends the turn.",
            [(g, game_entry("violations", [[2, "illegal_pass", "sara"]], []))])


@case
def draw_then_pass_or_play():
    g = new("bz-draw-choice")
    g.deal(1, "reza", {
        "sara": "9H 3H 4D 6D KD QD 2D",
        "omid": "8S 4S 6H AD TH 6S KS",
        "lale": "9C 4C 2C QS 8C 3S KC",
        "reza": "AC 3D 4H KH 8D QH 9S",
    }, starter="5C", stock_top="3C 5H 2S")
    g.none_of("sara", suits="C", ranks="5J")
    g.draw("sara", n=1)  # 3C fits
    g.pass_("sara")  # she may keep it
    g.none_of("omid", suits="C", ranks="5J")
    g.draw("omid", n=1)  # 5H fits by rank
    g.play("omid", "5H")  # and he plays it
    g.none_of("lale", suits="H", ranks="5J")
    g.draw("lale", n=1)  # 2S does not fit 5H: her turn ends by itself, no pass line
    g.play("reza", "KH")  # suit
    g.play("sara", "9H")  # suit
    return ("bazito No legal card: draw exactly 1; if it fits the player may play it or pass, "
            "otherwise the turn ends by itself (rules.md). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def illegal_draw_after_fitting_card():
    g = new("bz-idraw-again")
    g.deal(1, "reza", NOLEGAL, starter="5C", stock_top="6C 4H")
    g.draw("sara", n=1)  # 6C fits 5C
    g.draw("sara", n=1)  # another draw after a fitting card: illegal_draw
    return ("Wrong-action table: bazito, after drawing a card that fits, another draw -> "
            "illegal_draw. The log stops there.",
            [(g, game_entry("violations", [[3, "illegal_draw", "sara"]], []))])


@case
def illegal_draw_wrong_counts():
    a = new("bz-idraw-two")
    a.deal(1, "reza", NOLEGAL, starter="5C", stock_top="4H 2S")
    a.draw("sara", n=2)  # no legal card, but 1 card is the draw: illegal_draw; neither fits, turn ends
    a.play("omid", "3C")
    a.play("lale", "4C")
    b = new("bz-idraw-mp")
    b.deal(1, "reza", MP, starter="5C", stock_top="4H 2S")
    b.draw("sara", n=2)  # holds 9C and draws 2: must_play and illegal_draw together
    b.play("omid", "3C")
    b.play("lale", "4C")
    c = new("bz-idraw-total")
    c.deal(1, "reza", {
        "sara": "7C 3H 4D 6D 9H QC 2D",
        "omid": "8D 5D 6H AD TH 6C KC",
        "lale": "9D 4C 4H QD 8C 2S KS",
        "reza": "AC 3D 5H KH JD QH 3C",
    }, starter="5C", stock_top="KD 3S")
    c.play("sara", "7C")  # omid faces 2
    c.draw("omid", n=1)  # facing a total, a draw of the wrong number: illegal_draw
    return ("bazito draws exactly 1 (rules.md); a draw of the wrong number is illegal_draw "
            "(notation.md); with a legal card held it is must_play and illegal_draw together "
            "(Fine points: reported together); facing a total of 2, drawing 1 is illegal_draw "
            "(wrong-action table). Game c stops after the faulty draw.",
            [(a, game_entry("violations", [[2, "illegal_draw", "sara"]], [])),
             (b, game_entry("violations", [[2, "must_play", "sara"], [2, "illegal_draw", "sara"]], [])),
             (c, game_entry("violations", [[3, "illegal_draw", "omid"]], []))])


@case
def stock_mismatch_draws():
    a = new("bz-sm-stock")
    a.deal(1, "reza", NOLEGAL, starter="5C", stock_top="4H 2S 6S")
    a.draw("sara", "6S", off=True)  # the stock's top is 4H: stock_mismatch; 6S does not fit, turn ends
    a.play("omid", "3C")
    a.play("lale", "4C")
    b = new("bz-sm-seen")
    b.deal(1, "reza", {
        "sara": "5S 3H 4D 6D KD QD 2D",
        "omid": "8H 4H 6H AD TH 6C KC",
        "lale": "9D 4C 2H QS 8C 3S KS",
        "reza": "AC 3D 5H KH 8D QH 2C",
    }, starter="5C", with_stock=False)
    b.play("sara", "5S")  # rank
    b.none_of("omid", suits="S", ranks="5J")
    b.draw("omid", "5C", off=True)  # 5C lies in the pile, it is not unseen: stock_mismatch
    return ("notation.md: with `stock` in the deal a drawn card must be the stock's top "
            "(game stock: sara draws the third card); without it, one not yet seen (game "
            "seen: omid 'draws' the starter from the pile). Both stock_mismatch.",
            [(a, game_entry("violations", [[2, "stock_mismatch", "sara"]], [])),
             (b, game_entry("violations", [[3, "stock_mismatch", "omid"]], []))])


@case
def bad_suit_missing_and_superfluous():
    g = new("bz-bad-suit")
    g.deal(1, "reza", {
        "sara": "JH 3H 4D 6D KD QD 2D",
        "omid": "4H 5D 6S AD TS 8S KC",
        "lale": "9C 4S 2C QS 8C 3S KS",
        "reza": "AC 3D 5H KH 8D QH 9S",
    }, starter="5C")
    g.play("sara", "JH")  # a J without `suit`: bad_suit; its own suit (hearts) stays current
    g.play("omid", "4H")  # hearts
    g.play("lale", "4S", suit="H")  # a suit on a card that declares none: bad_suit; spades current
    g.play("reza", "9S")  # spades
    return ("bad_suit: a J without the suit it must declare (applied, its own suit current), "
            "and a `suit` on a card that declares none (notation.md code table and Fine points).",
            [(g, game_entry("violations", [[2, "bad_suit", "sara"], [4, "bad_suit", "lale"]], []))])


@case
def bad_target_variants():
    g = new("bz-bad-target")
    g.deal(1, "reza", {
        "sara": "2C 3H 4D 6D KD 5H 9H",
        "omid": "2H 5D 6S AD TS 8S KC",
        "lale": "2S 9C 3C QS 8C 3S KS",
        "reza": "5S AC 3D KH 8D QH 9D",
    }, starter="5C")
    g.play("sara", "2C")  # no target: bad_target, no gift
    g.play("omid", "2H", target="omid")  # himself: bad_target, no gift
    g.play("lale", "2S", target="bob")  # not a player: bad_target (target is judged by the rules)
    g.play("reza", "5S", target="sara")  # a target on a card that takes none: bad_target
    g.play("sara", "5H")  # rank; nobody drew a gift, nobody is skipped
    g.play("omid", "5D")  # rank
    return ("bad_target: a 2 without a valid target (missing, self, unknown) and a `target` "
            "on a card that takes none; the line is applied and a 2 without a valid target "
            "gives no gift (notation.md Fine points).",
            [(g, game_entry("violations", [[2, "bad_target", "sara"], [3, "bad_target", "omid"],
                                           [4, "bad_target", "lale"], [5, "bad_target", "reza"]], []))])


@case
def unjustified_penalty_in_bazito():
    g = new("bz-penalty")
    g.deal(1, "reza", {
        "sara": "9C 3H 4D 6D KD QD 2D",
        "omid": "3C 5D 6H AD TH 8S KC",
        "lale": "9D 4C 2H QS 8C 3S KS",
        "reza": "AC 3D 5H KH 8D QH 2C",
    }, starter="5C", stock_top="8H")
    g.play("sara", "9C")
    g.penalty("omid", "8H")  # penalties exist in persian only: unjustified_penalty; the card is drawn
    g.play("omid", "3C")  # a penalty is no turn event: still omid's turn
    g.play("lale", "4C")
    return ("notation.md: `penalty` exists in persian only; unjustified_penalty 'in a ruleset "
            "without table penalties'; outside persian it is reported and its cards drawn "
            "(the stock's top, so no stock_mismatch). It does not move the turn.",
            [(g, game_entry("violations", [[3, "unjustified_penalty", "omid"]], []))])

# ---------------------------------------------------------------- claims and stray events
@case
def score_mismatch_on_end():
    g = new("bz-score-mm")
    fast_hand(g)
    s = fast_scores(g, 2)
    wrong = dict(s)
    wrong["reza"] = 8  # the producer forgot the x2 of a J finish
    e = g.end(1, winners=["sara"], scores=wrong)
    return ("Claimed `scores` differ from the computed ones: score_mismatch at the `end` "
            "(notation.md); reza's 5H QS 7D is 16 after a J finish (worked check 5). The "
            "engine's own hands/totals stay the computed ones.",
            [(g, game_entry("violations", [[e["seq"], "score_mismatch", None]], [hand_out(1, "sara", s)], s))])


@case
def winner_and_totals_mismatch():
    g = new("bz-winner-mm")
    h = dict(FAST)
    h["sara"] = "8C 8D 3D 9C KS 4D 4C"
    fast_hand(g, hands=h, last=("4C", None))
    s = fast_scores(g, 1)
    e = g.end(1, winners=["reza"], scores=s)  # wrong winner
    partial = {k: v for k, v in s.items() if k != "lale"}
    r = g.result(totals=partial, winners=["sara"])  # totals without lale: not the exact object
    return ("Claims: `winners` compare as sets (winner_mismatch at the end), `totals` as "
            "exact objects with every player (a missing player is score_mismatch at the "
            "result) (notation.md Fine points, Claims).",
            [(g, game_entry("violations", [[e["seq"], "winner_mismatch", None], [r["seq"], "score_mismatch", None]],
                            [hand_out(1, "sara", s)], s))])


@case
def unexpected_reshuffle_with_stock():
    g = new("bz-ue-reshuffle")
    box = []
    fast_hand(g, pre={3: lambda g: box.append(g.add("reshuffle"))})  # stock still holds 23 cards
    s = fast_scores(g, 2)
    g.end(1, winners=["sara"], scores=s)
    return ("A `reshuffle` while the stock holds cards is unexpected_event, with player null "
            "(notation.md code table; no player acted). Nothing is drawn afterwards, the hand "
            "ends as usual.",
            [(g, game_entry("violations", [[box[0]["seq"], "unexpected_event", None]], [hand_out(1, "sara", s)], s))])


@case
def unexpected_end_before_over():
    g = new("bz-ue-end")
    fast_hand(g, upto=6)
    e = g.end(1)  # the hand is not decided: unexpected_event; it closes without an outcome
    return ("An `end` before the hand is over is unexpected_event and closes the hand without "
            "an outcome (notation.md Fine points), so no hand is listed.",
            [(g, game_entry("violations", [[e["seq"], "unexpected_event", None]], []))])


@case
def unexpected_play_after_out():
    g = new("bz-ue-after-out")
    fast_hand(g)
    s = fast_scores(g, 2)
    x = g.play("omid", "2D")  # the hand is decided: unexpected_event, not applied
    g.end(1, winners=["sara"], scores=s)  # omid's 2D still counts in his 30
    return ("Anything after the hand is decided is reported (unexpected_event) and not "
            "applied (notation.md Fine points): omid keeps 2D in his score.",
            [(g, game_entry("violations", [[x["seq"], "unexpected_event", "omid"]], [hand_out(1, "sara", s)], s))])


@case
def bad_deal_variants():
    a = new("bz-bd-starter")
    fast_hand(a, starter="7C")  # a 7 may not be the starter: bad_deal; applied, its effect never is
    sa = fast_scores(a, 2)
    a.end(1, winners=["sara"], scores=sa)
    b = new("bz-bd-size")
    h = dict(FAST)
    h["reza"] = FAST["reza"] + " 2H"  # reza dealt 8 cards
    fast_hand(b, hands=h, check=False)
    b.holds("reza", "5H QS 7D 2H")
    sb = fast_scores(b, 2)
    assert sb["reza"] == 20
    b.end(1, winners=["sara"], scores=sb)
    c = new("bz-bd-nostarter")
    c.deal(1, "reza", FAST, starter=None)  # bazito turns up a starter: missing -> bad_deal
    return ("bad_deal (notation.md): a forbidden starter (bazito: not J 2 7 8 T A; game "
            "starter: 7C, the deal still applied and the 7 has no effect, sara is not facing "
            "a total), a hand of 8 cards (game size: applied, reza's extra card is scored), "
            "a missing starter (game nostarter, log ends after the deal).",
            [(a, game_entry("violations", [[1, "bad_deal", None]], [hand_out(1, "sara", sa)], sa)),
             (b, game_entry("violations", [[1, "bad_deal", None]], [hand_out(1, "sara", sb)], sb)),
             (c, game_entry("violations", [[1, "bad_deal", None]], []))])


@case
def sequence_gap():
    g = new("bz-seq-gap")

    def skip(g):
        g.seq += 1  # seq 9 is never written

    fast_hand(g, pre={7: skip})
    s = fast_scores(g, 2)
    g.end(1, winners=["sara"], scores=s)
    return ("A gap in the seq numbers is one `sequence` violation at the next line present "
            "(notation.md Lines, Fine points): seq 9 is missing, reported at 10; the game "
            "replays normally otherwise.",
            [(g, game_entry("violations", [[10, "sequence"]], [hand_out(1, "sara", s)], s))])


@case
def schema_play_without_card():
    g = new("bz-schema-card")

    box = []

    def bad(g):
        box.append(g.add("play", player="omid"))  # required field `card` missing: schema, set aside

    fast_hand(g, pre={3: bad})
    s = fast_scores(g, 2)
    g.end(1, winners=["sara"], scores=s)
    return ("A required field missing is `schema` and the line is set aside, not replayed "
            "(notation.md Fine points); omid's next line is his real turn.",
            [(g, game_entry("violations", [[box[0]["seq"], "schema"]], [hand_out(1, "sara", s)], s))])


@case
def no_header_bazito():
    g = Game("bz-no-header", "bazito", P, header=False)
    fast_hand(g)
    g.end(1, winners=["sara"], scores=fast_scores(g, 2))
    return ("no_header: a game's lines without its `game` line at seq 0, reported at the "
            "first line present (seq 1); nothing can be replayed: invalid, hands/totals null "
            "(notation.md Fine points). See DECISIONS.md: the missing seq 0 is not also a "
            "`sequence` violation.",
            [(g, game_entry("invalid", [[1, "no_header", None]], None, None))])


@case
def unknown_ruleset_variants():
    a = Game("bz-ur-name", "bazito-plus", P)
    fast_hand(a, upto=5)
    b = new("bz-ur-options", options={"tarkesh": False})
    fast_hand(b, upto=5)
    c = new("bz-ur-mode", mode="elimination")
    fast_hand(c, upto=5)
    res = []
    for g in (a, b, c):
        res.append((g, game_entry("invalid", [[0, "unknown_ruleset", None]], None, None)))
    return ("unknown_ruleset: a ruleset, option or mode the engine does not know; options and "
            "`elimination` belong to persian only; the header is unusable: invalid, nothing "
            "replayed, hands/totals null (notation.md Fine points).", res)

# ---------------------------------------------------------------- 7s
SEVENS = {
    "sara": "7C 3H 4D 6D KD QD 2D",
    "omid": "7D 9S 6H AD TH 8S KC",
    "lale": "7H 4C 2H QS 8C 3S KS",
    "reza": "7S AC 3D 5H KH 8D QH",
}


@case
def seven_stack_to_eight():
    g = new("bz-7-stack")
    g.deal(1, "reza", SEVENS, starter="5C")
    g.play("sara", "7C")  # omid faces 2
    g.play("omid", "7D")  # 4
    g.play("lale", "7H")  # 6
    g.play("reza", "7S")  # 8, back on sara
    g.draw("sara", n=8)  # the whole total in one draw; her turn ends
    g.play("omid", "9S")  # the 7S is an ordinary card now: suit
    g.play("lale", "3S")  # suit
    g.play("reza", "3D")  # rank
    return ("bazito 7: the next player faces +2, stacking 2, 4, 6, 8 (rules.md); the total "
            "is drawn in one `draw`, then the 7 on top is ordinary. No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def seven_free_choice_to_draw():
    g = new("bz-7-free")
    h = dict(SEVENS)
    h["reza"] = "7S 4S 3D 5H KH 8D QH"
    g.deal(1, "reza", h, starter="5C")
    g.play("sara", "7C")
    g.draw("omid", n=2)  # omid holds 7D and still draws: a free choice in bazito
    g.play("lale", "4C")  # 7C is ordinary: suit
    g.play("reza", "4S")  # rank
    return ("bazito 7: drawing the total is a free choice even when holding a 7 (rules.md; "
            "unlike persian, no must_play). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def seven_pass_drops_total():
    g = new("bz-7-pass")
    h = dict(SEVENS)
    h["reza"] = "7S 4S 3D 5H KH 8D QH"
    g.deal(1, "reza", h, starter="5C")
    g.play("sara", "7C")
    g.pass_("omid")  # facing a total: illegal_pass (not must_play: bazito never obliges the 7)
    g.play("lale", "4C")  # a wrong pass ends the turn, dropping the total: lale plays normally
    g.play("reza", "4S")
    return ("Wrong-action table: facing a total, `pass` -> illegal_pass; a wrong pass ends the "
            "turn, dropping a pending total (notation.md, Judging and continuing).",
            [(g, game_entry("violations", [[3, "illegal_pass", "omid"]], []))])


# ---------------------------------------------------------------- 8s
EIGHT_REST = {
    "omid": "9C 7S 6H AD TH 8S KH",
    "lale": "9D 2C QS 3C 3S KS 5H",
    "reza": "AC 3D 4H KC 8D QH 2S",
}


@case
def eight_must_follow_if_able():
    g = new("bz-8-must")
    g.deal(1, "reza", {"sara": "8C 4C 3H 4D 6D KD QD", **EIGHT_REST}, starter="5C",
           stock_top="2H")
    g.play("sara", "8C")  # she must follow
    g.draw("sara", n=1)  # holding 4C (a follow): must_play; the draw after an 8 ends her turn
    g.play("omid", "9C")  # on 8C: suit
    g.play("lale", "9D")  # rank
    return ("bazito 8: must follow if able (rules.md decision); wrong-action table: follow "
            "after an 8 holding a follow, draw -> must_play. The drawn 2H does not fit, so "
            "the turn ends under any reading.",
            [(g, game_entry("violations", [[3, "must_play", "sara"]], []))])


@case
def eight_failed_follow_ends_turn():
    g = new("bz-8-failed")
    g.deal(1, "reza", {"sara": "8C JH 3H 4D 6D KD QD", **EIGHT_REST}, starter="5C",
           stock_top="TC")
    g.play("sara", "8C")
    g.none_of("sara", suits="C", ranks="8")  # JH is not of the 8's suit: no follow held
    g.draw("sara", n=1)  # the failed-follow draw: TC would fit, but the turn ends
    g.play("omid", "9C")  # omid moves, no pass by sara
    g.play("lale", "9D")
    return ("bazito 8: only a J of the 8's suit follows (JH does not, so no must_play); "
            "without a follow the player draws 1 and the turn ends even if that card would "
            "fit (rules.md). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def eight_follow_eight_asks_again():
    a = new("bz-8-chain")
    a.deal(1, "reza", {"sara": "8C 8H 5H 4D 6D KD QD",
                       "omid": "4S 9C 6H AD TH 7S KH",
                       "lale": "9D 2C QS 3C 3S KS 6S",
                       "reza": "AC 3D 4H KC 8D QH 2S"}, starter="5C")
    a.play("sara", "8C")
    a.play("sara", "8H")  # another 8: a follow, which asks for another follow
    a.play("sara", "5H")  # of 8H's suit: the chain ends
    a.play("omid", "6H")  # suit
    a.play("lale", "6S")  # rank
    b = new("bz-8-chain-bad")
    b.deal(1, "reza", {"sara": "8C 8H 4C 4D 6D KD QD",
                       "omid": "4S 9C 6H AD TH 7S KH",
                       "lale": "9D 2C QS 3C 3S KS 5H",
                       "reza": "AC 3D 4H KC 8D QH 2S"}, starter="5C")
    b.play("sara", "8C")
    b.play("sara", "8H")
    b.play("sara", "4C")  # the follow must now be a heart or an 8: illegal_card (applied)
    b.play("omid", "4S")  # on 4C: rank
    return ("bazito 8: a follow that is itself an 8 asks for another follow, matching the new "
            "8 (rules.md). Game chain: 8C 8H 5H, no violation. Game chain-bad: 8C 8H 4C, "
            "the club no longer follows: illegal_card.",
            [(a, game_entry("incomplete", [], [])),
             (b, game_entry("violations", [[4, "illegal_card", "sara"]], []))])


@case
def eight_follow_pass_illegal():
    g = new("bz-8-pass")
    g.deal(1, "reza", {"sara": "8C 3H 4D 6D KD QD 2D", **EIGHT_REST}, starter="5C")
    g.play("sara", "8C")
    g.none_of("sara", suits="C", ranks="8J")
    g.pass_("sara")  # no follow held, nothing drawn: she must draw; illegal_pass, turn ends
    g.play("omid", "9C")
    g.play("lale", "9D")
    return ("Wrong-action table: follow after an 8, no follow held, nothing drawn (bazito), "
            "pass -> illegal_pass; a wrong pass ends the turn.",
            [(g, game_entry("violations", [[3, "illegal_pass", "sara"]], []))])


@case
def eight_follow_with_seven():
    g = new("bz-8-seven")
    g.deal(1, "reza", {"sara": "8C 7C 3H 4D 6D KD QD",
                       "omid": "9C 4S 6H AD TH 8S KH",
                       "lale": "9D 2C QS 4C 3S KS 5H",
                       "reza": "AC 3D 4H KC 8D QH 2S"}, starter="5C")
    g.play("sara", "8C")
    g.play("sara", "7C")  # a follow of the 8's suit; its own effect applies: omid faces 2
    g.draw("omid", n=2)
    g.play("lale", "4C")  # 7C ordinary now: suit
    return ("bazito 8: the follow is an ordinary play of its own (a 7 of the 8's suit puts +2 "
            "on the next player). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


# ---------------------------------------------------------------- T and A
@case
def ten_reverses():
    g = new("bz-ten")
    g.deal(1, "reza", {
        "sara": "TC 3H 5S 6D KD QD 2D",
        "omid": "TD 9S 6H AD TH 8S KC",
        "lale": "9D 4C 2H QS 8C 3S 4D",
        "reza": "9C AH 3D 5H KH 8D QH",
    }, starter="5C")
    g.play("sara", "TC")  # reverse: counter-clockwise, reza next
    g.play("reza", "9C")  # suit; next lale
    g.play("lale", "9D")  # rank; next omid
    g.play("omid", "TD")  # suit; reverse again: clockwise, lale next
    g.play("lale", "4D")  # suit
    g.play("reza", "3D")  # suit
    g.play("sara", "KD")  # suit
    return ("bazito T: direction reverses; the next player is found in the new direction "
            "(rules.md). Two reversals, no violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


ACES = {
    "sara": "AC 3H 4D 2S KD QD AD",
    "omid": "4S 9C 6H TH 8C 2C KC",
    "lale": "6C 4C 2H QS 8S 3S 9D",
    "reza": "6D 9S 3D 5H KH 8D QH",
}


@case
def ace_skips():
    a = new("bz-ace")
    a.deal(1, "reza", ACES, starter="5C")
    a.play("sara", "AC")  # omid is skipped
    a.play("lale", "6C")  # suit
    a.play("reza", "6D")  # rank
    a.play("sara", "AD")  # suit; omid skipped again
    a.play("lale", "9D")  # suit
    a.play("reza", "3D")  # suit
    a.play("sara", "4D")  # suit
    a.play("omid", "4S")  # rank: omid's first turn
    b = new("bz-ace-skipped-acts")
    b.deal(1, "reza", ACES, starter="5C")
    b.play("sara", "AC")
    b.play("omid", "9C")  # omid is skipped: not_your_turn; applied as his turn
    b.play("lale", "6C")  # lale follows omid
    return ("bazito A: the next player is skipped (rules.md). Game ace: no violation. Game "
            "ace-skipped-acts: the skipped player plays anyway: not_your_turn, applied as his "
            "normal turn so lale moves after him.",
            [(a, game_entry("incomplete", [], [])),
             (b, game_entry("violations", [[3, "not_your_turn", "omid"]], []))])


# ---------------------------------------------------------------- 2s (gifts)
def gift_deal(omid: str = "9C 7S 6H AD TH 8S KH") -> dict:
    return {"sara": "2C 3H 4D 6D 9H QD 4S",
            "omid": omid,
            "lale": "9D 4C 2H QS 8C 3S KS",
            "reza": "AC 3D 5H 6C 8D QH 2S"}


@case
def gift_target_next_not_skipped():
    g = new("bz-gift-next")
    g.deal(1, "reza", gift_deal(), starter="5C", stock_top="KD")
    g.play("sara", "2C", target="omid")  # suit; omid, the next player, is the target
    g.announce("lale")  # announce is no turn event; outside persian accepted and ignored
    g.draw("omid", n=1)  # the gift
    g.play("omid", "9C")  # not skipped: omid still has his turn
    g.play("lale", "9D")  # rank
    g.play("reza", "3D")  # suit
    return ("bazito 2: the target draws 1 at once, then play goes on from the 2's player as "
            "if nothing happened (the target is not skipped) (rules.md); non-turn lines may "
            "stand between a 2 and its gift draw (Fine points). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def gift_owed_other_player_acts():
    g = new("bz-gift-other")
    g.deal(1, "reza", gift_deal(), starter="5C")
    g.play("sara", "2C", target="lale")
    g.play("omid", "9C")  # lale's gift is owed first: not_your_turn; the gift is forgone
    g.play("lale", "9D")  # her normal turn after omid (she never draws the gift)
    g.play("reza", "3D")
    return ("Wrong-action table: a gift owed, another player's turn event -> not_your_turn; "
            "the gift is forgone once another turn event takes its place (Fine points).",
            [(g, game_entry("violations", [[3, "not_your_turn", "omid"]], []))])


@case
def gift_target_plays():
    a = new("bz-gift-next-plays")
    a.deal(1, "reza", gift_deal(), starter="5C")
    a.play("sara", "2C", target="omid")
    a.play("omid", "9C")  # the target plays instead of drawing: unexpected_event
    a.play("lale", "9D")
    a.play("reza", "3D")
    b = new("bz-gift-far-plays")
    b.deal(1, "reza", gift_deal(), starter="5C")
    b.play("sara", "2C", target="lale")
    b.play("lale", "4C")  # the target, not next, plays: unexpected_event and not_your_turn
    b.play("reza", "6C")  # applied as lale's turn: reza follows her; suit
    b.play("sara", "6D")  # rank
    return ("Wrong-action table: a gift owed, the target plays -> unexpected_event; reported "
            "together with not_your_turn when the target is not next (Fine points). The play "
            "is applied as the target's normal turn and the gift is forgone.",
            [(a, game_entry("violations", [[3, "unexpected_event", "omid"]], [])),
             (b, game_entry("violations", [[3, "unexpected_event", "lale"],
                                           [3, "not_your_turn", "lale"]], []))])


@case
def gift_target_passes():
    g = new("bz-gift-pass")
    g.deal(1, "reza", gift_deal(omid="9S 7S 6H AD TH 8S KH"), starter="5C")
    g.play("sara", "2C", target="omid")
    g.none_of("omid", suits="C", ranks="2J")
    g.pass_("omid")  # the target passes instead of drawing the gift: illegal_pass
    return ("Wrong-action table: a gift owed, the target passes -> illegal_pass. The target "
            "is also the next player and holds nothing that fits, so no other code applies; "
            "the log stops there.",
            [(g, game_entry("violations", [[3, "illegal_pass", "omid"]], []))])


# ---------------------------------------------------------------- J
@case
def jack_wild_any_suit():
    g = new("bz-jack")
    g.deal(1, "reza", {
        "sara": "JS 3H 4D 6D KD QD 2D",
        "omid": "JD 9C 6H AD TH 8S KH",
        "lale": "4H 4C 2C QS 8C 3S KS",
        "reza": "JC 3D 5H KC 8D QH 2S",
    }, starter="5C")
    g.play("sara", "JS", suit="S")  # a J is legal on anything; may declare its own suit
    g.play("omid", "JD", suit="H")  # a J on a J, declaring another suit
    g.play("lale", "4H")  # hearts
    g.play("reza", "JC", suit="D")  # reza could play 5H or QH; a J is as legal
    g.play("sara", "6D")  # diamonds
    return ("bazito J: legal on anything in a normal turn; its player declares any of the "
            "four suits (may equal the J's own suit) (rules.md). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


# ---------------------------------------------------------------- the last card
@case
def last_card_seven_no_total():
    g = new("bz-last-seven")
    h = dict(FAST)
    h["sara"] = "8C 8D 3D 9C KS 4D 7S"
    fast_hand(g, hands=h, last=("7S", None))  # 7S on 4S; no total on omid
    s = fast_scores(g, 1)
    g.end(1, winners=["sara"], scores=s)
    return ("Winning a hand: the effects of the last card are not applied (no total) "
            "(rules.md Common ground); the next line is the `end`. Compliant.",
            [(g, game_entry("compliant", [], [hand_out(1, "sara", s)], s))])


@case
def last_card_two_target_ignored():
    g = new("bz-last-two")
    h = dict(FAST)
    h["sara"] = "8C 8D 3D 9C KS 4D 2S"
    fast_hand(g, hands=h, last=("2S", None))
    g.lines[-1]["target"] = "omid"  # allowed and ignored on a 2 that is its player's last card
    s = fast_scores(g, 1)
    x = g.draw("omid", n=1)  # a gift after the hand is decided: unexpected_event, not applied
    g.end(1, winners=["sara"], scores=s)
    return ("A `target` on a 2 that is its player's last card is allowed and ignored (Fine "
            "points); no gift is owed (the last card's effect is not applied), so omid's draw "
            "after the hand is decided is unexpected_event and not applied; his score is "
            "unchanged.",
            [(g, game_entry("violations", [[x["seq"], "unexpected_event", "omid"]],
                            [hand_out(1, "sara", s)], s))])


@case
def last_card_jack_without_suit():
    g = new("bz-last-jack-nosuit")
    fast_hand(g, last=("JH", None))
    w = g.lines[-1]
    s = fast_scores(g, 2)
    g.end(1, winners=["sara"], scores=s)
    return ("Winning a hand: a J still declares its suit (rules.md), so a winning J without "
            "`suit` is bad_suit; the hand is still won, with the x2 of a J finish.",
            [(g, game_entry("violations", [[w["seq"], "bad_suit", "sara"]],
                            [hand_out(1, "sara", s)], s))])


# ---------------------------------------------------------------- how a log stops
@case
def incomplete_mid_hand():
    g = new("bz-incomplete")
    fast_hand(g, upto=12)
    return ("A log that stops inside a hand is incomplete (notation.md): no violation, no "
            "decided hand.",
            [(g, game_entry("incomplete", [], []))])


@case
def incomplete_decided_without_end():
    g = new("bz-decided-no-end")
    fast_hand(g)
    s = fast_scores(g, 2)
    return ("A log that stops inside a hand, even if decided, is incomplete; `hands` lists "
            "the hands decided when the log stops, `totals` sums them (notation.md).",
            [(g, game_entry("incomplete", [], [hand_out(1, "sara", s)], s))])


@case
def aborted_game():
    g = new("bz-abort")
    fast_hand(g, upto=8)
    g.abort("table closed by server")
    return ("`abort`: the game stopped unfinished; status aborted (no violation), no hand "
            "decided (notation.md).",
            [(g, game_entry("aborted", [], []))])


# ---------------------------------------------------------------- the stock runs dry
# 23 stock cards drawn legally: a J/spade opening round, four 7s (8 cards), four 8s each
# with a failed-follow draw (4), four 2s each with a gift (4), then seven turns in which the
# mover holds nothing that fits, draws a spade and plays it (7). Then reza must draw.
DRY_HANDS = {
    "sara": "JS 9D 7C 8H 2S AC AD",
    "omid": "4S JD 7D 8S 2H KC 3H",
    "lale": "QS 3C 7H 8C 2D 6D KH",
    "reza": "JH JC 7S 8D 2C 6C 6H",
}
DRY_STOCK = ("3D 4C 4D 5D 9C TC TD QC "  # sara's 8
             "5H TH QH AH "  # failed follows: omid lale reza sara
             "9H 4H KD QD "  # gifts: lale reza sara omid
             "3S 9S AS 5S TS 6S KS")  # the seven draw-and-play turns


def dry_game(gid: str, with_stock: bool) -> Game:
    g = new(gid)
    g.deal(1, "reza", DRY_HANDS, starter="5C", stock_top=DRY_STOCK, with_stock=with_stock)
    g.play("sara", "JS", suit="S")
    g.play("omid", "4S")
    g.play("lale", "QS")
    g.play("reza", "JH", suit="D")
    g.play("sara", "9D")
    g.play("omid", "JD", suit="C")
    g.play("lale", "3C")
    g.play("reza", "JC", suit="C")
    g.play("sara", "7C")  # clubs declared
    g.play("omid", "7D")
    g.play("lale", "7H")
    g.play("reza", "7S")
    g.draw("sara", "3D 4C 4D 5D 9C TC TD QC")  # total 8
    g.play("omid", "8S")  # on 7S: suit
    g.none_of("omid", suits="S", ranks="8")
    g.draw("omid", "5H")  # failed follow
    g.play("lale", "8C")
    g.none_of("lale", suits="C", ranks="8")
    g.draw("lale", "TH")
    g.play("reza", "8D")
    g.none_of("reza", suits="D", ranks="8")
    g.draw("reza", "QH")
    g.play("sara", "8H")
    g.none_of("sara", suits="H", ranks="8")
    g.draw("sara", "AH")
    g.play("omid", "2H", target="lale")  # on 8H: suit
    g.draw("lale", "9H")
    g.play("lale", "2D", target="reza")
    g.draw("reza", "4H")
    g.play("reza", "2C", target="sara")
    g.draw("sara", "KD")
    g.play("sara", "2S", target="omid")
    g.draw("omid", "QD")
    for p, top_rank, c in [("omid", "2", "3S"), ("lale", "3", "9S"), ("reza", "9", "AS"),
                           ("omid", "A", "5S"), ("lale", "5", "TS"), ("omid", "T", "6S"),
                           ("sara", "6", "KS")]:
        g.none_of(p, suits="S", ranks=top_rank + "J")
        g.draw(p, c)  # fits
        g.play(p, c)  # AS skips sara; TS reverses: omid, sara, reza follow lale
    g.none_of("reza", suits="S", ranks="KJ")  # reza must draw, the stock is empty
    if with_stock:
        assert g.stock == []
    return g


NEW_STOCK = ("8C 2H 7D QS 9D 3C 2S 4S 8S 5C JS JH JD 7C 2D 5S 7H 8H 3S TS JC 9S 2C 7S AS "
             "8D 6S")


def dry_tail(g: Game) -> None:
    g.draw("reza", "8C")  # does not fit KS: his turn ends
    g.play("lale", "KH")  # counter-clockwise since TS: lale; rank
    g.play("omid", "3H")  # suit


@case
def reshuffle_with_stock():
    g = dry_game("bz-reshuffle-stock", with_stock=True)
    g.reshuffle(NEW_STOCK)  # the pile less KS, in a new order; the draw takes its top
    dry_tail(g)
    return ("Stock runs out: bazito turns the discard pile, all but its top card, into a new "
            "stock, recorded as a `reshuffle` line (rules.md decision); its `stock`, given, is "
            "the pile less its top in some order and later draws take its top (notation.md). "
            "Also: J declarations, four 7s (8 drawn), four failed follows, four gifts, A skip "
            "and T reverse while drawing. No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def reshuffle_without_stock():
    g = dry_game("bz-reshuffle-nostock", with_stock=False)
    g.reshuffle(write=False)
    dry_tail(g)  # 8C was in the pile: one of the reshuffled cards
    return ("A `reshuffle` without `stock` (optional field) and a deal without `stock`: every "
            "drawn card must be unseen; after the reshuffle the pile's cards (but its top) "
            "are unseen again (notation.md). No violation; incomplete.",
            [(g, game_entry("incomplete", [], []))])


@case
def reshuffle_missing_before_draw():
    g = dry_game("bz-reshuffle-missing", with_stock=True)
    g.reshuffle(write=False)
    g.lines.pop()  # no reshuffle line was written
    g.seq -= 1
    x = g.draw("reza", "8C")  # from an empty stock, the pile could have been turned: stock_mismatch
    g.play("lale", "KH")  # the pile was turned implicitly; play goes on
    g.play("omid", "3H")
    return ("A draw from an empty stock when the pile could have been turned (no `reshuffle` "
            "line) is stock_mismatch; the pile is then turned implicitly (notation.md Fine "
            "points), so the drawn 8C (from the pile) raises nothing more.",
            [(g, game_entry("violations", [[x["seq"], "stock_mismatch", "reza"]], []))])


@case
def reshuffle_wrong_stock():
    g = dry_game("bz-reshuffle-wrong", with_stock=True)
    bad = NEW_STOCK.replace("8C", "KS")  # includes the pile's top, leaves out 8C
    x = g.add("reshuffle", stock=bad.split())
    return ("A `reshuffle`'s `stock`, when given, must be the discard pile less its top card, "
            "in some order, else stock_mismatch (notation.md); player null (no player acted). "
            "The log stops there.",
            [(g, game_entry("violations", [[x["seq"], "stock_mismatch", None]], []))])


# --------------------------------------------------------------------------------------
# Cases that share one file (several independent games).
MERGE = {
    "not-your-turn": ["not-your-turn-plays-ahead", "not-your-turn-total-falls-on-actor"],
    "illegal-draw": ["illegal-draw-after-fitting-card", "illegal-draw-wrong-counts"],
    "claims-mismatch": ["score-mismatch-on-end", "winner-and-totals-mismatch"],
    "unexpected-events": ["unexpected-reshuffle-with-stock", "unexpected-end-before-over",
                          "unexpected-play-after-out"],
    "seven-free-draw-and-pass": ["seven-free-choice-to-draw", "seven-pass-drops-total"],
    "eight-follow-faults": ["eight-must-follow-if-able", "eight-follow-pass-illegal"],
    "eight-follow-chains": ["eight-follow-eight-asks-again", "eight-follow-with-seven"],
    "gift-owed-faults": ["gift-owed-other-player-acts", "gift-target-plays", "gift-target-passes"],
    "last-card-no-effect": ["last-card-seven-no-total", "last-card-two-target-ignored",
                            "last-card-jack-without-suit"],
    "incomplete": ["incomplete-mid-hand", "incomplete-decided-without-end"],
    "reshuffle": ["reshuffle-with-stock", "reshuffle-without-stock"],
    "reshuffle-faults": ["reshuffle-missing-before-draw", "reshuffle-wrong-stock"],
}


def main(argv: list[str]) -> None:
    only = None
    if len(argv) > 2 and argv[1] == "-v":
        only = argv[2]
    built = {name: fn() for name, fn in CASES.items()}
    for new_name, parts in MERGE.items():
        descs, games = [], []
        for part in parts:
            d, gs = built.pop(part)
            descs.append(d)
            games.extend(gs)
        built[new_name] = (" | ".join(descs), games)
    for name in sorted(built):
        desc, games = built[name]
        if only and name == only:
            for g, _ in games:
                print(g.gid)
                print("\n".join(g.log))
        lines = [ln for g, _ in games for ln in g.lines]
        write_lines(os.path.join(HERE, name + ".jsonl"), lines)
        write_expect(os.path.join(HERE, name + ".expect.json"), desc,
                     {g.gid: e for g, e in games})
    print(f"{len(built)} cases written")


if __name__ == "__main__":
    main(sys.argv)
