"""Players: the leaderboard, one player's profile (win rate by ruleset and seat, points,
special cards, violations, head-to-head), and who targets whom with 2s."""

from __future__ import annotations

import altair as alt
import polars as pl
import streamlit as st

from dashboards import cache, data, views

st.title("Players")
views.require_warehouse()
options: data.Choices = cache.query("choices")


def leaderboard_tab() -> None:
    """The leaderboard, per ruleset."""
    cols = st.columns([3, 1])
    rulesets = cols[0].multiselect("Ruleset", options.rulesets, key="players_board_rulesets",
                                   placeholder="All rulesets")
    min_hands = cols[1].number_input("At least this many hands", 0, 10_000, 5, key="players_min_hands")
    table = cache.query("leaderboard", tuple(rulesets), int(min_hands))
    st.dataframe(
        table, hide_index=True, width="stretch", height=480,
        column_config={
            "win_rate": st.column_config.ProgressColumn("win rate", format="percent", min_value=0.0, max_value=1.0),
            "mean_points": st.column_config.NumberColumn("mean points", format="%.1f"),
            "games_won": st.column_config.NumberColumn("matches won"),
            "total_points": st.column_config.NumberColumn("total points"),
        },
    )
    st.caption("Ranked per ruleset by hands won, then win rate. Lower points are better.")


def profile_tab() -> None:
    """One player's profile."""
    names: list[str] = cache.query("player_names")
    if "player" in st.query_params and st.query_params["player"] in names \
            and "players_player" not in st.session_state:
        st.session_state["players_player"] = st.query_params["player"]
    player = st.selectbox("Player", names, key="players_player", index=None, placeholder="Choose a player")
    if player is None:
        st.info("Choose a player to see their profile.")
    else:
        st.query_params["player"] = player
        per_ruleset = cache.query("player_by_ruleset", player)
        hands = int(per_ruleset["hands"].sum()) if per_ruleset.height else 0
        wins = int(per_ruleset["wins"].sum()) if per_ruleset.height else 0
        cols = st.columns(4)
        cols[0].metric("Hands", f"{hands:,}")
        cols[1].metric("Hands won", f"{wins:,}")
        cols[2].metric("Win rate", views.percent(wins / hands if hands else None))
        cols[3].metric("Violations", f"{int(per_ruleset['violations'].sum()) if per_ruleset.height else 0:,}")
        st.dataframe(per_ruleset, hide_index=True, width="stretch", column_config={
            "win_rate": st.column_config.ProgressColumn("win rate", format="percent", min_value=0.0, max_value=1.0),
            "mean_points": st.column_config.NumberColumn("mean points", format="%.1f"),
        })
        left, right = st.columns(2)
        seats = cache.query("player_by_seat", player)
        if seats.height:
            left.altair_chart(
                alt.Chart(seats.to_pandas()).mark_bar().encode(
                    x=alt.X("turn_order:O", title="place in the playing order (0 = first to play)"),
                    y=alt.Y("win_rate:Q", axis=alt.Axis(format="%"), title="win rate"),
                    color="ruleset:N", xOffset="ruleset:N",
                    tooltip=["ruleset", "turn_order", "hands", "wins", alt.Tooltip("win_rate:Q", format=".1%")],
                ).properties(height=240, title="Win rate by seat"),
                width="stretch",
            )
        points = cache.query("player_points", player)
        if points.height:
            right.altair_chart(
                alt.Chart(points.to_pandas()).mark_bar().encode(
                    x=alt.X("points:Q", bin=alt.Bin(step=5), title="hand score (capped at 200)"),
                    y=alt.Y("hands:Q", stack=None), color="ruleset:N", opacity=alt.value(0.75),
                    tooltip=["ruleset", "points", "hands"],
                ).properties(height=240, title="Points per hand"),
                width="stretch",
            )
        mine = cache.query("special_cards", player)
        if mine.height:
            everyone = cache.query("special_cards", None).filter(pl.col("ruleset").is_in(mine["ruleset"].to_list()))
            long = pl.concat([mine.with_columns(who=pl.lit("player")),
                              everyone.with_columns(who=pl.lit("everyone"))])
            st.altair_chart(
                alt.Chart(long.to_pandas()).mark_bar().encode(
                    y=alt.Y("what:N", title=None), x=alt.X("per hand:Q"),
                    yOffset="who:N", color=alt.Color("who:N", scale=alt.Scale(domain=["player", "everyone"], range=["#1565c0", "#b0bec5"])),
                    row=alt.Row("ruleset:N", title=None),
                    tooltip=["ruleset", "what", "who", alt.Tooltip("per hand:Q", format=".2f")],
                ).properties(height=150, width=520, title="Special cards per hand: this player against everyone"),
            )
        left, right = st.columns(2)
        left.markdown("**Violations committed**")
        left.dataframe(cache.query("player_violations", player), hide_index=True, width="stretch")
        right.markdown("**Head to head** (hands finished ahead of / behind each opponent)")
        right.dataframe(cache.query("player_head_to_head", player), hide_index=True, width="stretch",
                        column_config={"ahead_rate": st.column_config.ProgressColumn(
                            "ahead", format="percent", min_value=0.0, max_value=1.0)})


def targeting_tab() -> None:
    """The 2-card targeting matrix as a heatmap."""
    cols = st.columns([3, 2])
    rulesets = cols[0].multiselect("Ruleset", options.rulesets, key="players_two_rulesets",
                                   placeholder="All rulesets")
    metric = cols[1].radio("Colour by", ["twos", "lift"], key="players_two_metric", horizontal=True,
                           format_func=lambda m: "2s given" if m == "twos" else "lift over a fair choice")
    with st.spinner("Counting every 2 played (once per warehouse batch)…"):
        matrix = cache.query("two_targets", tuple(rulesets), 25, metric == "lift")
    if not matrix.height:
        st.info("No 2 with a target in these games.")
    else:
        frame = matrix.to_pandas()
        scale = (alt.Scale(scheme="redblue", reverse=True, domainMid=1) if metric == "lift"
                 else alt.Scale(scheme="orangered"))
        heat = alt.Chart(frame).mark_rect().encode(
            x=alt.X("target:N", title="target (who drew the card)"),
            y=alt.Y("player:N", title="player of the 2"),
            color=alt.Color(f"{metric}:Q", scale=scale),
            tooltip=["player", "target", "twos", alt.Tooltip("expected_twos:Q", format=".1f"),
                     alt.Tooltip("lift:Q", format=".2f")],
        )
        text = alt.Chart(frame).mark_text(fontSize=10).encode(x="target:N", y="player:N", text="twos:Q")
        st.altair_chart((heat + text).properties(height=max(240, 26 * matrix["player"].n_unique()),
                                                 title="Who gives 2s to whom"), width="stretch")
        st.caption("Lift: 2s given to that target over the number expected if targets were chosen at random "
                   "among the others at the table. Far above 1 with many 2s is worth a look.")


# stateful tabs: only the open one runs, and the URL remembers it (?players_tab=Profile)
board, profile, targeting = st.tabs(
    ["Leaderboard", "Profile", "2-card targeting"], key="players_tab", bind="query-params",
    default="Profile" if "player" in st.query_params else None,
)
for tab, render in ((board, leaderboard_tab), (profile, profile_tab), (targeting, targeting_tab)):
    if tab.open:
        with tab:
            render()
