"""The HTTP API (`haftkhabis serve`): validation, ingest, game views and aggregates under
`/v1`, for game servers, support tools, analysts and auditors. Built on the engine
(`engine._core`), the warehouse (`ingest`) and the dashboard's data layer; adds no rule,
query or report of its own beyond what the web needs (keys, roles, paging, redaction)."""
