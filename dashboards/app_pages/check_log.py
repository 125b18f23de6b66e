"""Check a log: upload a JSON-lines file, see every game's verdict, replay any game. Nothing
is stored: the upload lives in this session only."""

from __future__ import annotations

import streamlit as st

from dashboards import cache, views
from dashboards.settings import MAX_UPLOAD_MB

views.inject_css()
st.title("Check a log")
st.caption(
    f"Upload a haftkhabis/1 log (JSON Lines, optionally gzip-compressed, up to {MAX_UPLOAD_MB} MB). "
    "It is validated and replayed here and never added to the warehouse."
)

upload = st.file_uploader(
    "Log file", type=["jsonl", "ndjson", "log", "json", "txt", "gz"], key="check_upload",
)
if upload is None:
    st.info("Choose a file to validate. Each game gets its verdict; pick one to step through it.")
    views.done()

data = upload.getvalue()
result = cache.check_upload(upload.file_id, upload.name, data)
if result.problem:
    st.error(result.problem)
    views.done()

n_bad = sum(1 for g in result.games if g["status"] != "compliant")
n_violations = sum(g["violations"] for g in result.games)
in_games = sum(g["lines"] for g in result.games)
cols = st.columns(5)
cols[0].metric("Lines", f"{result.lines:,}")
cols[1].metric("Games", len(result.games))
cols[2].metric("Not compliant", n_bad)
cols[3].metric("Violations", f"{n_violations:,}")
cols[4].metric("Line errors", f"{result.error_count:,}")
st.caption(f"The file's {result.lines:,} lines: {in_games:,} in the games below, "
           f"{result.lines - in_games:,} in no game. The violations are the games' (the table's column "
           "adds up to them); a line error is a line no game could use.")

if result.games:
    st.dataframe(
        result.games, hide_index=True, width="stretch",
        column_config={"violations": st.column_config.NumberColumn("violations", format="%d")},
    )
if result.errors:
    listed = "" if len(result.errors) == result.error_count else f" (the first {len(result.errors):,} listed)"
    with st.expander(f"{result.error_count:,} line(s) that belong to no game{listed}",
                     expanded=not result.games):
        st.dataframe(result.errors, hide_index=True, width="stretch")
if not result.games:
    st.warning("No game could be read from this file.")
    views.done()

ids = [g["game"] for g in result.games]
if st.session_state.get("check_game") not in ids:
    st.session_state["check_game"] = ids[0]
game = st.selectbox("Replay game", ids, key="check_game")
row = next(g for g in result.games if g["game"] == game)
st.divider()
replayed = cache.replay_upload(upload.file_id, upload.name, data, game)
if replayed.problem:
    st.error(replayed.problem)
    views.done()
replay = replayed.replay
if replay is None:
    st.error(f"Game {game} has no line to replay.")
    views.done()
views.verdict_summary(replay, lines=row["lines"])

keys = views.ReplayKeys("check")
found = views.violation_rows(replay)
if found:
    st.markdown(f"**{len(found)} violation{'s' if len(found) != 1 else ''} in {game}** — select one to go "
                "to its step")
    event = st.dataframe(
        found, hide_index=True, width="stretch", key="check_violations", on_select="rerun",
        selection_mode="single-row",
        column_order=["seq", "line", "hand", "step", "code", "player", "message"],
        column_config={"seq": st.column_config.NumberColumn("seq", format="%d"),
                       "line": st.column_config.NumberColumn("line", format="%d", help="Line of the file."),
                       "message": st.column_config.TextColumn("message", width="large")},
    )
    picked = event.selection.rows if event is not None else []
    choice = (game, picked[0]) if picked else None
    # a row once chosen moves the replay once: stepping on from there stays possible
    if choice is not None and st.session_state.get("check_violation_seen") != choice:
        st.session_state["check_violation_seen"] = choice
        chosen = found[picked[0]]
        if chosen["hand"] is not None and chosen["step"] is not None:
            st.session_state[keys.hand], st.session_state[keys.step] = chosen["hand"], chosen["step"]
views.replay_view(replay, keys, report=views.report_for(replay))
