"""Ratings: the leaderboard by Plackett–Luce rating with its uncertainty (plain and with the
deal adjustment), accuracy and luck per player, read from the warehouse's stored analyses
(`haftkhabis stats ratings` makes them; this page never runs rollouts)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboards import cache, views

st.title("Ratings")
views.require_warehouse()
st.caption("Each decided hand of points play is a free-for-all ranked by points (openskill's "
           "Plackett–Luce); the adjusted rating ranks by points minus the deal's expected points. "
           "Accuracy is the mean expected loss per decision (points, by rollouts from the decider's "
           "information set). docs/analysis.md says what each figure means and where it stops.")
min_hands = st.slider("Minimum rated hands", 0, 50, 5, key="ratings_min_hands")
rows = cache.ratings(min_hands)
if rows is None:
    st.warning("No stored analyses in this warehouse yet: run `haftkhabis stats ratings --warehouse "
               "DIR` to analyse its games (once; later runs analyse only new games).")
    views.done()
if not rows:
    st.info(f"No player has {min_hands} rated hands or more.")
    views.done()
frame = pl.DataFrame(rows)
st.dataframe(
    frame.select("player", "rating", "uncertainty", "rating_adjusted", "uncertainty_adjusted", "games",
                 "hands", "decisions", "accuracy", "accuracy_low", "accuracy_high", "mistake_share",
                 "luck", "luck_low", "luck_high"),
    hide_index=True, key="ratings_table",
    column_config={
        "rating": st.column_config.NumberColumn("rating (mu)", format="%.2f"),
        "uncertainty": st.column_config.NumberColumn("± (sigma)", format="%.2f"),
        "rating_adjusted": st.column_config.NumberColumn("deal-adjusted", format="%.2f"),
        "uncertainty_adjusted": st.column_config.NumberColumn("±", format="%.2f"),
        "accuracy": st.column_config.NumberColumn("mean loss / decision", format="%.2f"),
        "mistake_share": st.column_config.ProgressColumn("clear mistakes", format="percent",
                                                         min_value=0.0, max_value=1.0),
        "luck": st.column_config.NumberColumn("luck / hand", format="%+.2f"),
    },
)
st.caption(f"{len(rows)} players with {min_hands}+ rated hands, ordered by mu − 3 sigma.")

st.subheader("A player over time")
chosen = st.selectbox("Player", [r["player"] for r in rows], key="ratings_player")
if chosen:
    mine = next(r for r in rows if r["player"] == chosen)
    left, middle, right = st.columns(3)
    left.metric("rating (mu ± sigma)", f"{mine['rating']:.2f} ± {mine['uncertainty']:.2f}")
    if mine["accuracy"] is not None:
        middle.metric("mean loss / decision", f"{mine['accuracy']:.2f}",
                      help=f"95%: {mine['accuracy_low']:.2f} – {mine['accuracy_high']:.2f} points over "
                           f"{mine['decisions']} decisions; clear mistakes {mine['mistake_share']:.1%}")
    if mine["luck"] is not None:
        right.metric("luck / hand", f"{mine['luck']:+.2f}",
                     help=f"95%: {mine['luck_low']:+.2f} – {mine['luck_high']:+.2f} points")
    history = cache.rating_history(chosen)
    if history:
        st.line_chart(pl.DataFrame(history).select("hand_index", "rating", "rating_adjusted"),
                      x="hand_index", y=["rating", "rating_adjusted"])
        st.caption("Rating (mu) after each rated hand, plain and deal-adjusted.")
