"""Shared pytest set-up: hypothesis profiles (`--hypothesis-profile deep` for long runs)."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("deep", max_examples=3000, deadline=None)
