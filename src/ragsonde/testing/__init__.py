"""Test helpers that ship with ragsonde, for its own tests and its users' CI."""

from __future__ import annotations

from ragsonde.testing.beir import beir_slice
from ragsonde.testing.fake_embedding_api import FakeEmbeddingAPI, RecordedRequest, fake_vector

__all__ = ["FakeEmbeddingAPI", "RecordedRequest", "beir_slice", "fake_vector"]
