"""The dispute report of one hand, a document a support agent can send: a summary on
top (the game, the hand, the disputed step, the verdict in plain words and the rule it
rests on, what reproduces it), the disputed step with its neighbours, the scores, then the
whole hand folded below.

Two views: the support view shows every hand, the server's file and line numbers and the
raw lines; the player view (`viewer=`) is rendered from `engine.player_view.public_replay`,
the one place that decides what a player could see (their own cards, the others' as
counts, no server paths): the report shows what it is given. Printable on A4, readable on
a phone.

Pure Python (no Streamlit): the replay page offers it as a download, `haftkhabis report`
writes it and the HTTP API serves it — the same function, so the same bytes. One file,
inline CSS, no scripts, nothing fetched.
"""

from __future__ import annotations

from html import escape

from engine import ENGINE_VERSION
from engine import render as ui
from engine.cards import pretty
from engine.player_view import public_replay
from engine.replay import SETUP_HAND, GameReplay, HandScore, ReplayStep
from engine.violations import EXPLANATIONS

#: steps shown on each side of the disputed one
NEIGHBOURS = 2

REPORT_CSS = """
body { margin: 0; background: #f5f6f8; }
.hk-page { max-width: 1100px; margin: 0 auto; padding: 1.5em 1.2em 3em; font-size: 16px; }
h1 { font-size: 1.5em; margin: 0 0 .2em; overflow-wrap: anywhere; } h2 { font-size: 1.2em; margin: 1.6em 0 .5em; }
.hk-meta { color: #5b6475; margin-bottom: 1em; }
.hk-summary { background: #fff; border: 1px solid #dde1e8; border-radius: .5em; padding: .9em 1.1em; }
.hk-summary.bad { border-left: 6px solid #c62828; } .hk-summary.ok { border-left: 6px solid #2e7d32; }
.hk-summary dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .25em 1em; margin: .6em 0 0; }
.hk-summary dt { font-weight: 600; color: #5b6475; } .hk-summary dd { margin: 0; overflow-wrap: anywhere; }
.hk-verdict { font-size: 1.15em; font-weight: 600; margin: .1em 0 .3em; }
.hk-step { background: #fff; border: 1px solid #dde1e8; border-radius: .5em; padding: .8em 1em; margin: .8em 0; }
.hk-step.bad { border-left: 5px solid #c62828; } .hk-step.disputed { box-shadow: 0 0 0 3px rgba(21,101,192,.35); }
.hk-step h3 { font-size: 1em; margin: 0 0 .3em; color: #5b6475; font-weight: 600; overflow-wrap: anywhere; }
.hk-cols { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.6fr); gap: 1.2em; }
.hk-repro code { overflow-wrap: anywhere; font-size: .9em; }
details.hk-all > summary { cursor: pointer; font-weight: 600; font-size: 1.1em; margin: 1.4em 0 .4em; }
@media (max-width: 800px) {
  .hk-cols { grid-template-columns: 1fr; }
  .hk-page { padding: 1em .6em 2em; font-size: 15px; }
  .hk-row { flex-direction: column; gap: .1em; } .hk-row .who { max-width: none; padding-top: 0; }
  .hk-summary dl { grid-template-columns: 1fr; } .hk-summary dt { margin-top: .3em; }
  table.hk-scores { display: block; overflow-x: auto; }
}
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { background: #fff; } .hk-page { max-width: none; padding: 0; font-size: 10.5pt; }
  .hk-step, .hk-summary, table.hk-scores { break-inside: avoid; }
  .hk-card, .hk-back, .hk-badge, .hk-viol, .hk-aside, .hk-row.mover { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
  details.hk-all > summary { list-style: none; }
  details.hk-all::details-content { content-visibility: visible; display: block; }
  a { color: inherit; text-decoration: none; }
}
"""


def score_table_html(score: HandScore) -> str:
    """A hand's ranking: place, player, cards left with their points (a player view's
    hidden ones as a count), multiplier, score."""
    rows = []
    for p in score.players:
        if p.cards is None:
            cards = (f'<span class="hk-muted">{p.held} card{"s" if p.held != 1 else ""}, '
                     f"not shown ({p.face_value} points)</span>")
        else:
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


def disputed_step(replay: GameReplay, hand: int, seq: int | None = None) -> ReplayStep | None:
    """The step the report is about: the line with `seq`, else the hand's first flagged step."""
    steps = replay.hand_steps(hand)
    if seq is not None:
        return next((s for s in steps if s.seq == seq), None)
    return next((s for s in steps if s.flagged), None)


