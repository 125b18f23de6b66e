"""Games (waiting for the warehouse)."""

from __future__ import annotations

import streamlit as st

st.title("Games")
st.info("Coming with the warehouse.")
