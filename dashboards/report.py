"""The self-contained HTML report of one disputed hand: every step with its verdict, the
table as it stood, the legal moves at that moment, and the hand's scores.

Pure Python (no Streamlit): the replay page offers it as a download and
`haftkhabis report` writes it. One file, no scripts, no external resources.
"""

from __future__ import annotations

from html import escape

from dashboards import components as ui
from dashboards.game_replay import SETUP_HAND, GameReplay, HandScore, ReplayStep
from engine import ENGINE_VERSION
from engine.cards import pretty

REPORT_CSS = """
body { margin: 0; background: #f5f6f8; }
.hk-page { max-width: 1100px; margin: 0 auto; padding: 1.5em 1.2em 3em; }
h1 { font-size: 1.5em; margin: 0 0 .2em; } h2 { font-size: 1.2em; margin: 1.6em 0 .5em; }
.hk-meta { color: #5b6475; margin-bottom: 1em; }
.hk-step { background: #fff; border: 1px solid #dde1e8; border-radius: .5em; padding: .8em 1em; margin: .8em 0; }
.hk-step.bad { border-left: 5px solid #c62828; }
.hk-step h3 { font-size: 1em; margin: 0 0 .3em; color: #5b6475; font-weight: 600; }
.hk-cols { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.6fr); gap: 1.2em; }
@media (max-width: 800px) { .hk-cols { grid-template-columns: 1fr; } }
.hk-toc a { margin-right: .6em; }
"""


def score_table_html(score: HandScore) -> str:
    """A hand's ranking: place, player, cards left with their points, multiplier, score."""
    rows = []
    for p in score.players:
        cards = "".join(
            ui.card_html(c.card, small=True, note=f"{c.points} points") + f'<sub class="hk-muted">{c.points}</sub> '
            for c in p.cards
        ) or '<span class="hk-muted">(none)</span>'
        if p.laid_aside:
            cards += '<div class="hk-muted">laid aside (0 points): ' + " ".join(pretty(c) for c in p.laid_aside) + "</div>"
        if score.reason == "elimination":
            points = "—"
        elif p.winner:
            points = "0 (winner)"
        elif score.multiplier > 1:
            points = f"{p.face_value} × {score.multiplier} = <b>{p.score}</b>"
        else:
            points = f"<b>{p.score}</b>"
        rows.append(f"<tr><td>{p.place}</td><td>{escape(p.player)}</td><td>{cards}</td><td>{points}</td></tr>")
    head = "<tr><th>Place</th><th>Player</th><th>Cards left (points)</th><th>Hand score</th></tr>"
    winners = escape(", ".join(score.winners))
    return (
        f'<p>Winner{"s" if len(score.winners) != 1 else ""}: <b>{winners}</b> ({escape(score.reason)}). '
        f"Multiplier: {escape(score.why)}.</p>"
        f'<table class="hk-scores">{head}{"".join(rows)}</table>'
    )


def totals_html(replay: GameReplay) -> str:
    if not replay.totals:
        return ""
    rows = []
    ranked = sorted(replay.totals.items(), key=lambda kv: kv[1])
    for player, total in ranked:
        per_hand = " + ".join(
            str(next((p.score for p in s.players if p.player == player), 0) or 0) for s in replay.scores
        )
        rows.append(f"<tr><td>{escape(player)}</td><td>{escape(per_hand)}</td><td><b>{total}</b></td></tr>")
    return (
        '<table class="hk-scores"><tr><th>Player</th><th>Hands</th><th>Match total</th></tr>'
        + "".join(rows) + "</table>"
    )


def step_html(replay: GameReplay, step: ReplayStep) -> str:
    card = step.raw.get("card") if step.raw and step.kind == "play" else None
    card = card if isinstance(card, str) else None
    decision = ""
    if step.kind in ("play", "draw", "pass"):
        decision = ui.decision_html(step.before, step.actor, card, bool(step.violations))
    where = f" · {escape(step.file)}:{step.line}" if step.file and step.line else ""
    return (
        f'<section class="hk-step{" bad" if step.violations else ""}" id="step-{step.number}">'
        f"<h3>Step {step.number} · seq {step.seq}{where}</h3>"
        f'<div class="hk-event">{escape(step.text)}</div>'
        f"<div>{ui.verdict_html(step.violations)}</div>"
        f'<div class="hk-cols"><div>{decision}</div>'
        f'<div><div class="hk-muted">After this step:</div>'
        f"{ui.table_html(step.after, replay.players, played=card, played_by=step.actor)}</div></div>"
        "</section>"
    )


def render_hand_report(replay: GameReplay, hand: int) -> str:
    """The whole report as one HTML document."""
    steps = replay.hand_steps(hand)
    if not steps:
        raise ValueError(f"game {replay.game} has no hand {hand} (hands: {', '.join(map(str, replay.hands))})")
    title = f"{replay.game} · hand {hand}" if hand != SETUP_HAND else f"{replay.game} · header"
    n_bad = sum(1 for s in steps if s.violations)
    toc = " ".join(
        f'<a href="#step-{s.number}">{s.number}</a>' for s in steps if s.violations
    )
    score = replay.score_of(hand)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)} — Haft Khabis hand report</title>",
        f"<style>{ui.CSS}{REPORT_CSS}</style></head>",
        '<body><div class="hk hk-page">',
        f"<h1>{escape(title)}</h1>",
        '<div class="hk-meta">',
        f"Ruleset <b>{escape(replay.ruleset or '?')}</b> · players {escape(', '.join(replay.players))} · "
        f"game status {ui.status_badge(replay.status)} · {len(steps)} steps in this hand, "
        f"{n_bad} with violations",
        "</div>",
    ]
    if toc:
        parts.append(f'<div class="hk-toc">Steps with violations: {toc}</div>')
    if replay.game_violations:
        parts.append("<h2>Game-level findings</h2>")
        parts.append(ui.verdict_html(replay.game_violations))
    parts.append("<h2>Scores</h2>")
    parts.append(score_table_html(score) if score else '<p class="hk-muted">This hand has no outcome (not decided).</p>')
    if replay.totals and len(replay.scores) > 1:
        parts.append("<h2>Match totals</h2>")
        parts.append(totals_html(replay))
    parts.append("<h2>Step by step</h2>")
    parts.extend(step_html(replay, s) for s in steps)
    parts.append(
        f'<p class="hk-muted">Generated by haftkhabis (engine {escape(ENGINE_VERSION)}). '
        "Legal moves are the engine's view of the state before each move; cards outlined in blue "
        "were played, in red when the play broke a rule.</p>"
    )
    parts.append("</div></body></html>")
    return "\n".join(parts)
