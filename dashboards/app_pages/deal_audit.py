"""Deal audit: is the shuffle fair? Each test's observed effect against a uniform
shuffle's expectation (zero) with its 95 % interval, the findings after
Benjamini–Hochberg, and every test made (ingest/fairplay.py; docs/fairplay.md)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboards import cache, charts, views
from ingest import audits, read

FAMILIES = {
    "hand.special": "Special cards per hand, by seat and position",
    "stock.position": "Each card's place in the stock",
    "hand.ranks": "Ranks in the hands, by position",
    "hand.suits": "Suits in the hands, by position",
    "starter.ranks": "The starter's rank",
    "deals.repeat": "Repeated deals",
}

#: at most this many tests in the chart of a family (findings first, smallest q first)
CHART_TESTS = 40
#: at most this many findings in the table (smallest q first); the download has them all
TABLE_FINDINGS = 200

st.title("Deal audit")
views.require_warehouse()
options: read.Choices = cache.query("choices")
cols = st.columns([3, 2, 2, 2])
build = cols[0].selectbox("Server build", options.builds, index=None, key="deal_audit_build",
                          placeholder="All builds")
ruleset = cols[1].selectbox("Ruleset", options.rulesets, index=None, key="deal_audit_ruleset",
                            placeholder="All rulesets")
since = cols[2].date_input("Games started on or after", value=None, key="deal_audit_since",
                           min_value=options.first_day, max_value=options.last_day)
level = cols[3].selectbox("False-discovery level", [0.01, 0.05, 0.1], key="deal_audit_level")

report = views.audit_report(audits.Params("deals", build, ruleset, since, level))
tests = pl.DataFrame(report["tests"], infer_schema_length=None)
metrics = st.columns(4)
metrics[0].metric("Deals", f"{report['deals']:,}")
metrics[1].metric("Tests made", f"{report['tests_made']:,}")
metrics[2].metric("Not enough games", f"{report['not_enough_games']:,}")
metrics[3].metric("Findings", f"{len(report['findings']):,}")
st.caption(f"Every test made is corrected together (Benjamini–Hochberg at {level:g}); a finding's "
           "q-value is at most the level. A test with too few hands is not made. How to read a "
           "finding, and the audit's measured power and false-positive rate: docs/fairplay.md.")
if not report["tests_made"]:
    st.info("Not enough games for any test with these filters.")
    views.done()

if report["findings"]:
    st.error(f"{len(report['findings'])} findings at {level:g}")
    findings = pl.DataFrame(report["findings"], infer_schema_length=None).select(
        "family", "concerns", "n", "effect_name", "effect", "ci_low", "ci_high", "p_value", "q_value",
        "detail").sort("q_value")
    st.dataframe(findings.head(TABLE_FINDINGS), hide_index=True, width="stretch")
    if findings.height > TABLE_FINDINGS:
        st.caption(f"The {TABLE_FINDINGS} findings with the smallest q of {findings.height:,}; every one in the "
                   "download (or `haftkhabis audit deals --format csv`).")
    st.download_button("Every finding (CSV)", data=lambda: findings.write_csv().encode("utf-8"),
                       file_name="deal-audit-findings.csv", mime="text/csv", icon=":material/download:",
                       key="deal_audit_findings_csv")
else:
    st.success(f"Nothing found at {level:g}: the deals are what a uniform shuffle gives, as far "
               "as these tests and these games can tell.")

made = tests.filter(pl.col("status") == "tested")
family = st.radio("Test", [f for f in FAMILIES if f in set(made["family"])], horizontal=True,
                  format_func=lambda f: FAMILIES[f], key="deal_audit_family")
shown = made.filter(pl.col("family") == family).with_columns(
    pl.when(pl.col("finding")).then(pl.lit("finding")).otherwise(pl.lit("no finding")).alias("verdict"))
if shown.height:
    name = shown["effect_name"][0]
    charted = shown.sort(["finding", "q_value", "p_value"], descending=[True, False, False],
                         nulls_last=True).head(CHART_TESTS)
    of = "" if charted.height == shown.height else f" ({charted.height} of {shown.height:,}: findings first, smallest q first)"
    st.vega_lite_chart(spec=charts.deal_tests(charted.sort("effect"), name, f"{FAMILIES[family]}: observed minus "
                                              f"expected, 95 % interval{of}"), width="stretch")

with st.expander(f"Every test (made and not made): {tests.height:,}", key="deal_audit_every_test",
                 on_change="rerun") as every:
    if every.open:  # drawn only while open
        st.dataframe(tests.select("family", "concerns", "status", "n", "effect", "ci_low", "ci_high",
                                  "p_value", "q_value", "finding", "detail"),
                     hide_index=True, width="stretch")
