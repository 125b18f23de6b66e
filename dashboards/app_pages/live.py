"""Live: what is landing in the warehouse now — games a second and how long games take to be
committed, the violation rate by server build over the last hour, the latest games, and the
alerts the API service has firing — redrawn every few seconds (`st.fragment(run_every=…)`).

Everything comes from the warehouse (`ingest.read`'s `live_*` questions, bounded by commit
time to the last hour) and, for the alerts, from the file the API service writes in its state
folder (`dashboards.views.alert_states`); the page never calls the API.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import streamlit as st

from dashboards import cache, charts, marker, views
from dashboards.settings import LIVE_REFRESH_SECONDS, LIVE_SPAN_MINUTES, api_state_dir
from ingest import read

#: session state: the live panel's redraws in this session (its marker's number)
RUNS = "live_runs"
#: the violation-rate chart's period (minutes)
PERIOD_MINUTES = 5

st.title("Live")
views.require_warehouse()
st.caption(f"Commits of the last {LIVE_SPAN_MINUTES} minutes, as the warehouse holds them, redrawn "
           f"every {LIVE_REFRESH_SECONDS:g} s. Games arrive through `haftkhabis serve` (pushes) or "
           "`haftkhabis ingest`.")


def _seconds(later: datetime | None, earlier: datetime | None) -> float | None:
    return (later - earlier).total_seconds() if later is not None and earlier is not None else None


def _alerts() -> None:
    """The API service's alerts firing, first on the page: what needs someone now."""
    found = views.alert_states(api_state_dir())
    if isinstance(found, str):
        st.caption(found)
        return
    written = f"as of {found.written_at:%H:%M:%S} UTC" if found.written_at else "time unknown"
    firing = found.firing
    if not firing:
        st.success(f"No alert is firing ({len(found.alerts)} watched, {written}; `{found.path}`).")
        return
    st.error(f"{len(firing)} alert{'s' if len(firing) != 1 else ''} firing ({written}).")
    table = pl.DataFrame([{k: a.get(k) for k in ("rule", "build", "value", "threshold", "unit", "message")}
                          | {"since": views.when(a.get("since"))} for a in firing], infer_schema_length=None)
    st.dataframe(
        table.select("rule", "build", "value", "threshold", "unit", "since", "message"),
        hide_index=True, width="stretch", key="live_alerts",
        column_config={"value": st.column_config.NumberColumn("value", format="%.3g"),
                       "since": st.column_config.DatetimeColumn("since (UTC)", format="YYYY-MM-DD HH:mm:ss"),
                       "message": st.column_config.TextColumn("what", width="large")})


@st.fragment(run_every=LIVE_REFRESH_SECONDS)
def live_panel() -> None:
    runs = st.session_state[RUNS] = st.session_state.get(RUNS, 0) + 1
    now = datetime.now(UTC)
    # to the minute: the cached answers serve every redraw of a minute until a batch lands
    since = (now - timedelta(minutes=LIVE_SPAN_MINUTES)).replace(second=0, microsecond=0)
    window: read.LiveWindow = cache.query("live_window", since)
    throughput: pl.DataFrame = cache.query("live_throughput", since)
    # the current minute and the one before: their games over the seconds they span so far
    previous_minute = (now - timedelta(minutes=1)).replace(second=0, microsecond=0)
    recent_games = int(throughput.filter(pl.col("minute") >= previous_minute)["games"].sum()) \
        if throughput.height else 0
    per_second = recent_games / (now - previous_minute).total_seconds()
    lag = cache.query("live_commit_lag", window.first_batch) if window.first_batch is not None else None

    cols = st.columns(5)
    cols[0].metric("Games / s", f"{per_second:.1f}",
                   help="Games committed in the current and the previous minute, a second.")
    cols[1].metric(f"Games, last {LIVE_SPAN_MINUTES} min", f"{window.games:,}",
                   help="Games added or changed by the batches committed in the span.")
    cols[2].metric("Last commit", f"{views.ago(_seconds(now, window.last_commit))} ago"
                   if window.last_commit is not None else "never",
                   help=f"Batch {window.last_batch}." if window.last_batch is not None else None)
    commit = throughput["commit_seconds"].mean() if throughput.height else None
    cols[3].metric("Commit time", views.ago(commit if isinstance(commit, float) else None),
                   help="A batch's mean time from its start to its commit, over the span.")
    cols[4].metric("Commit lag (p50)", views.ago(lag["p50"]) if lag and lag["games"] else "—",
                   help="How long after a game's end its batch committed (median; "
                        f"95th percentile {views.ago(lag['p95']) if lag and lag['games'] else '—'}). "
                        "Logs replayed late carry their old end times.")

    _alerts()
    if window.first_batch is None:
        st.info(f"No batch committed in the last {LIVE_SPAN_MINUTES} minutes.")
    else:
        rates: pl.DataFrame = cache.query("live_violation_rate", window.first_batch, since, PERIOD_MINUTES)
        left, right = st.columns([3, 2])
        left.vega_lite_chart(spec=charts.live_violation_rate(rates, since, now, PERIOD_MINUTES), width="stretch")
        by_build = rates.group_by("server_build").agg(
            pl.col("games").sum(), pl.col("with_violations").sum(),
        ).with_columns((pl.col("with_violations") / pl.col("games")).alias("violation_rate")) \
         .sort("violation_rate", "games", descending=True)
        right.dataframe(by_build, hide_index=True, width="stretch", key="live_builds",
                        column_config={"server_build": "server build", "with_violations": "with a violation",
                                       "violation_rate": st.column_config.ProgressColumn(
                                           "rate", format="percent", min_value=0.0, max_value=1.0)})
        st.vega_lite_chart(spec=charts.live_throughput(throughput, since, now), width="stretch")
        st.subheader("Latest games")
        latest: pl.DataFrame = cache.query("live_latest_games", window.first_batch, 20)
        table = latest.with_columns(("replay?game=" + pl.col("game_id")).alias("replay"),
                                    pl.col("codes").fill_null(""))
        st.dataframe(
            table, hide_index=True, width="stretch", key="live_latest",
            column_order=["committed", "batch", "game_id", "ruleset", "server_build", "status",
                          "violations", "codes", "players", "replay"],
            column_config={
                "committed": st.column_config.DatetimeColumn("committed", format="HH:mm:ss"),
                "game_id": st.column_config.TextColumn("game"),
                "server_build": "server build",
                "replay": st.column_config.LinkColumn("replay", display_text="open ▶"),
            },
        )
    # the panel's last element: a browser that sees this number sees that redraw whole
    st.html(marker.live_html(runs))


live_panel()
