"""Collusion: pairs who spare each other from their 2s, each pair's score against the
permutation null's threshold, and the case queue with drill-down to the replays
(ingest/pairs.py; docs/fairplay.md)."""

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
metrics = st.columns(3)
metrics[0].metric("2s given", f"{report['gifts']:,}")
metrics[1].metric("Pairs scored", f"{report['pairs_scored']:,}")
metrics[2].metric("Cases", f"{len(report['cases']):,}")
st.caption("A pair is scored when at least 5 of their 2s were expected to go from one to the other; "
           "its score is (expected − observed) / sd: positive when they spare each other. The null is "
           f"the highest score over every pair after relabelling each game's players at random "
           f"({report['permutations']} times), so a case's p-value is family-wise. One signal so far "
           "(2s spared); docs/fairplay.md says what it assumes.")
if not report["pairs_scored"]:
    st.info("Not enough games for any pair with these filters.")
    st.stop()

threshold = float(np.quantile(report["null_max"], 1 - level)) if report["null_max"] else None
pairs = pl.DataFrame([{"pair": " + ".join(p["players"]), "score": p["score"], "p_value": p["p_value"],
                       "case": "case" if p["case"] else "no case", "gifts_to_partner": p["gifts_to_partner"],
                       "expected": p["expected"]} for p in report["pairs"]])
chart = alt.Chart(pairs.to_pandas()).mark_bar().encode(
    y=alt.Y("pair:N", sort="-x", title=None, axis=alt.Axis(labelLimit=0)),
    x=alt.X("score:Q", title="score: 2s spared, in sd"),
    color=alt.Color("case:N", scale=alt.Scale(domain=["case", "no case"], range=["#d62728", "#4c78a8"])),
    tooltip=["pair", "score", "p_value", "gifts_to_partner", "expected"])
if threshold is not None:
    rule = alt.Chart(pl.DataFrame({"x": [threshold]}).to_pandas()).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    chart = chart + rule
st.altair_chart(chart.properties(height=alt.Step(18), title="Pair scores; dashed: the null's threshold at "
                                 f"{level:g}"), width="stretch")

if report["cases"]:
    st.subheader("Case queue")
    for case in report["cases"]:
        with st.expander(f"{' + '.join(case['players'])}: score {case['score']:.2f}, p {case['p_value']:.3g} "
                         f"({case['gifts_to_partner']} 2s to each other, {case['expected']:.1f} expected)"):
            steps = pl.DataFrame(case["steps"]) if case["steps"] else pl.DataFrame()
            if steps.height:
                st.dataframe(steps, hide_index=True, width="stretch",
                             column_config={"replay": st.column_config.LinkColumn("replay", display_text="open ▶")})
else:
    st.success(f"No case at {level:g}.")
