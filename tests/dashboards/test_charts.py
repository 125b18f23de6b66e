"""The charts' Vega-Lite specs (`dashboards.charts`, issue #33): what Streamlit itself would
send for the same Altair chart, the chart's data whole in it, made once per content of a
chart's arguments and not again on a rerun, and the only path the pages take to a chart."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import pyarrow as pa
import pytest
from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec
from streamlit.testing.v1 import AppTest

from dashboards import cache, charts
from ingest import read
from tests.dashboards.conftest import open_page

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboards" / "app.py"

FIRST = pl.DataFrame({"play": ["bazito · points", "persian · points"], "players": [3, 4], "hands": [10, 12],
                      "wins": [4, 3], "win_rate": [0.4, 0.25], "ci_low": [0.17, 0.09], "ci_high": [0.69, 0.53],
                      "fair_rate": [1 / 3, 0.25], "against_fair": ["within chance", "within chance"]})


def _rows(raw: bytes) -> list[dict[str, Any]]:
    return pa.ipc.open_stream(raw).read_all().to_pylist()


def _named(spec: dict[str, Any]) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """A spec's JSON with its dataset names in order of appearance, and its datasets' rows
    under those names: two specs of the same chart compare equal whatever hash names their
    data."""
    datasets = spec["datasets"]
    rest = {k: v for k, v in spec.items() if k != "datasets"}
    text = json.dumps(rest, sort_keys=True)
    order = list(dict.fromkeys(re.findall("|".join(map(re.escape, datasets)), text))) if datasets else []
    for i, name in enumerate(order):
        text = text.replace(name, f"data-{i}")
    return text, {f"data-{i}": _rows(datasets[name]) for i, name in enumerate(order)}


def test_a_spec_is_what_streamlit_makes_of_the_chart() -> None:
    layered = charts.first_seat.__wrapped__(FIRST, "first seat")  # type: ignore[attr-defined]
    heat = charts.seat_heatmap.__wrapped__(FIRST.with_columns(turn_order=pl.lit(0)), "heat")  # type: ignore[attr-defined]
    for chart in (layered, heat):
        ours = charts.to_vega_lite(chart)
        assert _named(ours) == _named(_convert_altair_to_vega_lite_spec(chart))
    # the data is the frame's, whole
    (rows,) = _named(charts.to_vega_lite(layered))[1].values()
    assert rows == FIRST.to_dicts()


def test_a_chart_is_made_once_per_content_of_its_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[Any, ...]] = []

    @charts.cached
    def bars(frame: pl.DataFrame, title: str) -> alt.TopLevelMixin:
        made.append((frame.height, title))
        return alt.Chart(frame.to_pandas()).mark_bar().encode(x="players:O", y="hands:Q").properties(title=title)

    first = bars(FIRST, "a")
    again = bars(FIRST.clone().rechunk(), "a")  # another frame, the same rows
    assert made == [(2, "a")] and again == first
    again["title"] = "changed"  # a page's copy: the kept spec is not changed with it
    assert bars(FIRST, "a")["title"] == "a"
    bars(FIRST.with_columns(hands=pl.col("hands") + 1), "a")  # other rows
    bars(FIRST, "b")  # another argument
    assert made == [(2, "a"), (2, "a"), (2, "b")]


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, sample_warehouse: Path) -> Iterator[AppTest]:
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(sample_warehouse))
    yield AppTest.from_file(str(APP), default_timeout=60)


def test_a_page_sends_its_answers_data_and_a_rerun_makes_no_chart(
        app: AppTest, sample_warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    converted: list[alt.TopLevelMixin] = []
    convert = charts.to_vega_lite

    def counted(chart: alt.TopLevelMixin) -> dict[str, Any]:
        converted.append(chart)
        return convert(chart)

    monkeypatch.setattr(charts, "to_vega_lite", counted)
    open_page(app, "players", players_tab="First seat")
    cache._chart_spec.clear()
    converted.clear()
    app.run()  # the page with no chart made yet
    sent = app.get("vega_lite_chart")
    assert len(sent) == 5 and len(converted) == 5  # the first seat's chart and four heatmaps
    first_seat = next(c for c in sent if "first seat's win rate" in c.proto.spec)
    (dataset,) = first_seat.proto.datasets
    reader = read.connect(str(sample_warehouse))
    try:
        expected = read.first_seat(reader, ()).filter(pl.col("turn_order") == 0)
    finally:
        reader.close()
    assert pl.DataFrame(_rows(dataset.data.data)).equals(expected)
    app.run()  # a rerun: the same answers, the same specs, nothing converted
    assert len(converted) == 5
    assert [c.proto.spec for c in app.get("vega_lite_chart")] == [c.proto.spec for c in sent]


def test_the_pages_draw_charts_only_through_their_specs() -> None:
    """`st.altair_chart` would convert with Altair's global transformer outside the lock
    `charts.to_vega_lite` takes, and at every rerun."""
    for path in sorted((ROOT / "dashboards").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "altair_chart(" not in text, path
        if path.name != "charts.py":
            assert "import altair" not in text, path
