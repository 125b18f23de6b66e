"""Collusion: every pair's score (co-seating, 2s and 7 totals spared, J suits that suit
the other, soft play) against the permutation null's threshold, and the case queue with
the signals that drive each case and drill-down to the replays (ingest/pairs.py;
docs/fairplay.md)."""

from __future__ import annotations

from typing import Any

import altair as alt
import numpy as np
import polars as pl
import streamlit as st

from dashboards import cache, views
from ingest import read

st.title("Collusion")
views.require_warehouse()
options: read.Choices = cache.query("choices")
cols = st.columns([3, 2, 2, 2])
build = cols[0].selectbox("Server build", options.builds, index=None, key="collusion_build",
                          placeholder="All builds")
ruleset = cols[1].selectbox("Ruleset", options.rulesets, index=None, key="collusion_ruleset",
                            placeholder="All rulesets")
since = cols[2].date_input("Games started on or after", value=None, key="collusion_since",
                           min_value=options.first_day, max_value=options.last_day)
level = cols[3].selectbox("False-positive level (family-wise)", [0.01, 0.05, 0.1], key="collusion_level")

report: dict[str, Any] = cache.query("pair_audit", build, ruleset, since, level, 200)
metrics = st.columns(4)
metrics[0].metric("Games", f"{report['games']:,}")
metrics[1].metric("Decisions read", f"{sum(report['decisions'].values()):,}")
metrics[2].metric("Pairs scored", f"{report['pairs_scored']:,}")
metrics[3].metric("Cases", f"{len(report['cases']):,}")
st.caption("Each signal compares what one of a pair does for the other with what they do for the others at "
           "the same kind of moment, as a z (positive: a favour); a pair's score is their Stouffer sum "
           "(co-seating clipped to ±2). The null is the highest score over every pair after relabelling each "
           f"game's players at random ({report['permutations']} times), so a case's p-value is family-wise. "
           "docs/fairplay.md says what each signal assumes.")
if not report["pairs_scored"]:
    st.info("Not enough games for any pair with these filters.")
    st.stop()

threshold = float(np.quantile(report["null_max"], 1 - level)) if report["null_max"] else None
pairs = pl.DataFrame([{"pair": " + ".join(p["players"]), "score": p["score"], "p_value": p["p_value"],
                       "case": "case" if p["case"] else "no case", "drivers": ", ".join(p["drivers"])}
                      for p in report["pairs"]])
chart = alt.Chart(pairs.to_pandas()).mark_bar().encode(
    y=alt.Y("pair:N", sort="-x", title=None, axis=alt.Axis(labelLimit=0)),
    x=alt.X("score:Q", title="pair score (Stouffer sum of the signals' z)"),
    color=alt.Color("case:N", scale=alt.Scale(domain=["case", "no case"], range=["#d62728", "#4c78a8"])),
    tooltip=["pair", "score", "p_value", "drivers"])
if threshold is not None:
    rule = alt.Chart(pl.DataFrame({"x": [threshold]}).to_pandas()).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    chart = chart + rule
st.altair_chart(chart.properties(height=alt.Step(18), title="Pair scores; dashed: the null's threshold at "
                                 f"{level:g}"), width="stretch")


def _signals(case: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame([{"signal": name, "z": d["z"], "drives": name in case["drivers"],
                          "observed": d["observed"], "expected": d["expected"], "decisions": d["decisions"]}
                         for name, d in case["detail"].items()])


if report["cases"]:
    st.subheader("Case queue")
    for case in report["cases"]:
        drivers = ", ".join(case["drivers"]) or "no single signal"
        with st.expander(f"{' + '.join(case['players'])}: score {case['score']:.2f}, p {case['p_value']:.3g} "
                         f"(driven by {drivers})"):
            st.dataframe(_signals(case), hide_index=True, width="stretch",
                         column_config={"z": st.column_config.NumberColumn(format="%.2f"),
                                        "expected": st.column_config.NumberColumn(format="%.1f")})
            steps = pl.DataFrame(case["steps"]) if case["steps"] else pl.DataFrame()
            if steps.height:
                st.dataframe(steps.select("signal", "game", "hand", "seq", "player", "what", "replay"),
                             hide_index=True, width="stretch",
                             column_config={"replay": st.column_config.LinkColumn("replay", display_text="open ▶")})
else:
    st.success(f"No case at {level:g}.")
