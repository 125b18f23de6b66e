"""The Compliance page's auditor panel and the Replay page's what-if (issue 13), driven
through Streamlit's AppTest on the sample warehouse."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ingest import read
from ingest.inference import game_what_if, infer_builds
from tests.dashboards.conftest import DISPUTED, open_page
from tests.dashboards.test_pages import _html, app

__all__ = ["app"]  # the fixture, shared with test_pages


def test_inference_per_build_reads_the_warehouse(sample_warehouse: Path) -> None:
    reader = read.connect(sample_warehouse)
    try:
        result = infer_builds(reader, read.GameFilter(), 10)
        assert result.sampled == 5
        assert set(result.games["server_build"]) == {"hk-server/2.4.1-rc", "hk-server/2.4.0", "hk-server/2.3.1"}
        bazito = result.games.filter(result.games["game_id"] == "t41-bazito-1").row(0, named=True)
        assert bazito["header"] == "bazito" and bazito["inferred"] == "bazito" and not bazito["discrepancy"]
        # the planted faults are counted against every profile: no false finding
        assert result.findings == []
        only = infer_builds(reader, read.GameFilter(builds=("hk-server/2.4.0",)), 1)
        assert only.sampled == 1
        branch = game_what_if(reader, DISPUTED, 3, [])
        assert branch.alternatives and branch.before is not None
    finally:
        reader.close()


def test_the_compliance_panel_renders(app: AppTest) -> None:
    open_page(app, "compliance")
    app.toggle(key="compliance_infer").set_value(True).run()
    assert not app.exception, [e.value for e in app.exception]
    assert any("sampled games play what their headers say" in s.value for s in app.success)
    table = app.dataframe[-1].value
    assert set(table["game_id"]) >= {"t41-bazito-1", DISPUTED}


def test_the_replay_what_if_plays_a_branch(app: AppTest) -> None:
    open_page(app, "replay", game="t41-bazito-1", hand="1", step="2")
    assert not [b for b in app.button if b.key and b.key.startswith("replay_whatif_")]  # closed: not computed
    app.session_state["replay_whatif_open"] = True  # the panel opened
    app.run()
    buttons = [b for b in app.button if b.key and b.key.startswith("replay_whatif_")]
    assert buttons, "the legal moves at the step are offered"
    buttons[0].click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert any(m.value.startswith("**The branch:**") for m in app.markdown)
    assert 'class="hk-card' in _html(app)
    app.button(key="replay_whatif_reset").click().run()
    assert not any(m.value.startswith("**The branch:**") for m in app.markdown)
