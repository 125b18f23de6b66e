"""Every chart the pages draw, and the one place their Vega-Lite specs are made.

A chart here is a pure function of its arguments (polars frames and plain values) that
returns an Altair chart. `cached` turns it into a function that returns the chart's
Vega-Lite spec, for `st.vega_lite_chart(spec=…)`. The spec is made once per content of the
arguments, and every session shares it.

Why: building an Altair chart and turning it into Vega-Lite is most of what a page's
server run costs once its answers are cached. Altair checks each encoding against its
schema, and Streamlit converts the chart again at every rerun. The first-seat chart took
about 70 ms to build and 25 ms to convert on every rerun, a seat heatmap 45 and 20 ms.
A spec made once costs a look-up after that.

The spec is what Streamlit itself makes of an Altair chart (`st.altair_chart`): the
default theme off, each dataset as Arrow IPC bytes named by a hash of its bytes. The pages
use no other path to a chart: the conversion swaps Altair's data transformer and theme,
which are global, under a lock that only this module takes.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import threading
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from datetime import datetime
from typing import Any, ParamSpec

import altair as alt
import polars as pl
from streamlit import dataframe_util

from dashboards import cache
from engine.violations import Code
from ingest import read

P = ParamSpec("P")

#: the Altair data transformer that hands each dataset over as Arrow IPC bytes
_TRANSFORMER = "haftkhabis_arrow"
#: Altair's transformer and theme are process-wide: one conversion at a time
_converting = threading.Lock()


def _to_arrow(data: Any, datasets: dict[str, bytes]) -> dict[str, str]:
    """Altair's data transformer: the frame as Arrow IPC bytes (as Streamlit sends a
    chart's data), referred to by the hash of those bytes."""
    raw = dataframe_util.convert_anything_to_arrow_bytes(data)
    name = hashlib.blake2b(raw, digest_size=16).hexdigest()
    datasets[name] = raw
    return {"name": name}


alt.data_transformers.register(_TRANSFORMER, _to_arrow)


