"""Turning an API's list of lists into checked, normalised float32 rows."""

from __future__ import annotations

from typing import Any

import numpy as np

from ragsonde.embedders.base import Vectors
from ragsonde.errors import EmbeddingError

__all__ = ["to_vectors"]


def to_vectors(rows: Any, *, expected: int, api: str, dimension: int | None) -> Vectors:
    """Check count and width, L2-normalise (cosine stays honest), return float32."""
    if not isinstance(rows, list) or len(rows) != expected:
        got = len(rows) if isinstance(rows, list) else type(rows).__name__
        raise EmbeddingError(f"{api} returned {got} vectors for {expected} texts.")
    try:
        arr = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise EmbeddingError(f"{api} returned vectors that are not lists of numbers.") from e
    if arr.ndim != 2 or (dimension is not None and arr.shape[1] != dimension):
        raise EmbeddingError(
            f"{api} returned vectors of shape {arr.shape}; expected {expected} × {dimension}."
        )
    if not np.isfinite(arr).all():
        raise EmbeddingError(f"{api} returned vectors with NaN or infinite values.")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: np.ndarray[Any, np.dtype[np.float32]] = (arr / norms).astype(np.float32)
    return out
