"""Haft Khabis rules engine: cards, ruleset profiles, the haftkhabis/1 notation, the state
machine that replays a game, scoring, and the validator built on them.

This package imports nothing from `ingest` or `dashboards`, and neither DuckDB nor Streamlit.
"""

from engine._core import ENGINE_VERSION

__all__ = ["ENGINE_VERSION"]
