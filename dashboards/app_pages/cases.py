"""Cases: the support desk's cases — found by game, tag, status and words; one case with
its notes, its decision and who took it; a note added, a decision taken; the evidence
bundle and the player's report, each one click away. `?case=ID` opens one."""

from __future__ import annotations

from html import escape

import polars as pl
import streamlit as st

from dashboards import cache, views
from engine.replay import clean_game_id
from ingest import cases, read
from ingest.store import WarehouseError

AGENT = "desk_agent"  # who the desk agent is, kept for the session (the Replay page's too)
CHOSEN = "cases_chosen"

views.inject_css()
st.title("Cases")
views.require_warehouse()
if "case" in st.query_params and st.session_state.get("cases_url_seen") != st.query_params["case"]:
    st.session_state["cases_url_seen"] = st.session_state[CHOSEN] = st.query_params["case"]

cols = st.columns([2, 2, 1.5, 3])
game = clean_game_id(cols[0].text_input("Game id", key="cases_game", placeholder="the exact id"))
tag = cols[1].selectbox("Tag", ["", *cache.query("case_tags")], key="cases_tag",
                        format_func=lambda t: t or "Any tag")
status = cols[2].selectbox("Status", ["", "open", "decided"], key="cases_status",
                           format_func=lambda s: s or "Open or decided")
text = cols[3].text_input("Words", key="cases_text", placeholder="in the notes, decision, tags, game, player")
found: pl.DataFrame = cache.query("cases", read.CaseSearch(game, tag, "", status, text.strip()), 500)
st.caption(f"**{found.height}** case{'s' if found.height != 1 else ''}, the most recently changed first. "
           "Open one from a step of the Replay page (*Open a case about this step*).")
if found.height:
    table = found.with_columns(
        pl.col("tags").list.join(", ").alias("tags"),
        pl.col("notes").list.len().alias("notes"),
    )
    event = st.dataframe(
        table, hide_index=True, width="stretch", key="cases_table", on_select="rerun",
        selection_mode="single-row",
        column_order=["case_id", "status", "game_id", "hand", "seq", "player", "tags", "notes", "decision",
                      "decided_by", "updated_at"],
        column_config={"case_id": st.column_config.TextColumn("case"),
                       "game_id": st.column_config.TextColumn("game"),
                       "player": st.column_config.TextColumn("whose complaint"),
                       "updated_at": st.column_config.DatetimeColumn("changed", format="YYYY-MM-DD HH:mm")},
    )
    picked = event.selection.rows if event is not None else []
    if picked and st.session_state.get("cases_picked") != table["case_id"][picked[0]]:
        st.session_state["cases_picked"] = st.session_state[CHOSEN] = table["case_id"][picked[0]]

chosen = st.session_state.get(CHOSEN)
if not chosen:
    views.done()
history: pl.DataFrame = cache.query("case_revisions", chosen)
if not history.height:
    st.warning(f"No case {chosen!r} in the warehouse.")
    views.done()
st.query_params["case"] = chosen
case = history.row(history.height - 1, named=True)
st.divider()
st.subheader(f"Case {case['case_id']}")
decided = case["decision"] is not None
views.html(
    f'<div class="hk"><span class="hk-badge {"hk-ok" if decided else "hk-warn"}">'
    f'{"decided" if decided else "open"}</span> &nbsp; game <b>{escape(case["game_id"])}</b> · hand {case["hand"]} · '
    f'seq {case["seq"]} · whose complaint: <b>{escape(case["player"] or "—")}</b> · tags '
    f'{escape(", ".join(case["tags"] or []) or "none")} · opened by {escape(case["opened_by"])} '
    f'{case["opened_at"]:%Y-%m-%d %H:%M}</div>')
params = {"game": case["game_id"], **({"seq": str(case["seq"])} if case["seq"] is not None else {}),
          **({"view": "player", "player": case["player"]} if case["player"] else {})}
st.page_link("app_pages/replay.py", label="The step in the Replay page", icon=":material/play_circle:",
             query_params=params)
if decided:
    st.success(f"**Decision** ({case['decided_by']}, {case['decided_at']:%Y-%m-%d %H:%M}): "
               f"{views.markdown_text(case['decision'])}")
for note in case["notes"] or []:
    with st.chat_message("user", avatar=":material/edit_note:"):
        st.markdown(f"**{views.markdown_text(note['by'] or '')}** · {note['at']:%Y-%m-%d %H:%M}")
        st.text(note["text"] or "")

send = st.columns(2)
if case["player"] and case["hand"] is not None:
    send[0].download_button(
        f"Download the evidence bundle (zip, {case['player']}'s view)",
        data=lambda: cache.case_bundle(case), file_name=f"{case['case_id']}-{case['game_id']}.zip",
        mime="application/zip", key="cases_bundle", on_click="ignore", type="primary", width="stretch",
        help="The report in the player's view, the game's lines it rests on, a manifest of their SHA-256 "
             "and the engine version, and a README: checked by `haftkhabis verify-bundle FILE`. No note.")
    send[1].download_button(
        f"Download {case['player']}'s report (HTML)",
        data=lambda: cache.hand_report(case["game_id"], case["hand"], case["seq"], case["player"]),
        file_name=f"{case['game_id']}-hand-{case['hand']}-seq-{case['seq']}-{case['player']}.html",
        mime="text/html", key="cases_report", on_click="ignore", width="stretch")


def _change(case_id: str) -> None:
    """The form's callback: the case's next revision."""
    ss = st.session_state
    agent = (ss.get(AGENT) or "").strip()
    tags = ss.get("cases_new_tags")
    change = cases.Change(note=ss.get("cases_new_note") or None,
                          tags=[t for t in tags.replace(",", " ").split() if t] if tags else None,
                          decision=ss.get("cases_new_decision") or None)
    if not agent:
        ss["cases_problem"] = "Say who you are (Your name): a case records who changed it."
        return
    try:
        cache.update_case(case_id, change, agent)
    except (cases.CaseError, OSError, WarehouseError) as exc:
        ss["cases_problem"] = str(exc)
        return
    ss.pop("cases_problem", None)
    ss["cases_new_note"] = ss["cases_new_decision"] = ""


with st.expander("Add a note, set the tags, take the decision", expanded=not decided):
    if st.session_state.get("cases_form_of") != (case["case_id"], case["revision"]):
        st.session_state["cases_form_of"] = (case["case_id"], case["revision"])
        st.session_state["cases_new_tags"] = " ".join(case["tags"] or [])
    cols = st.columns([2, 2])
    cols[0].text_input("Your name", key=AGENT, help="Recorded as who changed the case.")
    cols[1].text_input("Tags", key="cases_new_tags", help="Words separated by spaces or commas.")
    st.text_area("Note", key="cases_new_note")
    st.text_input("Decision", key="cases_new_decision", placeholder="upheld: the foul stands · refunded · dismissed",
                  help="Taking one records it with your name; a later decision replaces it (the history keeps both).")
    problem = st.session_state.pop("cases_problem", None)
    if problem:
        st.error(problem)
    st.button("Save", key="cases_save", type="primary", on_click=_change, args=(case["case_id"],))

with st.expander(f"History ({history.height} revision{'s' if history.height != 1 else ''})"):
    st.dataframe(history.select("revision", "updated_by", "updated_at", "decision",
                                pl.col("tags").list.join(", ").alias("tags"),
                                pl.col("notes").list.len().alias("notes")),
                 hide_index=True, width="stretch")
