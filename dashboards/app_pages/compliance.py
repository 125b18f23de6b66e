"""Compliance: violations by code, ruleset and server build, over time; every row drills
down to the replay at that step."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboards import cache, charts, views
from engine.violations import EXPLANATIONS, Code
from ingest import read

st.title("Compliance")
views.require_warehouse()
options: read.Choices = cache.query("choices")
flt = views.game_filter("compliance", builds=True)

by_ruleset = cache.query("violations_by", flt, "ruleset")
if not by_ruleset.height:
    st.success("No violation in these games.")
    views.done()

# a 24 px row per code, each labelled in full: the chart grows with the codes found (the
# builds' chart beside it takes about the same height: the rows, the axis and the title)
height = max(240, 24 * by_ruleset["code"].n_unique() + 90)
left, right = st.columns(2)
left.vega_lite_chart(spec=charts.violations_by_code(by_ruleset), width="stretch")
builds = cache.query("builds", flt)
right.vega_lite_chart(spec=charts.violation_rate_by_build(builds, height), width="stretch")
by_build = cache.query("violations_by", flt, "server_build")
with st.expander("Violations by code and server build (table)"):
    st.dataframe(by_build.pivot(on="server_build", index="code", values="violations").fill_null(0),
                 hide_index=True, width="stretch")

trend = cache.query("violations_over_time", flt)
if trend.height:
    st.vega_lite_chart(spec=charts.violations_over_time(trend), width="stretch")

st.subheader("Drill down")
codes = st.multiselect("Codes", options.codes, key="compliance_codes", placeholder="All codes",
                       format_func=lambda c: f"{c} — {EXPLANATIONS.get(Code(c), '')}" if c in Code._value2member_map_ else c)
rows = cache.query("violation_rows", flt, tuple(codes))
table = rows.with_columns(
    ("replay?game=" + rows["game_id"] + "&seq=" + rows["seq"].cast(str)).alias("replay")
    if rows.height else rows["game_id"].alias("replay"),
)
st.caption(f"The {rows.height} most recent violations (newest games first). "
           "Select a row (or “open ▶”) to replay the game at that step.")
event = st.dataframe(
    table, hide_index=True, width="stretch", height=420, key="compliance_table",
    on_select="rerun", selection_mode="single-row",
    column_order=["start_time", "game_id", "hand", "seq", "code", "player", "message", "ruleset",
                  "server_build", "replay"],
    column_config={
        "start_time": st.column_config.DatetimeColumn("started", format="YYYY-MM-DD HH:mm"),
        "game_id": st.column_config.TextColumn("game"),
        "replay": st.column_config.LinkColumn("replay", display_text="open ▶"),
    },
)
picked = event.selection.rows if event is not None else []
if picked and table["seq"][picked[0]] is not None:
    st.switch_page("app_pages/replay.py",
                   query_params={"game": table["game_id"][picked[0]], "seq": str(table["seq"][picked[0]])})

st.subheader("Which rules do the servers really play?")
st.caption("Each game is replayed under every ruleset profile — the three rulesets, and persian with "
           "each combination of its five options in both modes. A build whose games make sense only "
           "under another profile than their headers say is named below.")
per_build = st.select_slider("Games per server build (newest first)", options=[25, 50, 100, 200, 400],
                             value=50, key="compliance_infer_games")
if st.toggle("Infer the rules", key="compliance_infer", help="Replays every sampled game 66 times."):
    inferred = cache.infer_builds(flt, per_build)
    if not inferred.sampled:
        st.info("No game to sample.")
    else:
        for sentence in inferred.findings:
            st.error(sentence, icon=":material/policy:")
        if not inferred.findings:
            st.success(f"All {inferred.sampled} sampled games play what their headers say.")
        st.vega_lite_chart(spec=charts.profile_shares(inferred.shares), width="stretch")
        games = inferred.games.with_columns(
            ("replay?game=" + pl.col("game_id") + "&seq=" + pl.col("seq").cast(pl.String)).alias("replay"))
        st.dataframe(
            games.sort(["discrepancy", "game_id"], descending=[True, False]), hide_index=True, width="stretch",
            column_order=["game_id", "server_build", "header", "inferred", "discrepancy", "complies_with",
                          "contradiction", "replay"],
            column_config={"game_id": st.column_config.TextColumn("game"),
                           "complies_with": st.column_config.NumberColumn("profiles it complies with"),
                           "contradiction": st.column_config.TextColumn("first line contradicting the header"),
                           "replay": st.column_config.LinkColumn("replay", display_text="open ▶")},
        )
