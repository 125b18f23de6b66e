"""The dashboard's entry script: page set-up and navigation. Each page renders itself.

Run it with `haftkhabis dashboard [--warehouse DIR]` (or
`python -m dashboards.server run dashboards/app.py -- --warehouse DIR`; a bare
`streamlit run` lacks the websocket origin check, see dashboards/server.py).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboards import cache, marker, views
from dashboards.settings import warehouse_dir

HERE = Path(__file__).parent
# Not `pages/`: Streamlit runs a folder of that name beside the entry script as pages of
# their own, without this script (no layout, no navigation), for a session whose first URL
# names one of them before any session has run this script.
PAGES = HERE / "app_pages"

st.set_page_config(page_title="Haft Khabis logs", page_icon=":material/playing_cards:", layout="wide")

pages = {
    "Warehouse": [
        st.Page(PAGES / "overview.py", title="Overview", icon=":material/monitoring:", url_path="overview", default=True),
        st.Page(PAGES / "live.py", title="Live", icon=":material/sensors:", url_path="live"),
        st.Page(PAGES / "games.py", title="Games", icon=":material/table_rows:", url_path="games"),
        st.Page(PAGES / "scoring.py", title="Scoring", icon=":material/calculate:", url_path="scoring"),
        st.Page(PAGES / "players.py", title="Players", icon=":material/groups:", url_path="players"),
        st.Page(PAGES / "ratings.py", title="Ratings", icon=":material/leaderboard:", url_path="ratings"),
        st.Page(PAGES / "compliance.py", title="Compliance", icon=":material/gavel:", url_path="compliance"),
        st.Page(PAGES / "deal_audit.py", title="Deal audit", icon=":material/casino:", url_path="deal-audit"),
        st.Page(PAGES / "collusion.py", title="Collusion", icon=":material/handshake:", url_path="collusion"),
    ],
    "Hands": [
        st.Page(PAGES / "replay.py", title="Replay", icon=":material/play_circle:", url_path="replay"),
        st.Page(PAGES / "check_log.py", title="Check a log", icon=":material/upload_file:", url_path="check"),
        st.Page(PAGES / "cases.py", title="Cases", icon=":material/folder_open:", url_path="cases"),
    ],
}
page = st.navigation(pages)
st.sidebar.caption(f"Warehouse: `{warehouse_dir()}` (read-only)")
st.sidebar.button("Reload warehouse", on_click=cache.reload, icon=":material/refresh:",
                  help="Read the latest committed batch (after a new `haftkhabis ingest`).")
run = views.whole_run_started()


def _run_marker() -> None:
    """The run's last element, after everything the page drew: a browser that sees this
    number, and no element left stale, sees this run whole."""
    st.sidebar.html(marker.html(run))


try:
    page.run()
except views.PageDone:  # the page ended early, as it meant to (`views.done`)
    pass
except Exception:  # an error the page shows: this run is drawn as far as it got
    _run_marker()
    raise
finally:
    views.whole_run_ended()
# Not after a rerun or `st.stop()` (Streamlit's control flow, BaseExceptions): a switch to
# another page or a callback's rerun is not a run drawn whole, and the next run draws its own.
_run_marker()