def played_card(step: ReplayStep) -> str | None:
    """The card a `play` line put down."""
    card = step.raw.get("card") if step.raw and step.kind == "play" else None
    return card if isinstance(card, str) else None


def step_html(replay: GameReplay, step: ReplayStep, *, disputed: bool = False) -> str:
    """One step: what it records, its verdict and why, the mover's choice, the table after it."""
    card = played_card(step)
    decision = ""
    if step.kind in ("play", "draw", "pass"):
        decision = ui.decision_html(step.before, step.actor, card, bool(step.violations))
    where = f" · {escape(step.file)}:{step.line}" if step.file and step.line else ""
    classes = "hk-step" + (" bad" if step.flagged else "") + (" disputed" if disputed else "")
    viewer = step.viewer
    return (
        f'<section class="{classes}" id="step-{step.hand}-{step.number}">'
        f"<h3>{escape(step.label.capitalize())}{where}{' · the disputed step' if disputed else ''}</h3>"
        f'<div class="hk-event">{escape(step.text)}</div>'
        f"<div>{ui.verdict_html(step.violations)}</div>"
        f"{ui.why_html(step.why)}"
        f"{ui.set_aside_html(step.set_aside, step.seq)}"
        f'<div class="hk-cols"><div>{decision}</div>'
        f'<div><div class="hk-muted">After this step{" (as " + escape(viewer) + " saw it)" if viewer else ""}:</div>'
        f"{ui.table_html(step.after, replay.players, played=card, played_by=step.actor)}"
        "</div></div></section>"
    )


def ruleset_text(replay: GameReplay) -> str:
    """ "persian (points play; options: tarkesh on, ace_deflect off; match of 2 hands)" """
    settings = replay.settings
    parts = []
    if settings.get("mode"):
        parts.append(f"{settings['mode']} play")
    options = settings.get("options") or {}
    if options:
        parts.append("options: " + ", ".join(f"{k} {'on' if v else 'off'}" for k, v in sorted(options.items())))
    if settings.get("decks") and settings["decks"] != 1:
        parts.append(f"{settings['decks']} decks")
    if settings.get("match_hands"):
        parts.append(f"match of {settings['match_hands']} hand{'s' if settings['match_hands'] != 1 else ''}")
    if settings.get("match_target"):
        parts.append(f"match to {settings['match_target']} points")
    return f"{replay.ruleset or '?'}" + (f" ({'; '.join(parts)})" if parts else "")


def verdict_words(step: ReplayStep | None) -> tuple[str, str]:
    """The verdict in plain words, and the rule it rests on."""
    if step is None:
        return "No line of this hand broke a rule.", "—"
    if step.violations:
        v = step.violations[0]
        more = f" (and {len(step.violations) - 1} more finding{'s' if len(step.violations) > 2 else ''})" \
            if len(step.violations) > 1 else ""
        who = f"{v.player}'s move" if v.player else "This line"
        detail = "" if v.message is None else f" {v.message}."
        return (f"{who} broke a rule: {v.code.value}.{detail}{more}",
                f"{v.code.value}: {EXPLANATIONS.get(v.code, '')}")
    if step.set_aside:
        v = step.set_aside[0].violations[0]
        return (f"This line was legal; another, different line with seq {step.seq} was set aside.",
                f"{v.code.value}: {EXPLANATIONS.get(v.code, '')}")
    why = f" {step.why[0].upper()}{step.why[1:]}." if step.why else ""
    return f"The move was legal.{why}", "—"


#: the most log files a "Reproduce" line names (a game pushed in many bodies has many)
REPRODUCE_FILES = 4


def reproduce_source(replay: GameReplay) -> str:
    """Where `haftkhabis replay` reads the game again: the log files its lines came from,
    as they were given (`LOG` when they are not known, or too many to name)."""
    files = list(dict.fromkeys(s.file for s in replay.steps if s.file))
    if not files or len(files) > REPRODUCE_FILES:
        return "LOG"
    return " ".join(files)


