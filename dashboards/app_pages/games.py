"""Games: search and filter the warehouse's games; picking one opens its replay. The
filters are kept in the URL (`?player=sa&status=violations&ruleset=persian&from=…`), so a
search can be shared."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, views
from ingest import read

PAGE_SIZE = 200
URL_SEEN = "games_url_seen"  # the query string this session last read or wrote

st.title("Games")
views.require_warehouse()
options: read.Choices = cache.query("choices")
FILTERS = (
    views.UrlFilter("player", "games_player"),
    views.UrlFilter("game", "games_text"),
    views.UrlFilter("status", "games_statuses", many=True, choices=options.statuses),
    views.UrlFilter("code", "games_code", choices=["", *options.codes]),
    views.UrlFilter("ruleset", "games_rulesets", many=True, choices=options.rulesets),
    views.UrlFilter("build", "games_builds", many=True, choices=options.builds),
)
views.filters_from_url(URL_SEEN, FILTERS, dates="games_dates")

flt = views.game_filter("games", builds=True)
cols = st.columns([2, 2, 2, 2])
statuses = cols[0].multiselect("Status", options.statuses, key="games_statuses", placeholder="Any status")
code = cols[1].selectbox("Violation code", ["", *options.codes], key="games_code",
                         format_func=lambda c: c or "Any (or none)")
player = cols[2].text_input("Player", key="games_player", placeholder="part of an id, any case: sa",
                            help="Games with a player whose id contains this (sara, Sasan, …).").strip()
text = cols[3].text_input("Game id contains", key="games_text", help="Any case.").strip()
views.filters_to_url(URL_SEEN, FILTERS, flt)

search = read.GameSearch(flt, tuple(statuses), player, code or "", text)
total, _ = cache.query("find_games", search, 1, 0)
pages = max(1, -(-total // PAGE_SIZE))
if st.session_state.get("games_page", 1) > pages:
    st.session_state["games_page"] = 1
head = st.columns([4, 1], vertical_alignment="bottom")
head[0].markdown(f"**{total:,}** game{'s' if total != 1 else ''} match. Select a row to open its replay; "
                 "the address bar keeps this search, to share it.")
page = head[1].number_input("Page", 1, pages, key="games_page") if pages > 1 else 1
_, rows = cache.query("find_games", search, PAGE_SIZE, (page - 1) * PAGE_SIZE)

table = rows.with_columns(
    ("replay?game=" + rows["game_id"]).alias("replay") if rows.height else rows["game_id"].alias("replay"),
)
event = st.dataframe(
    table, hide_index=True, width="stretch", key="games_table",
    on_select="rerun", selection_mode="single-row",
    column_order=["game_id", "ruleset", "start_time", "status", "hands", "violations", "players",
                  "winners", "server_build", "lines", "replay"],
    column_config={
        "game_id": st.column_config.TextColumn("game"),
        "start_time": st.column_config.DatetimeColumn("started", format="YYYY-MM-DD HH:mm"),
        "replay": st.column_config.LinkColumn("replay", display_text="open ▶"),
    },
)
picked = event.selection.rows if event is not None else []
if picked:
    game = table["game_id"][picked[0]]
    st.switch_page("app_pages/replay.py", query_params={"game": game})
