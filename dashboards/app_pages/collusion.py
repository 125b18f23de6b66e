"""Collusion: every pair's score (co-seating, 2s and 7 totals spared, J suits that suit
the other, soft play) against the permutation null's threshold, and the case queue with
the signals that drive each case and drill-down to the replays (ingest/pairs.py;
docs/fairplay.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import streamlit as st

from dashboards import cache, charts, views
from ingest import audits, read

#: the permutation null's relabellings (`haftkhabis audit pairs`' default)
PERMUTATIONS = 200
#: at most this many pairs in the score chart: the cases, then the highest scores
CHART_PAIRS = 40

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

report = views.audit_report(audits.Params("pairs", build, ruleset, since, level, PERMUTATIONS))
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
    views.done()

null_max = [-np.inf if m is None else m for m in report["null_max"]]
threshold = float(np.quantile(null_max, 1 - level)) if null_max else None
charted = sorted(report["pairs"], key=lambda p: (not p["case"], -p["score"]))
charted = charted[:CHART_PAIRS]
pairs = pl.DataFrame([{"pair": " + ".join(p["players"]), "score": p["score"], "p_value": p["p_value"],
                       "case": "case" if p["case"] else "no case", "drivers": ", ".join(p["drivers"])}
                      for p in charted])
shown_of = ("" if len(charted) == len(report["pairs"]) else
            f" ({len(charted)} of {len(report['pairs']):,}: cases first, highest scores first)")
st.vega_lite_chart(spec=charts.pair_scores(pairs, threshold, f"Pair scores; dashed: the null's threshold at "
                                                        f"{level:g}{shown_of}"), width="stretch")


def _signals(case: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame([{"signal": name, "z": d["z"], "drives": name in case["drivers"],
                          "observed": d["observed"], "expected": d["expected"], "decisions": d["decisions"]}
                         for name, d in case["detail"].items()])


def _show_pair(pair: dict[str, Any], steps: list[dict[str, Any]]) -> None:
    """A pair's signals and, for a case, the steps that show them with their replay links."""
    st.dataframe(_signals(pair), hide_index=True, width="stretch",
                 column_config={"z": st.column_config.NumberColumn(format="%.2f"),
                                "expected": st.column_config.NumberColumn(format="%.1f")})
    if steps:
        st.dataframe(pl.DataFrame(steps).select("signal", "game", "hand", "seq", "player", "what", "replay"),
                     hide_index=True, width="stretch",
                     column_config={"replay": st.column_config.LinkColumn("replay", display_text="open ▶")})


#: at most this many edges in the network (the highest scores), so that it stays readable
NETWORK_EDGES = 40
#: with no case, the network shows this many of the highest-scoring pairs
NETWORK_TOP = 10