def _summary(replay: GameReplay, hand: int, focus: ReplayStep | None, source: str | None) -> str:
    verdict, rule = verdict_words(focus)
    viewer = replay.viewer
    rows = [
        ("Game", escape(replay.game)),
        ("Hand", f"{hand}" + (f" (won by {escape(', '.join(s.winners))})" if (s := replay.score_of(hand)) else "")),
        ("Players", escape(", ".join(replay.players))),
    ]
    if focus is not None:
        rows.append(("Disputed step", f'<a href="#step-{focus.hand}-{focus.number}">{escape(focus.label)}</a>'
                     f" — {escape(focus.text)}"))
    rows.append(("Rule", escape(rule)))
    rows.append(("Ruleset", escape(ruleset_text(replay))))
    if viewer is not None:
        rows.append(("View", f"what {escape(viewer)} could see at the table"))
    rows.append(("Engine", f"haftkhabis {escape(ENGINE_VERSION)}"))
    rows.append(("Game log sha256", f"<code>{escape(replay.digest or 'unknown')}</code>"
                 + (f" ({len(replay.steps)} lines, in seq order)" if replay.digest else "")))
    if viewer is None and focus is not None:
        rows.append(("Reproduce", f"<code>haftkhabis replay {escape(source or reproduce_source(replay))} "
                     f"--game {escape(replay.game)} --seq {focus.seq}</code>"))
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    tone = "bad" if focus is not None and focus.flagged else "ok"
    return (f'<section class="hk-summary {tone}"><div class="hk-verdict">{escape(verdict)}</div>'
            f'<dl class="hk-repro">{body}</dl></section>')


def render_hand_report(replay: GameReplay, hand: int, *, seq: int | None = None,
                       viewer: str | None = None, source: str | None = None) -> str:
    """The dispute report of `hand` as one HTML document: about the line `seq` (default:
    the hand's first flagged step), in `viewer`'s player view (`public_replay`; default: the
    view `replay` already is, the support view unless it is a player's). `source` is where
    the support view's "Reproduce" line reads the game (`--warehouse DIR`, or log paths;
    default: the log files the game's lines came from). ValueError when the hand, the line
    or the player is not in the game."""
    steps = replay.hand_steps(hand)
    if not steps:
        raise ValueError(f"game {replay.game} has no hand {hand} (hands: {', '.join(map(str, replay.hands))})")
    if viewer is not None:
        replay = public_replay(replay, viewer)
        steps = replay.hand_steps(hand)
    viewer = replay.viewer
    focus = disputed_step(replay, hand, seq)
    if seq is not None and focus is None:
        raise ValueError(f"hand {hand} of game {replay.game} has no line with seq {seq} "
                         f"(seqs {steps[0].seq}–{steps[-1].seq})")
    title = f"{replay.game} · hand {hand}" if hand != SETUP_HAND else f"{replay.game} · header"
    n_bad = sum(1 for s in steps if s.flagged)
    view = f"player view for {viewer}" if viewer else "support view"
    score = replay.score_of(hand)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)} — Haft Khabis dispute report</title>",
        f"<style>{ui.CSS}{REPORT_CSS}</style></head>",
        f'<body><main class="hk hk-page" data-view="{"player" if viewer else "support"}">',
        f"<h1>Dispute report: {escape(title)}</h1>",
        f'<div class="hk-meta">{escape(view)} · game status {ui.status_badge(replay.status)} · '
        f"{len(steps)} steps in this hand, {n_bad} flagged</div>",
        _summary(replay, hand, focus, source),
    ]
    if focus is not None:
        around = [s for s in steps if abs(s.number - focus.number) <= NEIGHBOURS]
        parts.append(f"<h2>The disputed step and its neighbours (steps {around[0].number}–{around[-1].number})</h2>")
        parts.extend(step_html(replay, s, disputed=s is focus) for s in around)
    if replay.game_violations:
        parts.append("<h2>Game-level findings</h2>")
        parts.append(ui.verdict_html(replay.game_violations))
    parts.append("<h2>Scores</h2>")
    parts.append(score_table_html(score) if score else '<p class="hk-muted">This hand has no outcome (not decided).</p>')
    if replay.totals and len(replay.scores) > 1:
        parts.append("<h2>Match totals</h2>")
        parts.append(totals_html(replay))
    parts.append(f'<details class="hk-all"{" open" if focus is None else ""}>'
                 f"<summary>The whole hand: all {len(steps)} steps</summary>")
    parts.extend(step_html(replay, s) for s in steps)
    parts.append("</details>")
    parts.append(
        f'<p class="hk-muted">Generated by haftkhabis (engine {escape(ENGINE_VERSION)}). '
        "Legal moves are the engine's view of the state before each move; cards outlined in blue "
        "were played, in red when the play broke a rule. The sha256 is of the game's lines in seq "
        "order, each ended by a newline.</p>"
    )
    parts.append("</main></body></html>")
    return "\n".join(parts)
