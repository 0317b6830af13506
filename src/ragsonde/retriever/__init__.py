"""The retrieval pipeline: validate → embed → search → format, with per-stage timings."""

from __future__ import annotations

from ragsonde.retriever.retriever import Retriever

__all__ = ["Retriever"]