def to_vega_lite(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The Vega-Lite spec of an Altair chart, its data as named Arrow datasets."""
    datasets: dict[str, bytes] = {}
    with _converting:
        # Altair's default theme sets a width and height that Streamlit's layout does not
        # want (Streamlit turns it off too)
        theme = alt.theme.enable("none") if alt.theme.active == "default" else nullcontext()
        with theme, alt.data_transformers.enable(_TRANSFORMER, datasets=datasets):
            spec: dict[str, Any] = chart.to_dict()
    spec["datasets"] = {**spec.get("datasets", {}), **datasets}
    return spec


def fingerprint(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """A digest of a chart's arguments: equal arguments, equal digests (a polars frame is
    pickled as its Arrow IPC bytes, so two frames of the same rows and types agree)."""
    return hashlib.blake2b(pickle.dumps((args, sorted(kwargs.items())), protocol=5), digest_size=20).hexdigest()


def cached(build: Callable[P, alt.TopLevelMixin]) -> Callable[P, dict[str, Any]]:
    """`build`'s chart as a Vega-Lite spec, made once per content of its arguments
    (`dashboards.cache.chart_spec`, shared by every session)."""
    name = f"{build.__module__}.{build.__qualname__}"

    @functools.wraps(build)
    def spec(*args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
        made = cache.chart_spec(name, fingerprint(args, kwargs),
                                lambda: to_vega_lite(build(*args, **kwargs)))
        # a copy of the top level: Streamlit edits the one it is given (the data it
        # takes out), never what lies below
        return dict(made)

    return spec


def converted(build: Callable[P, alt.TopLevelMixin]) -> Callable[P, dict[str, Any]]:
    """`build`'s chart as a Vega-Lite spec made at every call: for a chart of the moment
    (the Live page's span ends now), which no later run would draw again."""

    @functools.wraps(build)
    def spec(*args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
        return to_vega_lite(build(*args, **kwargs))

    return spec


# ------------------------------------------------------------------------ shared pieces

#: a colour per violation code, never two alike (Vega's default palette has ten, so an
#: eleventh code took the first's colour): Tableau's twenty, in the codes' order
CODE_PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                "#9c755f", "#bab0ac", "#1f77b4", "#aec7e8", "#ffbb78", "#98df8a", "#d62728", "#ff9896",
                "#9467bd", "#c5b0d5", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79")


def code_colours(codes: Sequence[str]) -> alt.Scale:
    """A colour scale giving each code its own colour, the same on every chart (by the
    code's place among all the engine's codes)."""
    known = sorted(c.value for c in Code)
    order = sorted(set(codes), key=lambda c: (known.index(c) if c in known else len(known), c))
    colours = [CODE_PALETTE[(known.index(c) if c in known else len(known) + i) % len(CODE_PALETTE)]
               for i, c in enumerate(order)]
    return alt.Scale(domain=order, range=colours)


def period_axis(frame: pl.DataFrame) -> str:
    """The x field for a per-day or per-week `period` column: bars a whole unit wide."""
    unit = frame["unit"][0] if frame.height and "unit" in frame.columns else "day"
    return "yearweek(period):T" if unit == "week" else "yearmonthdate(period):T"


def _span(since: datetime, now: datetime) -> alt.Scale:
    """The time axis of a whole span, so a chart reads as the span whatever it holds (times
    in UTC, shown as they are)."""
    return alt.Scale(domain=[since.replace(tzinfo=None).isoformat(), now.replace(tzinfo=None).isoformat()])


# ------------------------------------------------------------------------ Overview


@cached
def games_by_status(statuses: pl.DataFrame) -> alt.TopLevelMixin:
    """A bar per ruleset, stacked by status (`read.status_counts`)."""
    return alt.Chart(statuses.to_pandas()).mark_bar().encode(
        x=alt.X("games:Q", title="games"),
        y=alt.Y("ruleset:N", title=None, axis=alt.Axis(labelLimit=0)),
        color=alt.Color("status:N", scale=alt.Scale(
            domain=["compliant", "incomplete", "aborted", "violations", "invalid"],
            range=["#2e7d32", "#f0b429", "#9e9e9e", "#c62828", "#6a1b1b"]),
            legend=alt.Legend(orient="right", labelLimit=0)),
        tooltip=["ruleset", "status", "games"],
    ).properties(height=alt.Step(28), title="Games by status")


@cached
def games_started(trend: pl.DataFrame) -> alt.TopLevelMixin:
    """Games started per period, stacked by ruleset (`read.over_time`)."""
    return alt.Chart(trend.to_pandas()).mark_bar().encode(
        x=alt.X(period_axis(trend), title=None), y=alt.Y("games:Q", stack=True),
        color="ruleset:N", tooltip=["period:T", "ruleset", "games", "hands"],
    ).properties(height=260, title="Games started")


@cached
def compliance_rate(trend: pl.DataFrame) -> alt.TopLevelMixin:
    """Each ruleset's compliance rate per period (`read.over_time`)."""
    return alt.Chart(trend.to_pandas().dropna(subset=["compliance_rate"])).mark_line(point=True).encode(
        x=alt.X("period:T", title=None),
        y=alt.Y("compliance_rate:Q", title="compliance", axis=alt.Axis(format="%"), scale=alt.Scale(zero=False)),
        color="ruleset:N", tooltip=["period:T", "ruleset", alt.Tooltip("compliance_rate:Q", format=".1%")],
    ).properties(height=260, title="Compliance rate")


# ------------------------------------------------------------------------ Compliance


@cached
def violations_by_code(by_ruleset: pl.DataFrame) -> alt.TopLevelMixin:
    """A bar per code, stacked by ruleset, a 24 px row each, every label whole
    (`read.violations_by` ruleset)."""
    codes = by_ruleset["code"].n_unique()
    return alt.Chart(by_ruleset.to_pandas()).mark_bar().encode(
        y=alt.Y("code:N", sort="-x", title=None, axis=alt.Axis(labelOverlap=False, labelLimit=0)),
        x=alt.X("sum(violations):Q", title="violations"),
        color="ruleset:N", tooltip=["code", "ruleset", "violations", "games"],
    ).properties(height=alt.Step(24), title=f"Violations by code and ruleset ({codes} codes)")


@cached
def violation_rate_by_build(builds: pl.DataFrame, height: int) -> alt.TopLevelMixin:
    """The share of each build's games with a violation, a bar per ruleset (`read.builds`)."""
    return alt.Chart(builds.to_pandas()).mark_bar().encode(
        x=alt.X("server_build:N", title=None, axis=alt.Axis(labelOverlap=False, labelLimit=0)),
        xOffset="ruleset:N",
        y=alt.Y("violation_rate:Q", axis=alt.Axis(format="%"), title="games with a violation"),
        color="ruleset:N",
        tooltip=["server_build", "ruleset", "games", "with_violations", "violations",
                 alt.Tooltip("violation_rate:Q", format=".2%")],
    ).properties(height=height, title="Share of games with a violation, by server build")


@cached
def violations_over_time(trend: pl.DataFrame) -> alt.TopLevelMixin:
    """Violations per period stacked by code, every code its own colour, the legend below
    the bars in columns so that all of it shows (`read.violations_over_time`)."""
    codes = trend["code"].unique().to_list()
    return alt.Chart(trend.to_pandas()).mark_bar().encode(
        x=alt.X(period_axis(trend), title=None), y=alt.Y("violations:Q", stack=True),
        color=alt.Color("code:N", scale=code_colours(codes),
                        legend=alt.Legend(orient="bottom", columns=4, labelLimit=0, symbolLimit=0,
                                          title=f"code ({len(codes)})")),
        tooltip=["period:T", "code", "violations"],
    # the height holds the bars and the legend's rows below them (Streamlit fits both in it)
    ).properties(height=300 + 22 * -(-len(codes) // 4), title="Violations over time")


@cached
def profile_shares(shares: pl.DataFrame) -> alt.TopLevelMixin:
    """The share of each build's sampled games compliant under each profile
    (`ingest.inference.BuildInference.shares`)."""
    return alt.Chart(shares.to_pandas()).mark_rect().encode(
        x=alt.X("server_build:N", title=None, axis=alt.Axis(labelOverlap=False, labelLimit=0)),
        y=alt.Y("profile:N", title=None, sort="-color", axis=alt.Axis(labelOverlap=False, labelLimit=0)),
        color=alt.Color("share:Q", scale=alt.Scale(domain=[0, 1]), legend=alt.Legend(format="%")),
        tooltip=["server_build", "profile", "games", "compliant", alt.Tooltip("share:Q", format=".0%"),
                 "in_headers"],
    ).properties(height=28 * max(4, shares["profile"].n_unique()),
                 title="Share of games compliant, by profile and server build")


# ------------------------------------------------------------------------ Players


@cached
def points_histogram(points: pl.DataFrame, axis: str, title: str, height: int) -> alt.TopLevelMixin:
    """Hand scores of points play (capped at 200), a histogram of 5-point bins per ruleset,
    the rulesets' bars overlaid (`read.player_points`, `read.points_distribution`)."""
    return alt.Chart(points.to_pandas()).mark_bar().encode(
        x=alt.X("points:Q", bin=alt.Bin(step=5), title=axis),
        y=alt.Y("hands:Q", stack=None), color="ruleset:N", opacity=alt.value(0.7),
        tooltip=["ruleset", "points", "hands"],
    ).properties(height=height, title=title)


@cached
def special_cards(mine: pl.DataFrame, everyone: pl.DataFrame) -> alt.TopLevelMixin:
    """A player's special cards per hand against everyone's, a row of bars per ruleset
    (`read.special_cards` of the player and of everyone, in the player's rulesets)."""
    long = pl.concat([mine.with_columns(who=pl.lit("player")), everyone.with_columns(who=pl.lit("everyone"))])
    return alt.Chart(long.to_pandas()).mark_bar().encode(
        y=alt.Y("what:N", title=None, axis=alt.Axis(labelLimit=0, labelOverlap=False)),
        x=alt.X("per hand:Q"), yOffset="who:N",
        color=alt.Color("who:N", scale=alt.Scale(domain=["player", "everyone"], range=["#1565c0", "#b0bec5"])),
        row=alt.Row("ruleset:N", title=None),
        tooltip=["ruleset", "what", "who", alt.Tooltip("per hand:Q", format=".2f")],
    ).properties(height=24 * len(read.SPECIAL_CARDS), width=520,
                 title="Special cards per hand: this player against everyone")


@cached
def first_seat(first: pl.DataFrame, title: str) -> alt.TopLevelMixin:
    """The first seat's win rate against the fair rate, per table size: a bar per ruleset
    and play with its 95% interval, a dashed tick at 1 ÷ players (`read.first_seat` rows of
    seat 0)."""
    base = alt.Chart(first.to_pandas())
    x = alt.X("players:O", title="players at the table", axis=alt.Axis(labelAngle=0, labelOverlap=False))
    tooltip = ["play", "players", "hands", "wins", alt.Tooltip("win_rate:Q", format=".1%"),
               alt.Tooltip("ci_low:Q", format=".1%", title="95% from"),
               alt.Tooltip("ci_high:Q", format=".1%", title="95% to"),
               alt.Tooltip("fair_rate:Q", format=".1%", title="fair rate"), "against_fair"]
    bars = base.mark_bar().encode(
        x=x, xOffset="play:N", color=alt.Color("play:N", title="ruleset · play"),
        y=alt.Y("win_rate:Q", axis=alt.Axis(format="%"), title="the first seat's win rate",
                scale=alt.Scale(domain=[0, 1])), tooltip=tooltip)
    interval = base.mark_rule(color="#263238").encode(x=x, xOffset="play:N", y="ci_low:Q", y2="ci_high:Q",
                                                      tooltip=tooltip)
    fair = base.mark_tick(color="#c62828", strokeDash=[4, 2], thickness=2).encode(
        x=x, y="fair_rate:Q", tooltip=[alt.Tooltip("fair_rate:Q", format=".1%", title="fair rate")])
    return alt.layer(bars, interval, fair).properties(height=260, title=title)


@cached
def seat_heatmap(frame: pl.DataFrame, title: str) -> alt.TopLevelMixin:
    """Win rate by seat (columns) and table size (rows) for one ruleset and play: coloured
    by the win rate over the fair rate (1 = fair), the rate written in the cell, the sample
    and its 95% interval in the tooltip (`read.first_seat` or `read.player_by_seat` rows);
    a row per table size, each label shown."""
    frame = frame.with_columns((pl.col("win_rate") / pl.col("fair_rate")).alias("against"))
    base = alt.Chart(frame.to_pandas())
    x = alt.X("turn_order:O", title="seat (0 = first to play)", axis=alt.Axis(labelAngle=0, labelOverlap=False))
    y = alt.Y("players:O", title="players at the table", axis=alt.Axis(labelOverlap=False))
    tooltip = ["players", alt.Tooltip("turn_order:O", title="seat"), "hands", "wins",
               alt.Tooltip("win_rate:Q", format=".1%"), alt.Tooltip("ci_low:Q", format=".1%", title="95% from"),
               alt.Tooltip("ci_high:Q", format=".1%", title="95% to"),
               alt.Tooltip("fair_rate:Q", format=".1%", title="fair rate"), "against_fair"]
    cells = base.mark_rect().encode(
        x=x, y=y, tooltip=tooltip,
        # one scale for every chart: white is fair, full red twice the fair rate (or more)
        color=alt.Color("against:Q", title="÷ fair rate",
                        scale=alt.Scale(scheme="redblue", reverse=True, domain=[0, 2], clamp=True)))
    text = base.mark_text(fontSize=10).encode(x=x, y=y, text=alt.Text("win_rate:Q", format=".0%"), tooltip=tooltip)
    return alt.layer(cells, text).properties(height=alt.Step(26), title=title)  # a row per size, whatever their number


@cached
def two_matrix(matrix: pl.DataFrame, lift: bool) -> alt.TopLevelMixin:
    """Who gives 2s to whom: a cell per player of a 2 and target, coloured by the count or
    by the lift over a fair choice, every name labelled; a click on a cell selects it (the
    `cell` selection: its player and target) (`read.two_targets`)."""
    givers = sorted(matrix["player"].unique().to_list())
    targets = sorted(matrix["target"].unique().to_list())
    cell = alt.selection_point(name="cell", fields=["player", "target"], on="click", clear="dblclick")
    # every name labelled: no label dropped for overlap, none cut short
    x = alt.X("target:N", title="target (who drew the card)", sort=targets,
              axis=alt.Axis(labelAngle=-45, labelOverlap=False, labelLimit=0))
    y = alt.Y("player:N", title="player of the 2", sort=givers, axis=alt.Axis(labelOverlap=False, labelLimit=0))
    tooltip: list[Any] = ["player", "target", "twos"]
    if lift:
        tooltip += [alt.Tooltip("expected_twos:Q", format=".1f"), alt.Tooltip("lift:Q", format=".2f")]
    base = alt.Chart(matrix.to_pandas())
    ground = base.mark_rect(color="#eceff1").encode(x=x, y=y)
    if lift:
        coloured = base.transform_filter("isValid(datum.lift)").mark_rect().encode(
            x=x, y=y, tooltip=tooltip,
            color=alt.Color("lift:Q", scale=alt.Scale(scheme="redblue", reverse=True, domainMid=1)))
    else:
        coloured = base.mark_rect().encode(x=x, y=y, tooltip=tooltip,
                                           color=alt.Color("twos:Q", scale=alt.Scale(scheme="orangered")))
    text = base.mark_text(fontSize=10).encode(x=x, y=y, text="twos:Q")
    # on top, an all but transparent cell takes the clicks (and the tooltip) over the text
    hit = base.mark_rect(opacity=0.001, color="#000").encode(x=x, y=y, tooltip=tooltip).add_params(cell)
    # a 24 px row per player of a 2 however few or many (a fixed height would squeeze or
    # drop rows), the columns sharing the page's width
    return alt.layer(ground, coloured, text, hit).properties(
        height=alt.Step(24), title="Who gives 2s to whom (click a cell for its games)")


# ------------------------------------------------------------------------ Scoring


@cached
def running_totals(running: pl.DataFrame) -> alt.TopLevelMixin:
    """Each player's match points after each hand (lower is better)."""
    return alt.Chart(running.to_pandas()).mark_line(point=True).encode(
        x=alt.X("hand:O", title="after hand"), y=alt.Y("total:Q", title="match points"),
        color="player:N", tooltip=["player", "hand", "points", "total"],
    ).properties(height=260, title="Running totals (lower is better)")


@cached
def winning_cards(cards: pl.DataFrame, multipliers: tuple[int, ...], title: str) -> alt.TopLevelMixin:
    """The ranks hands were won with, stacked by multiplier, one ruleset's rows of
    `read.winning_cards` (the multipliers of every ruleset: one colour scale for all)."""
    return alt.Chart(cards.to_pandas()).mark_bar().encode(
        x=alt.X("rank:N", sort="-y", title="rank of the winning card", axis=alt.Axis(labelAngle=0, labelOverlap=False)),
        y="hands:Q",
        color=alt.Color("multiplier:O", title="multiplier", scale=alt.Scale(domain=list(multipliers)),
                        legend=alt.Legend(orient="bottom")),
        tooltip=["ruleset", "rank", "multiplier", "hands"],
    ).properties(height=320, title=title)


# ------------------------------------------------------------------------ Live


@converted
def live_violation_rate(rates: pl.DataFrame, since: datetime, now: datetime, minutes: int) -> alt.TopLevelMixin:
    """One line per build: the share of its games with a violation, per period of
    `minutes`, over the span (`read.live_violation_rate`)."""
    frame = rates.with_columns(pl.col("period").dt.replace_time_zone(None)).to_pandas()
    return alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("period:T", title="UTC", axis=alt.Axis(format="%H:%M"), scale=_span(since, now)),
        y=alt.Y("violation_rate:Q", title="games with a violation", axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("server_build:N", title="server build", legend=alt.Legend(labelLimit=0)),
        tooltip=[alt.Tooltip("period:T", format="%H:%M", title="from"), "server_build", "games",
                 "with_violations", alt.Tooltip("violation_rate:Q", format=".1%", title="rate")],
    ).properties(height=280, title=f"Violation rate by server build, per {minutes} minutes")


@converted
def live_throughput(throughput: pl.DataFrame, since: datetime, now: datetime) -> alt.TopLevelMixin:
    """Games committed a second, a bar a minute, over the span (`read.live_throughput`)."""
    minute = throughput.with_columns((pl.col("games") / 60).alias("games_per_second"),
                                     pl.col("minute").dt.replace_time_zone(None))
    return alt.Chart(minute.to_pandas()).mark_bar().encode(
        x=alt.X("minute:T", title="UTC", axis=alt.Axis(format="%H:%M"), scale=_span(since, now)),
        y=alt.Y("games_per_second:Q", title="games / s"),
        tooltip=[alt.Tooltip("minute:T", format="%H:%M"), "games", "lines", "batches",
                 alt.Tooltip("commit_seconds:Q", format=".2f", title="commit s")],
    ).properties(height=160, title="Games committed a second, per minute")


# ------------------------------------------------------------------------ the audits


@cached
def deal_tests(rows: pl.DataFrame, effect: str, title: str) -> alt.TopLevelMixin:
    """Each test's observed minus expected effect (`effect` names it) with its 95 %
    interval, a finding in red, a dashed rule at zero (a uniform shuffle)."""
    base = alt.Chart(rows.to_pandas()).encode(y=alt.Y("concerns:N", sort=None, title=None,
                                                      axis=alt.Axis(labelLimit=0)))
    colour = alt.Color("verdict:N", scale=alt.Scale(domain=["finding", "no finding"], range=["#d62728", "#4c78a8"]))
    intervals = base.mark_rule().encode(x=alt.X("ci_low:Q", title=f"{effect} (0 = a uniform shuffle)"),
                                        x2="ci_high:Q", color=colour)
    points = base.mark_point(filled=True).encode(
        x="effect:Q", color=colour,
        tooltip=["concerns", "n", "effect", "ci_low", "ci_high", "p_value", "q_value", "detail"])
    zero = alt.Chart(pl.DataFrame({"x": [0.0]}).to_pandas()).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    return (intervals + points + zero).properties(height=alt.Step(18), title=title)


@cached
def pair_scores(pairs: pl.DataFrame, threshold: float | None, title: str) -> alt.TopLevelMixin:
    """A bar per pair's score, the cases in red, a dashed rule at the null's threshold."""
    chart = alt.Chart(pairs.to_pandas()).mark_bar().encode(
        y=alt.Y("pair:N", sort="-x", title=None, axis=alt.Axis(labelLimit=0)),
        x=alt.X("score:Q", title="pair score (Stouffer sum of the signals' z)"),
        color=alt.Color("case:N", scale=alt.Scale(domain=["case", "no case"], range=["#d62728", "#4c78a8"])),
        tooltip=["pair", "score", "p_value", "drivers"])
    if threshold is not None:
        rule = alt.Chart(pl.DataFrame({"x": [threshold]}).to_pandas()).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
        return (chart + rule).properties(height=alt.Step(18), title=title)
    return chart.properties(height=alt.Step(18), title=title)


@cached
def pair_network(nodes: pl.DataFrame, edges: pl.DataFrame) -> alt.TopLevelMixin:
    """The pair network: players on a circle, a line a pair (the thicker and darker, the
    higher its score; solid: a case), a dot mid-line that a click selects (the `pair`
    selection)."""
    domain = alt.Scale(domain=[-1.35, 1.35])
    x, y = alt.X("x:Q", axis=None, scale=domain), alt.Y("y:Q", axis=None, scale=domain)
    tooltip: list[Any] = ["pair", alt.Tooltip("score:Q", format=".2f"), alt.Tooltip("p_value:Q", format=".3g"),
                          "case", "drivers"]
    picked_pair = alt.selection_point(name="pair", fields=["pair"], on="click")
    score_colour = alt.Color("score:Q", title="pair score", scale=alt.Scale(scheme="orangered"))
    lines = alt.Chart(edges.to_pandas()).mark_rule().encode(
        x=x, y=y, x2="x2:Q", y2="y2:Q", color=score_colour,
        size=alt.Size("width:Q", scale=alt.Scale(range=[1, 9]), legend=None),
        strokeDash=alt.StrokeDash("case:N", scale=alt.Scale(domain=["case", "no case"], range=[[1, 0], [4, 4]]),
                                  title=None),
        tooltip=tooltip)
    dots = alt.Chart(edges.to_pandas()).mark_circle(size=160, stroke="#333").encode(
        x=alt.X("mid_x:Q", axis=None, scale=domain), y=alt.Y("mid_y:Q", axis=None, scale=domain),
        color=score_colour, tooltip=tooltip).add_params(picked_pair)
    people = alt.Chart(nodes.to_pandas()).mark_circle(size=500, opacity=1).encode(
        x=x, y=y, color=alt.condition("datum.in_a_case", alt.value("#d62728"), alt.value("#4c78a8")),
        tooltip=["player"])
    labels = alt.Chart(nodes.to_pandas()).mark_text(dy=-18, fontSize=13, fontWeight="bold").encode(
        x=x, y=y, text="player:N")
    return alt.layer(lines, people, labels, dots).properties(height=420)
