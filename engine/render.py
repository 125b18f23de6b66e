"""Cards and table states as HTML: rank and suit symbol, red and black, legal moves
highlighted. Pure functions returning escaped HTML strings, shared by the Streamlit pages
(through `st.html`) and the self-contained report.

Player ids and anything else read from a log are untrusted: everything is escaped here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from html import escape
from typing import Any

from engine.cards import RED_SUITS, SUIT_NAMES, SUIT_SYMBOLS, pretty
from engine.violations import EXPLANATIONS, Violation

CSS = """
.hk { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2430; }
.hk-card { display: inline-flex; flex-direction: column; justify-content: space-between;
  width: 2.7em; height: 3.7em; margin: 0 .22em .3em 0; padding: .2em .3em; box-sizing: border-box;
  border: 1px solid #b9bfca; border-radius: .4em; background: #fff; font-weight: 700;
  line-height: 1; vertical-align: top; box-shadow: 0 1px 2px rgba(0,0,0,.12); position: relative; }
.hk-card .r { font-size: 1.0em; } .hk-card .s { font-size: 1.35em; align-self: flex-end; }
.hk-red { color: #c62828; } .hk-black { color: #1f2430; }
.hk-card.legal { border: 2px solid #2e7d32; background: #edf7ee; box-shadow: 0 0 0 3px rgba(46,125,50,.25); }
.hk-card.legal::after { content: "✓"; position: absolute; top: -.55em; right: -.45em; font-size: .7em;
  background: #2e7d32; color: #fff; border-radius: 50%; width: 1.35em; height: 1.35em;
  display: flex; align-items: center; justify-content: center; }
.hk-card.played { border: 2px solid #1565c0; box-shadow: 0 0 0 3px rgba(21,101,192,.3); }
.hk-card.played.bad { border-color: #c62828; box-shadow: 0 0 0 3px rgba(198,40,40,.3); }
.hk-card.ghost { opacity: .55; border-style: dashed; }
.hk-card.small { width: 2.1em; height: 2.9em; font-size: .85em; }
.hk-back { display: inline-block; width: 1.9em; height: 2.7em; margin: 0 .15em .3em 0; border-radius: .35em;
  border: 1px solid #8ea2c8; background: repeating-linear-gradient(45deg, #3f5f9f 0 4px, #5c7cc0 4px 8px);
  vertical-align: top; }
.hk-row { display: flex; align-items: flex-start; gap: .6em; padding: .35em .5em; border-radius: .4em; }
.hk-row.mover { background: #fff7e0; outline: 1px solid #f0c96a; }
.hk-row .who { min-width: 8.5em; max-width: 12em; overflow-wrap: anywhere; font-weight: 600; padding-top: .6em; }
.hk-row .who small { display: block; font-weight: 400; color: #5b6475; }
.hk-facts { display: flex; flex-wrap: wrap; gap: .5em 1.4em; align-items: center; margin: .2em 0 .6em; }
.hk-fact { font-size: .95em; } .hk-fact .k { font-weight: 600; color: #5b6475; font-size: .8em;
  text-transform: uppercase; letter-spacing: .04em; display: block; }
.hk-badge { display: inline-block; padding: .1em .5em; border-radius: 1em; font-size: .85em; font-weight: 600; }
.hk-ok { background: #e6f4ea; color: #1e6b34; } .hk-bad { background: #fdecea; color: #b3261e; }
.hk-warn { background: #fff4e0; color: #8a5300; } .hk-info { background: #e8eefc; color: #2a4a9a; }
.hk-event { font-size: 1.1em; font-weight: 600; margin: .2em 0; }
.hk-viol { border-left: 4px solid #c62828; background: #fdf3f2; padding: .35em .6em; margin: .3em 0; border-radius: .2em; }
.hk-viol code { font-weight: 700; color: #b3261e; background: none; }
.hk-viol .why { color: #5b6475; font-size: .9em; }
.hk-legal { color: #2e5d34; font-size: .95em; }
.hk-muted { color: #6b7385; font-size: .9em; }
.hk-why { color: #2a3a5a; font-size: .95em; margin: .25em 0; }
.hk-why b { color: #5b6475; font-weight: 600; }
.hk-aside { border-left: 4px solid #e0a100; background: #fffaf0; padding: .35em .6em; margin: .3em 0; border-radius: .2em; }
.hk-aside pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3em 0; font-size: .85em; }
.hk-recent { display: inline-flex; align-items: flex-end; }
.hk-recent .hk-card.small { opacity: .75; } .hk-recent .hk-card.small:last-child { opacity: 1; }
table.hk-scores { border-collapse: collapse; background: #fff; margin: .3em 0 .6em; }
table.hk-scores th, table.hk-scores td { border: 1px solid #dde1e8; padding: .35em .6em; text-align: left; vertical-align: top; }
table.hk-scores th { background: #eef0f4; font-weight: 600; }
"""

STATUS_CLASS = {
    "compliant": "hk-ok",
    "incomplete": "hk-warn",
    "aborted": "hk-warn",
    "violations": "hk-bad",
    "invalid": "hk-bad",
}

DIRECTION_ARROWS = {"clockwise": "↻ clockwise", "counter-clockwise": "↺ counter-clockwise"}


def style_tag() -> str:
    return f"<style>{CSS}</style>"


def card_html(
    card: str, *, legal: bool = False, played: bool = False, bad: bool = False,
    ghost: bool = False, small: bool = False, note: str | None = None,
) -> str:
    """One card: rank top left, suit symbol bottom right, red or black."""
    rank = "10" if card[0] == "T" else card[0]
    suit = card[1:2]
    colour = "hk-red" if suit in RED_SUITS else "hk-black"
    classes = ["hk-card", colour]
    for flag, name in ((legal, "legal"), (played, "played"), (bad, "bad"), (ghost, "ghost"), (small, "small")):
        if flag:
            classes.append(name)
    title = pretty(card) + (f" — {note}" if note else "")
    return (
        f'<span class="{" ".join(classes)}" title="{escape(title)}" data-card="{escape(card)}">'
        f'<span class="r">{escape(rank)}</span><span class="s">{escape(SUIT_SYMBOLS.get(suit, suit))}</span></span>'
    )


def cards_html(
    cards: Iterable[str], *, legal: Collection[str] = (), played: str | None = None,
    bad: bool = False, small: bool = False,
) -> str:
    out = []
    marked = False
    for card in cards:
        is_played = played == card and not marked
        marked = marked or is_played
        out.append(card_html(card, legal=card in legal, played=is_played, bad=bad and is_played, small=small))
    return "".join(out) or '<span class="hk-muted">(no cards)</span>'


def backs_html(count: int) -> str:
    return '<span class="hk-back"></span>' * min(count, 20) + (
        f'<span class="hk-muted"> ×{count}</span>' if count else '<span class="hk-muted">(no cards)</span>'
    )


def suit_html(suit: str | None) -> str:
    if not suit:
        return "—"
    colour = "hk-red" if suit in RED_SUITS else "hk-black"
    return f'<span class="{colour}">{SUIT_SYMBOLS.get(suit, suit)}</span> {SUIT_NAMES.get(suit, suit)}'


def status_badge(status: str) -> str:
    return f'<span class="hk-badge {STATUS_CLASS.get(status, "hk-info")}">{escape(status)}</span>'


def facts_html(state: dict[str, Any] | None) -> str:
    """Pile top, current suit, direction, pending total or follow-up, whose turn."""
    if not state or state.get("hand") is None:
        return '<div class="hk-facts hk-muted">No hand dealt yet.</div>'
    top = state.get("pile_top")
    recent = list(state.get("pile_recent") or [])[-6:]
    if len(recent) > 1:  # the last cards played, oldest first, the top last
        pile = f'<span class="hk-recent" title="last played, oldest first">{cards_html(recent, small=True)}</span>'
    else:
        pile = card_html(top, small=True) if top else "(empty)"
    facts = [
        ("Pile (last played →)" if len(recent) > 1 else "Pile", pile),
        ("Suit", suit_html(state.get("current_suit"))),
        ("Direction", DIRECTION_ARROWS.get(state.get("direction", ""), escape(str(state.get("direction"))))),
        ("Stock", str(state.get("stock_size", "?"))),
    ]
    if state.get("pending_total"):
        facts.append(("Pending 7 total", f'<span class="hk-badge hk-warn">+{state["pending_total"]}</span>'))
    if state.get("follow_card"):
        facts.append(("Follow-up on", card_html(state["follow_card"], small=True)))
    if state.get("gift_target"):
        facts.append(("2's gift owed by", escape(state["gift_target"])))
    if state.get("laid_aside"):
        facts.append(("7s laid aside (settlement)", cards_html(state["laid_aside"], small=True)))
    if state.get("call_due"):
        facts.append(("Last-card call due", escape(", ".join(state["call_due"]))))
    outcome = state.get("outcome")
    if outcome:
        winners = ", ".join(outcome.get("winners") or []) or "-"
        facts.append(("Decided", f'<span class="hk-badge hk-ok">{escape(winners)} ({escape(outcome.get("reason", ""))})</span>'))
    else:
        mover = state.get("mover")
        facts.append(("To move", f"<b>{escape(mover)}</b>" if mover else "—"))
    body = "".join(f'<div class="hk-fact"><span class="k">{name}</span>{value}</div>' for name, value in facts)
    return f'<div class="hk-facts">{body}</div>'


def legal_text(legal: dict[str, Any] | None, when: str = "now") -> str:
    if not legal:
        return ""
    return f'<div class="hk-legal">Legal {when}: {escape(legal.get("text", ""))}</div>'


def table_html(
    state: dict[str, Any] | None,
    players: Sequence[str],
    *,
    played: str | None = None,
    played_by: str | None = None,
    bad: bool = False,
) -> str:
    """Every player's hand as the state holds it (a hand a player view hides, `None`, as
    card backs, `hand_sizes` counting them), the mover marked and their legal moves, when
    the state has them, highlighted."""
    if not state or state.get("hand") is None:
        return f'<div class="hk">{facts_html(state)}</div>'
    hands: dict[str, list[str] | None] = state.get("hands", {})
    sizes: dict[str, int] = state.get("hand_sizes") or {}
    legal = state.get("legal") or {}
    mover = state.get("mover")
    finished = set(state.get("finished") or [])
    rows = []
    order = [p for p in players if p in hands] + [p for p in hands if p not in players]
    for player in order:
        cards = hands[player]
        count = len(cards) if cards is not None else sizes.get(player, 0)
        is_mover = player == mover
        legal_cards: Collection[str] = legal.get("play", []) if (is_mover and legal.get("player") == player) else ()
        if cards is not None:
            body = cards_html(cards, legal=legal_cards, played=played if player == played_by else None, bad=bad)
        else:
            body = backs_html(count)
        tags = []
        if is_mover:
            tags.append("to move")
        if player == state.get("dealer"):
            tags.append("dealer")
        if player in finished:
            tags.append("finished")
        tags.append(f"{count} card{'s' if count != 1 else ''}")
        marker = "▶ " if is_mover else ""
        rows.append(
            f'<div class="hk-row{" mover" if is_mover else ""}" data-player="{escape(player)}">'
            f'<div class="who">{marker}{escape(player)}<small>{escape(" · ".join(tags))}</small></div>'
            f"<div>{body}</div></div>"
        )
    footer = legal_text(legal) if legal and not state.get("outcome") else ""
    return f'<div class="hk">{facts_html(state)}{"".join(rows)}{footer}</div>'


def violation_html(violation: Violation) -> str:
    """A violation with its code, the rule's one-line explanation and the validator's
    specific message (unless a player view withheld it)."""
    why = EXPLANATIONS.get(violation.code, "")
    message = "" if violation.message is None else f"<div>{escape(violation.message)}</div>"
    who = f" ({escape(violation.player)})" if violation.player else ""
    return (
        f'<div class="hk-viol"><code>{escape(violation.code.value)}</code>{who}'
        f'{message}<div class="why">Rule: {escape(why)}</div></div>'
    )


def verdict_html(violations: Sequence[Violation]) -> str:
    if not violations:
        return '<span class="hk-badge hk-ok">✓ legal</span>'
    n = len(violations)
    head = f'<span class="hk-badge hk-bad">✗ {n} violation{"s" if n != 1 else ""}</span>'
    return head + "".join(violation_html(v) for v in violations)


def decision_html(
    before: dict[str, Any] | None, actor: str | None, card: str | None, illegal: bool
) -> str:
    """The actor's hand just before their move, the legal moves of the player whose turn it
    was highlighted, the card they chose outlined: "could they have played something else?".
    Nothing when the state does not show the actor's hand (another's, in a player view)."""
    if not before or before.get("hand") is None or actor is None:
        return ""
    hands = before.get("hands", {})
    legal = before.get("legal") or {}
    expected = legal.get("player")
    held = hands.get(actor)
    if held is None:
        return ""
    legal_cards = legal.get("play", []) if expected == actor else []
    parts = [f'<div class="hk-muted">Before this move, {escape(actor)} held:</div>',
             f"<div>{cards_html(held, legal=legal_cards, played=card, bad=illegal)}</div>"]
    if card is not None and card not in held:
        parts.append(f'<div class="hk-muted">…and played {card_html(card, played=True, bad=True, small=True)} '
                     f"which was not in that hand.</div>")
    if expected and expected != actor:
        parts.append(f'<div class="hk-legal">It was <b>{escape(expected)}</b>\'s turn: {escape(legal.get("text", ""))}</div>')
    elif legal:
        parts.append(legal_text(legal, "then"))
    return f'<div class="hk">{"".join(parts)}</div>'


def why_html(why: str | None) -> str:
    """Why the move happened (the engine's facts in words), or nothing."""
    return f'<div class="hk-why"><b>Why:</b> {escape(why)}</div>' if why else ""


def set_aside_html(asides: Sequence[Any], seq: int) -> str:
    """The lines set aside with this step's seq (a duplicate-`seq` conflict), each with its
    file, line number and text when the view has them (a player view does not)."""
    out = []
    for aside in asides:
        place = f"{aside.file}:{aside.line}" if aside.file else (f"line {aside.line}" if aside.line else "")
        raw = aside.raw.decode("utf-8", "replace") if aside.raw is not None else None
        body = f"<pre>{escape(raw)}</pre>" if raw is not None else ""
        out.append(
            f'<div class="hk-aside"><b>⚠ Set aside:</b> another, different line with seq {seq}'
            f'{" at <code>" + escape(place) + "</code>" if place else ""} — the first one (shown above) '
            f"was replayed.{body}{''.join(violation_html(v) for v in aside.violations)}</div>"
        )
    return "".join(out)
