"""Overview: games, hands, players and compliance, by ruleset and over time."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, charts, views

st.title("Overview")
views.require_warehouse()
flt = views.game_filter("overview")

answers = cache.overview(flt)
totals = answers.totals
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
rulesets = answers.rulesets
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
st.vega_lite_chart(spec=charts.games_by_status(answers.statuses), width="stretch")

st.subheader("Over time")
trend = answers.trend
if trend.height:
    left, right = st.columns(2)
    left.vega_lite_chart(spec=charts.games_started(trend), width="stretch")
    right.vega_lite_chart(spec=charts.compliance_rate(trend), width="stretch")
else:
    st.caption("No game carries a timestamp.")
