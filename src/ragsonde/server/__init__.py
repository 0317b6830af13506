"""HTTP API and static search page for ragsonde."""

from ragsonde.server.app import create_app

__all__ = ["create_app"]
