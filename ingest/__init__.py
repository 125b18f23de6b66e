"""The warehouse: game logs ingested into Delta Lake tables, questions answered with DuckDB.

`ingest.pipeline.ingest` replays and commits a batch of log files; `ingest.queries`
opens the committed warehouse as read-only DuckDB views; `ingest.schema` declares every
table once.
"""
