"""Players: the leaderboard (ranked by a measure the reader picks, with its sample size),
one player's profile (figures per ruleset and play, win rate by seat, points, special
cards, violations, head-to-head), the first-seat advantage, and who targets whom with 2s."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl
import streamlit as st

from dashboards import cache, charts, views
from ingest import read

if TYPE_CHECKING:
    from streamlit.elements.lib.column_types import ColumnConfig

#: players in the 2-card matrix unless the reader picks others: more rows than this do not read
TOP_TWOS = 25

st.title("Players")
views.require_warehouse()
options: read.Choices = cache.query("choices")



def _rate(label: str) -> ColumnConfig:
    """A share from 0 to 1, drawn as a bar and written as a percentage."""
    return st.column_config.ProgressColumn(label, format="percent", min_value=0.0, max_value=1.0,
                                           width=max(views.header_width(label), 130))


def _number(label: str, **more: Any) -> ColumnConfig:
    """A number column as wide as its header (a cut header reads as another column's)."""
    return st.column_config.NumberColumn(label, width=views.header_width(label), **more)


#: the per-play columns of a player's figures, as the tables name them
FIGURE_COLUMNS = {
    "games": _number("games"),
    "games_won": _number("matches won"),
    "hands": _number("hands", help="Decided hands, points and elimination play."),
    "wins": _number("hands won"),
    "points_hands": _number("hands · points play"),
    "points_win_rate": _rate("win rate · points play"),
    "elimination_hands": _number("hands · elimination play"),
    "elimination_win_rate": _rate("win rate · elimination play"),
    "scored_hands": _number("scored hands", help="Hands of points play with a score."),
    "mean_points": _number("mean points · points play", format="%.1f",
                           help="Points taken per scored hand; fewer is better."),
    "violations": _number("violations", help="The player's own fouls."),
    "rank": _number("rank"),
    "ruleset": st.column_config.TextColumn("ruleset", width=views.header_width("pis-yedili")),
}


def _non_empty(frame: pl.DataFrame) -> list[str]:
    """The columns holding at least one value (no elimination columns without such play)."""
    return [c for c in frame.columns if frame[c].null_count() < frame.height]


def leaderboard_tab() -> None:
    """The leaderboard, per ruleset, ranked by the chosen measure."""
    cols = st.columns([3, 2, 1])
    rulesets = cols[0].multiselect("Ruleset", options.rulesets, key="players_board_rulesets",
                                   placeholder="All rulesets")
    measure = cols[1].selectbox("Rank by", list(read.MEASURES), key="players_measure",
                                format_func=lambda m: read.MEASURES[m].label)
    min_hands = cols[2].number_input("At least this many hands", 0, 10_000, 5, key="players_min_hands",
                                     help="In the measure's sample (the hands it is taken over).")
    spec = read.MEASURES[measure]
    table = cache.query("leaderboard", tuple(rulesets), int(min_hands), measure)
    if not table.height:
        st.info(f"No player in these rulesets has {max(int(min_hands), 1)} or more hands to rank by "
                f"{spec.label}.")
        return
    if measure == "wins":
        value = _number(spec.label)
    elif measure == "mean_points":
        value = _number(spec.label, format="%.1f")
    else:
        value = _rate(spec.label)
    sample = read.SAMPLE_LABELS[spec.sample]
    order = ["rank", "ruleset", "player", "measure", "sample", "games", "games_won",
             *(["hands", "wins"] if measure != "wins" else []), "violations"]
    st.dataframe(
        table, hide_index=True, width="stretch", height=480, column_order=order,
        column_config={**FIGURE_COLUMNS, "measure": value,
                       "sample": _number(f"sample: {sample}", help="The hands the measure is taken over.")},
    )
    st.caption(f"Ranked within each ruleset by **{spec.explained}**. *Sample* is the number of hands that "
               f"figure is over; players with fewer than {int(min_hands)} are left out. Hands, hands won and "
               "violations are the ruleset's totals; violations are the player's own fouls, as "
               "`haftkhabis stats players` counts them.")
    st.selectbox("Open a player's profile", list(dict.fromkeys(table["player"].to_list())), index=None,
                 key="players_board_open", placeholder="A player of this table", on_change=_open_profile,
                 help="Their profile, in the Profile tab.")


def _open_profile() -> None:
    """The leaderboard's pick: that player's profile tab."""
    ss = st.session_state
    picked = ss.get("players_board_open")
    if picked:
        ss["players_player"] = picked
        ss["players_tab"] = "Profile"


def _their_twos(player: str) -> None:
    """The profile's link to the 2-card matrix: that player among the players shown, as
    the player of the 2 of the drill-down."""
    ss = st.session_state
    ss["players_tab"] = "2-card targeting"
    ss["players_two_focus"] = player


def profile_tab() -> None:
    """One player's profile."""
    names: list[str] = cache.query("player_names")
    if "player" in st.query_params and st.query_params["player"] in names \
            and "players_player" not in st.session_state:
        st.session_state["players_player"] = st.query_params["player"]
    player = st.selectbox("Player", names, key="players_player", index=None, placeholder="Choose a player")
    if player is None:
        st.info("Choose a player to see their profile.")
        return
    st.query_params["player"] = player
    per_ruleset: pl.DataFrame = cache.query("player_by_ruleset", player)
    cols = st.columns(4)
    cols[0].metric("Games", f"{int(per_ruleset['games'].sum()):,}")
    cols[1].metric("Hands", f"{int(per_ruleset['hands'].sum()):,}")
    cols[2].metric("Hands won", f"{int(per_ruleset['wins'].sum()):,}")
    cols[3].metric("Violations", f"{int(per_ruleset['violations'].sum()):,}",
                   help="The player's own fouls, as the leaderboard and `haftkhabis stats players` count them.")
    st.dataframe(per_ruleset, hide_index=True, width="stretch", column_order=_non_empty(per_ruleset),
                 column_config=FIGURE_COLUMNS)
    st.caption("Win rates and mean points are per play (points or elimination), never over both.")
    st.button(f"The 2s {player} gave, in the 2-card matrix", key="players_their_twos", on_click=_their_twos,
              args=(player,), icon=":material/grid_on:")

    seats = cache.query("player_by_seat", player)
    if seats.height:
        st.markdown("**Win rate by seat, by table size** (colour: the rate over the fair rate, 1 ÷ players; "
                    "the sample and 95% interval in the tooltip)")
        _seat_heatmaps(seats)
    left, right = st.columns(2)
    points = cache.query("player_points", player)
    if points.height:
        left.vega_lite_chart(spec=charts.points_histogram(points, "hand score, points play (capped at 200)",
                                                          "Points per hand", 240), width="stretch")
    head_to_head = cache.query("player_head_to_head", player)
    right.markdown("**Head to head** (hands finished ahead of / behind each opponent)")
    right.dataframe(head_to_head, hide_index=True, width="stretch", height=240,
                    column_config={"ahead_rate": _rate("ahead")})
    mine = cache.query("special_cards", player)
    if mine.height:
        everyone = cache.query("special_cards", None).filter(pl.col("ruleset").is_in(mine["ruleset"].to_list()))
        st.vega_lite_chart(spec=charts.special_cards(mine, everyone), width="content")
    fouls = cache.query("player_violations", player)
    st.markdown(f"**Violations committed** ({int(fouls['violations'].sum()) if fouls.height else 0:,}, "
                "their own fouls by code)")
    st.dataframe(fouls, hide_index=True, width="stretch")


def _seat_heatmaps(seats: pl.DataFrame) -> None:
    """One seat × table-size heatmap per ruleset and play, two side by side."""
    plays = seats["play"].unique(maintain_order=True).to_list()
    for start in range(0, len(plays), 2):
        for column, play in zip(st.columns(2), plays[start:start + 2], strict=False):
            column.vega_lite_chart(spec=charts.seat_heatmap(seats.filter(pl.col("play") == play), play),
                                   width="stretch")


def first_seat_tab() -> None:
    """Does the first to play win more often than chance? Per ruleset, play and table size."""
    rulesets = st.multiselect("Ruleset", options.rulesets, key="players_seat_rulesets", placeholder="All rulesets")
    seats: pl.DataFrame = cache.query("first_seat", tuple(rulesets))
    if not seats.height:
        st.info("No decided hand in these rulesets.")
        return
    first = seats.filter(pl.col("turn_order") == 0)
    st.markdown("**The first to play**, per ruleset, play and table size")
    interval = {"ci_low": st.column_config.NumberColumn("95% from", format="percent"),
                "ci_high": st.column_config.NumberColumn("95% to", format="percent"),
                "win_rate": st.column_config.NumberColumn("win rate", format="percent"),
                "fair_rate": st.column_config.NumberColumn("fair rate", format="percent",
                                                           help="1 ÷ players: every seat alike."),
                "against_fair": st.column_config.TextColumn("against the fair rate"),
                "mean_points": st.column_config.NumberColumn("mean points", format="%.1f",
                                                             help="Points play only: elimination scores none."),
                "turn_order": st.column_config.NumberColumn("seat"),
                "players": st.column_config.NumberColumn("players")}
    order = ["play", "players", "hands", "wins", "win_rate", "ci_low", "ci_high", "fair_rate", "against_fair",
             "mean_points"]
    st.dataframe(first, hide_index=True, width="stretch", column_order=order, column_config=interval)
    st.caption("*hands* is the sample: the decided hands played from that seat. The interval is the 95% "
               "Wilson score interval of the win rate; *above* or *below* only when it leaves out the fair "
               "rate (1 ÷ players), else the difference is within chance. Points play and elimination play "
               "are counted apart.")
    st.vega_lite_chart(spec=charts.first_seat(first, "The first seat's win rate by table size (line: 95% "
                                                     "interval; red tick: the fair rate)"), width="stretch")
    st.markdown("**Every seat, by table size** (colour: the win rate over the fair rate; the sample and 95% "
                "interval in the tooltip)")
    _seat_heatmaps(seats)
    with st.expander("Every seat (table)"):
        st.dataframe(seats, hide_index=True, width="stretch", column_order=["play", "players", "turn_order", *order[2:]],
                     column_config=interval)


def targeting_tab() -> None:
    """The 2-card targeting matrix as a heatmap, and the games behind a cell."""
    cols = st.columns([3, 2, 2])
    rulesets = cols[0].multiselect("Ruleset", options.rulesets, key="players_two_rulesets",
                                   placeholder="All rulesets")
    metric = cols[1].radio("Colour by", ["twos", "lift"], key="players_two_metric", horizontal=True,
                           format_func=lambda m: "2s given" if m == "twos" else "lift over a fair choice")
    lift = metric == "lift"
    min_expected = 0.0
    if lift:
        min_expected = float(cols[2].number_input(
            "Lift only from this many expected 2s", 0.0, 10_000.0, 20.0, step=5.0, key="players_two_min_expected",
            help="Below it a lift rests on too few 2s to mean anything: the cell shows its count, uncoloured."))
    with st.spinner("Counting every 2 played (once per warehouse batch)…"):
        everyone: pl.DataFrame = cache.query("two_players", tuple(rulesets))
    if not everyone.height:
        st.info("No 2 with a target in these games.")
        return
    # the matrix shows a subset when there are many players: it says so, and which
    top = everyone.head(TOP_TWOS)["player"].to_list()
    givers_all = int((everyone["given"] > 0).sum())
    targets_all = int((everyone["received"] > 0).sum())
    names = everyone["player"].to_list()
    if st.session_state.get("players_two_shown_for") != tuple(rulesets):
        st.session_state["players_two_shown_for"] = tuple(rulesets)
        st.session_state["players_two_shown"] = top
    focus = st.session_state.pop("players_two_focus", None)  # from a profile: that player shown and picked
    if focus in names:
        if focus not in st.session_state["players_two_shown"]:
            st.session_state["players_two_shown"] = [*st.session_state["players_two_shown"], focus]
        st.session_state["players_two_focus_giver"] = focus
    shown_players = st.multiselect(
        "Players shown", names, key="players_two_shown", placeholder=f"The {TOP_TWOS} who gave the most 2s",
        help="Rows and columns: these players only. Empty: the ones who gave the most 2s.")
    chosen = tuple(shown_players) if shown_players and shown_players != top else ()
    with st.spinner("Counting every 2 played (once per warehouse batch)…"):
        matrix: pl.DataFrame = cache.query("two_targets", tuple(rulesets), TOP_TWOS, lift, min_expected, chosen)
    if not matrix.height:
        st.info("No 2 passed between the players shown.")
        return
    givers = sorted(matrix["player"].unique().to_list())
    targets = sorted(matrix["target"].unique().to_list())
    whom = "the players chosen" if chosen else f"the {min(TOP_TWOS, len(names))} who gave the most 2s"
    if len(givers) < givers_all or len(targets) < targets_all:
        st.warning(f"Showing {len(givers)} of the {givers_all} players who gave a 2 and {len(targets)} of the "
                   f"{targets_all} who drew one ({whom}); choose others in *Players shown*.",
                   icon=":material/filter_alt:")
    else:
        st.caption(f"Every player who gave or drew a 2 in these games is shown ({len(givers)} × {len(targets)}).")
    event = st.vega_lite_chart(spec=charts.two_matrix(matrix, lift), width="stretch", key="players_two_chart",
                               on_select="rerun", selection_mode="cell")
    if lift:
        hidden = int(matrix["lift"].is_null().sum())
        st.caption(f"Lift: 2s given to that target over the number expected if targets were chosen at random "
                   f"among the others at the table; far above 1 with many 2s is worth a look. Shown only where at "
                   f"least {min_expected:g} 2s were expected: {hidden} of {matrix.height} cells are below that "
                   "(grey, their count written).")
    else:
        st.caption("The number of 2s each player gave to each target. Colour by lift to weigh them against a "
                   "fair choice.")

    # drill-down: a clicked cell (or the two boxes) names a pair; list the games behind it
    picked = (event.selection.get("cell") or []) if event is not None else []
    if picked and st.session_state.get("players_two_clicked") != picked[0]:
        st.session_state["players_two_clicked"] = picked[0]
        st.session_state["players_two_giver"] = picked[0].get("player")
        st.session_state["players_two_target"] = picked[0].get("target")
    pending = st.session_state.pop("players_two_focus_giver", None)
    if pending in givers:
        st.session_state["players_two_giver"] = pending
        st.session_state.pop("players_two_target", None)
    left, right = st.columns(2)
    giver = left.selectbox("Player of the 2", givers, key="players_two_giver", index=None,
                           placeholder="Choose a player (or click a cell)")
    target = right.selectbox("Target", targets, key="players_two_target", index=None, placeholder="Choose a target")
    if giver is None or target is None:
        return
    games: pl.DataFrame = cache.query("two_games", tuple(rulesets), giver, target)
    if not games.height:
        st.info(f"{giver} gave no 2 to {target} in these games.")
        return
    games = games.with_columns(
        ("replay?game=" + pl.col("game_id") + "&seq=" + pl.col("first_seq").cast(pl.String)).alias("replay"))
    st.markdown(f"**{int(games['twos'].sum()):,}** 2s from **{giver}** to **{target}**, in "
                f"{games.height:,} game{'s' if games.height != 1 else ''}:")
    st.dataframe(
        games, hide_index=True, width="stretch", key="players_two_games",
        column_order=["game_id", "ruleset", "start_time", "twos", "hands", "first_hand", "first_seq", "replay"],
        column_config={"game_id": st.column_config.TextColumn("game"),
                       "start_time": st.column_config.DatetimeColumn("started", format="YYYY-MM-DD HH:mm"),
                       "twos": st.column_config.NumberColumn("2s to the target"),
                       "hands": st.column_config.NumberColumn("hands with one"),
                       "first_hand": st.column_config.NumberColumn("first in hand"),
                       "first_seq": st.column_config.NumberColumn("at seq"),
                       "replay": st.column_config.LinkColumn("replay", display_text="open the first ▶")},
    )


# stateful tabs: only the open one runs, and the URL remembers it (?players_tab=Profile)
board, profile, first_seat, targeting = st.tabs(
    ["Leaderboard", "Profile", "First seat", "2-card targeting"], key="players_tab", bind="query-params",
    default="Profile" if "player" in st.query_params else None,
)
for tab, render in ((board, leaderboard_tab), (profile, profile_tab), (first_seat, first_seat_tab),
                    (targeting, targeting_tab)):
    if tab.open:
        with tab:
            render()