def _network(report: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """The pair network: the cases and every scored pair that touches one of their players
    (their neighbours), or with no case the highest scores; nodes on a circle. Nodes,
    edges, and the pairs shown (cases first)."""
    scored = sorted(report["pairs"], key=lambda p: -p["score"])
    in_cases = {name for case in report["cases"] for name in case["players"]}
    shown = ([p for p in scored if in_cases & set(p["players"])] if in_cases else scored[:NETWORK_TOP])
    shown = sorted(shown[:NETWORK_EDGES], key=lambda p: (not p["case"], -p["score"]))
    names = sorted({name for p in shown for name in p["players"]},
                   key=lambda n: (n not in in_cases, n))
    angle = {n: 2 * np.pi * i / max(len(names), 1) for i, n in enumerate(names)}
    nodes = pl.DataFrame({"player": names, "x": [float(np.cos(angle[n])) for n in names],
                          "y": [float(np.sin(angle[n])) for n in names],
                          "in_a_case": [n in in_cases for n in names]},
                         schema={"player": pl.String, "x": pl.Float64, "y": pl.Float64, "in_a_case": pl.Boolean})
    edges = pl.DataFrame([{
        "pair": " + ".join(p["players"]), "score": p["score"], "p_value": p["p_value"],
        "case": "case" if p["case"] else "no case", "drivers": ", ".join(p["drivers"]),
        "x": float(np.cos(angle[p["players"][0]])), "y": float(np.sin(angle[p["players"][0]])),
        "x2": float(np.cos(angle[p["players"][1]])), "y2": float(np.sin(angle[p["players"][1]])),
    } for p in shown], schema={"pair": pl.String, "score": pl.Float64, "p_value": pl.Float64, "case": pl.String,
                               "drivers": pl.String, "x": pl.Float64, "y": pl.Float64, "x2": pl.Float64,
                               "y2": pl.Float64})
    # the line's width reads the score through a column of its own: a size and a colour on
    # one field share one legend, and the size's is hidden
    edges = edges.with_columns(mid_x=(pl.col("x") + pl.col("x2")) / 2, mid_y=(pl.col("y") + pl.col("y2")) / 2,
                               width=pl.col("score"))
    return nodes, edges, edges["pair"].to_list()


st.subheader("The pair network")
nodes, edges, shown_pairs = _network(report)
st.caption((f"The {len(report['cases'])} case(s) at {level:g} and every scored pair of their players"
            if report["cases"] else f"No case at {level:g}: the {len(shown_pairs)} highest-scoring pairs")
           + ". A line is a pair: the thicker and darker, the higher its score; solid: a case. "
             "Click a line's dot (or choose the pair below) for its signals and, for a case, the replays.")
event = st.vega_lite_chart(spec=charts.pair_network(nodes, edges), width="stretch", key="collusion_network",
                           on_select="rerun", selection_mode="pair")
clicked = (event.selection.get("pair") or []) if event is not None else []
if clicked and st.session_state.get("collusion_network_clicked") != clicked[0]:
    st.session_state["collusion_network_clicked"] = clicked[0]
    if clicked[0].get("pair") in shown_pairs:
        st.session_state["collusion_pair"] = clicked[0]["pair"]
case_names = [" + ".join(c["players"]) for c in report["cases"]]
chosen = st.selectbox("Pair", list(dict.fromkeys([*shown_pairs, *case_names])), index=None, key="collusion_pair",
                      placeholder="Choose a pair (or click its dot, or a case below)")
if chosen is not None:
    pair = next(p for p in report["pairs"] if " + ".join(p["players"]) == chosen)
    case = next((c for c in report["cases"] if c["players"] == pair["players"]), None)
    st.markdown(f"**{chosen}**: score {pair['score']:.2f}, p {pair['p_value']:.3g} "
                f"({'a case' if case else f'no case at {level:g}'}; driven by {', '.join(pair['drivers']) or 'no single signal'})")
    _show_pair(pair, case["steps"] if case else [])

def _open_case() -> None:
    """A row picked in the case queue: that pair chosen above, with its signals and steps."""
    rows = st.session_state["collusion_cases"].selection.rows
    if rows:
        st.session_state["collusion_pair"] = case_names[rows[0]]


if report["cases"]:
    st.subheader("Case queue")
    queue = pl.DataFrame([{"pair": name, "score": c["score"], "p_value": c["p_value"],
                           "drivers": ", ".join(c["drivers"]) or "no single signal", "steps": len(c["steps"]),
                           "first step": next((s["replay"] for s in c["steps"]), None)}
                          for name, c in zip(case_names, report["cases"], strict=True)],
                         schema={"pair": pl.String, "score": pl.Float64, "p_value": pl.Float64,
                                 "drivers": pl.String, "steps": pl.Int64, "first step": pl.String})
    st.dataframe(queue, hide_index=True, width="stretch", key="collusion_cases", on_select=_open_case,
                 selection_mode="single-row",
                 column_config={"score": st.column_config.NumberColumn(format="%.2f"),
                                "p_value": st.column_config.NumberColumn("p (family-wise)", format="%.3g"),
                                "first step": st.column_config.LinkColumn("first step", display_text="open ▶")})
    st.caption(f"{len(case_names):,} case(s), highest score first. Pick a row for its signals and every step "
               "above.")
else:
    st.success(f"No case at {level:g}.")
