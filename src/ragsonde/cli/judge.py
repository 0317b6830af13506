"""``ragsonde judge``: an LLM grades the unjudged hits of each query's pooled top-k."""

from __future__ import annotations

__all__: list[str] = []
