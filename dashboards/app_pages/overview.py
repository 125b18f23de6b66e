"""Overview: games, hands, players and compliance, by ruleset and over time."""

from __future__ import annotations

import altair as alt
import streamlit as st

from dashboards import cache, views

st.title("Overview")
views.require_warehouse()
flt = views.game_filter("overview")

totals = cache.query("overview_totals", flt)
cols = st.columns(5)
cols[0].metric("Games", f"{totals['games']:,}")
cols[1].metric("Hands", f"{totals['hands']:,}")
cols[2].metric("Players", f"{totals['players']:,}")
cols[3].metric("Compliance rate", views.percent(totals["compliance_rate"]),
               help="Share of games with no violation (incomplete and aborted games count as compliant).")
cols[4].metric("Violations", f"{totals['violations']:,}")

if not totals["games"]:
    st.info("No game matches these filters.")
    views.done()

st.subheader("By ruleset")
rulesets = cache.query("by_ruleset", flt)
# the table on a row of its own, each column as wide as its header: none is cut
labels = {"ruleset": "ruleset", "games": "games", "hands": "hands", "compliant": "compliant",
          "unfinished": "unfinished", "failing": "with violations", "violations": "violations"}
st.dataframe(
    rulesets, hide_index=True, width="stretch",
    column_config={
        **{c: st.column_config.Column(label, width=views.header_width(label)) for c, label in labels.items()},
        "compliance_rate": st.column_config.ProgressColumn(
            "compliance", format="percent", min_value=0.0, max_value=1.0, width=160,
            help="Share of games with no violation."),
    },
)
statuses = cache.query("status_counts", flt)
st.altair_chart(
    alt.Chart(statuses.to_pandas()).mark_bar().encode(
        x=alt.X("games:Q", title="games"),
        y=alt.Y("ruleset:N", title=None, axis=alt.Axis(labelLimit=0)),
        color=alt.Color("status:N", scale=alt.Scale(
            domain=["compliant", "incomplete", "aborted", "violations", "invalid"],
            range=["#2e7d32", "#f0b429", "#9e9e9e", "#c62828", "#6a1b1b"]),
            legend=alt.Legend(orient="right", labelLimit=0)),
        tooltip=["ruleset", "status", "games"],
    ).properties(height=alt.Step(28), title="Games by status"),
    width="stretch",
)

st.subheader("Over time")
trend = cache.query("over_time", flt)
if trend.height:
    frame = trend.to_pandas()
    left, right = st.columns(2)
    left.altair_chart(
        alt.Chart(frame).mark_bar().encode(
            x=alt.X(views.period_axis(frame), title=None), y=alt.Y("games:Q", stack=True),
            color="ruleset:N", tooltip=["period:T", "ruleset", "games", "hands"],
        ).properties(height=260, title="Games started"),
        width="stretch",
    )
    right.altair_chart(
        alt.Chart(frame.dropna(subset=["compliance_rate"])).mark_line(point=True).encode(
            x=alt.X("period:T", title=None),
            y=alt.Y("compliance_rate:Q", title="compliance", axis=alt.Axis(format="%"),
                    scale=alt.Scale(zero=False)),
            color="ruleset:N", tooltip=["period:T", "ruleset", alt.Tooltip("compliance_rate:Q", format=".1%")],
        ).properties(height=260, title="Compliance rate"),
        width="stretch",
    )
else:
    st.caption("No game carries a timestamp.")
