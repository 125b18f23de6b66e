"""The Streamlit dashboard: pages that render what `engine` (replays, reports, player
views) and `ingest` (the warehouse's read model) return, and the server that runs them."""
