"""The `haftkhabis` command line."""
