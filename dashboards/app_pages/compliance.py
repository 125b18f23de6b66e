"""Compliance: violations by code, ruleset and server build, over time; every row drills
down to the replay at that step."""

from __future__ import annotations

import altair as alt
import polars as pl
import streamlit as st

from dashboards import cache, views
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
codes_found = by_ruleset["code"].n_unique()
height = max(240, 24 * codes_found + 90)
left, right = st.columns(2)
left.altair_chart(
    alt.Chart(by_ruleset.to_pandas()).mark_bar().encode(
        y=alt.Y("code:N", sort="-x", title=None, axis=alt.Axis(labelOverlap=False, labelLimit=0)),
        x=alt.X("sum(violations):Q", title="violations"),
        color="ruleset:N", tooltip=["code", "ruleset", "violations", "games"],
    ).properties(height=alt.Step(24), title=f"Violations by code and ruleset ({codes_found} codes)"),
    width="stretch",
)
builds = cache.query("builds", flt)
right.altair_chart(
    alt.Chart(builds.to_pandas()).mark_bar().encode(
        x=alt.X("server_build:N", title=None, axis=alt.Axis(labelOverlap=False, labelLimit=0)),
        xOffset="ruleset:N",
        y=alt.Y("violation_rate:Q", axis=alt.Axis(format="%"), title="games with a violation"),
        color="ruleset:N",
        tooltip=["server_build", "ruleset", "games", "with_violations", "violations",
                 alt.Tooltip("violation_rate:Q", format=".2%")],
    ).properties(height=height, title="Share of games with a violation, by server build"),
    width="stretch",
)
by_build = cache.query("violations_by", flt, "server_build")
with st.expander("Violations by code and server build (table)"):
    st.dataframe(by_build.pivot(on="server_build", index="code", values="violations").fill_null(0),
                 hide_index=True, width="stretch")

trend = cache.query("violations_over_time", flt)
if trend.height:
    # every code its own colour, and the legend below the bars in columns: all of it shows,
    # whatever the number of codes (at the side it was cut to the chart's height)
    trend_codes = trend["code"].unique().to_list()
    st.altair_chart(
        alt.Chart(trend.to_pandas()).mark_bar().encode(
            x=alt.X(views.period_axis(trend), title=None), y=alt.Y("violations:Q", stack=True),
            color=alt.Color("code:N", scale=views.code_colours(trend_codes),
                            legend=alt.Legend(orient="bottom", columns=4, labelLimit=0, symbolLimit=0,
                                              title=f"code ({len(trend_codes)})")),
            tooltip=["period:T", "code", "violations"],
        # the height holds the bars and the legend's rows below them (Streamlit fits both in it)
        ).properties(height=300 + 22 * -(-len(trend_codes) // 4), title="Violations over time"),
        width="stretch",
    )

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
        st.altair_chart(
            alt.Chart(inferred.shares.to_pandas()).mark_rect().encode(
                x=alt.X("server_build:N", title=None, axis=alt.Axis(labelOverlap=False, labelLimit=0)),
                y=alt.Y("profile:N", title=None, sort="-color", axis=alt.Axis(labelOverlap=False, labelLimit=0)),
                color=alt.Color("share:Q", scale=alt.Scale(domain=[0, 1]), legend=alt.Legend(format="%")),
                tooltip=["server_build", "profile", "games", "compliant", alt.Tooltip("share:Q", format=".0%"),
                         "in_headers"],
            ).properties(height=28 * max(4, inferred.shares["profile"].n_unique()),
                         title="Share of games compliant, by profile and server build"),
            width="stretch",
        )
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
