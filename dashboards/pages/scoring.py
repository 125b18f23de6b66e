"""Scoring (waiting for the warehouse)."""

from __future__ import annotations

import streamlit as st

st.title("Scoring")
st.info("Coming with the warehouse.")
