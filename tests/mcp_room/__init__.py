"""Tests of ragsonde.mcp (the folder is not named ``mcp``: with ``tests`` a source root, that
name would shadow the SDK for the linter)."""
