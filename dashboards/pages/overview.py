"""Overview (waiting for the warehouse)."""

from __future__ import annotations

import streamlit as st

st.title("Overview")
st.info("Coming with the warehouse.")
