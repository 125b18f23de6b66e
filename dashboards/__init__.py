"""The Streamlit dashboard and the HTML report: they only render what `engine` and `ingest`
return (replays, verdicts, scores, warehouse queries)."""
