"""Scoring: each hand's cards left and their points, the multiplier and why, the ranking;
the match totals hand by hand; and how hands are scored across the warehouse."""

from __future__ import annotations

from html import escape

import polars as pl
import streamlit as st

from dashboards import cache, charts, views
from engine import render as ui
from engine.replay import score_from_rows
from engine.report import score_table_html
from engine.rulesets import RULESETS

views.inject_css()
st.title("Scoring")
views.require_warehouse()



def one_game_tab() -> None:
    """One game's hands, scores and running totals."""
    if "game" in st.query_params and "scoring_game" not in st.session_state:
        st.session_state["scoring_game"] = st.query_params["game"]
    game = st.text_input("Game id", key="scoring_game", placeholder="t41-0007").strip()
    row = cache.query("game_row", game) if game else None
    if not game:
        st.info("Enter a game id (or open one from the Games page) to see its scoring.")
    elif row is None:
        st.error(f"No game {game!r} in the warehouse.")
    else:
        st.query_params["game"] = game
        rules = RULESETS.get(row["ruleset"])
        hands = cache.query("game_hands", game)
        seats = cache.query("game_hand_players", game)
        views.html(
            f'<div class="hk">{ui.status_badge(row["status"])} &nbsp; ruleset <b>{row["ruleset"]}</b> · '
            f'{len(row["players"] or [])} players · {row["hands"]} hand(s) · '
            f'winner(s): <b>{escape(", ".join(row["winners"] or []) or "—")}</b></div>'
        )
        st.page_link("app_pages/replay.py", label="Replay this game", icon=":material/play_circle:",
                     query_params={"game": game})
        decided = hands.filter(pl.col("decided"))
        if not decided.height:
            st.info("No hand of this game was decided.")
        for hand in decided.iter_rows(named=True):
            players = seats.filter(pl.col("hand") == hand["hand"]).to_dicts()
            score = score_from_rows(hand, players, rules.points if rules else {})
            with st.expander(f"Hand {hand['hand']} · won by {', '.join(score.winners)} ({score.reason})",
                             expanded=decided.height <= 3):
                views.html(f'<div class="hk">{score_table_html(score)}</div>')
        points = seats.filter(pl.col("points").is_not_null())
        if points.height and row["totals"] is not None:
            st.subheader("Match totals")
            running = points.sort("hand").with_columns(
                pl.col("points").cum_sum().over("player").alias("total"))
            totals = (points.group_by("player").agg(pl.col("points").sum().alias("total"),
                                                    pl.col("won").sum().alias("hands won"))
                      .sort("total"))
            left, right = st.columns([2, 3])
            left.dataframe(totals, hide_index=True, width="stretch")
            right.vega_lite_chart(spec=charts.running_totals(running), width="stretch")


def across_tab() -> None:
    """How hands are scored across the warehouse."""
    flt = views.game_filter("scoring")
    summary = cache.query("scoring_summary", flt)
    st.dataframe(summary, hide_index=True, width="stretch",
                 column_config={"mean_multiplier": st.column_config.NumberColumn(format="%.3f")})
    # the winning cards: one chart per ruleset, each filling its own column, so no chart
    # runs over its neighbour (or off the page) however many rulesets there are
    cards = cache.query("winning_cards", flt)
    if cards.height:
        st.markdown("**Cards hands were won with**")
        rulesets = sorted(cards["ruleset"].unique().to_list())
        multipliers = sorted(cards["multiplier"].unique().to_list())
        for column, ruleset in zip(st.columns(len(rulesets)), rulesets, strict=True):
            column.vega_lite_chart(spec=charts.winning_cards(cards.filter(pl.col("ruleset") == ruleset),
                                                             tuple(multipliers), ruleset), width="stretch")
    spread = cache.query("points_distribution", flt)
    if spread.height:
        st.vega_lite_chart(spec=charts.points_histogram(spread, "a loser's hand score (capped at 200)",
                                                        "Points left in losing hands (points play)", 260),
                           width="stretch")


one_game, across = st.tabs(["One game", "Across games"], key="scoring_tab", bind="query-params")
for tab, render in ((one_game, one_game_tab), (across, across_tab)):
    if tab.open:
        with tab:
            render()
