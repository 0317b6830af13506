"""ragsonde: does my retrieval actually work, and how fast?

>>> from ragsonde import Retriever, Workspace                 # doctest: +SKIP
>>> with Workspace(collection="docs") as ws:                 # doctest: +SKIP
...     Retriever(workspace=ws).retrieve({"query_text": "how does lidar work?"})
"""

import importlib

# Nothing but importlib at import time (not even ``from __future__``, itself an import): the
# ``ragsonde`` script's entry point (``ragsonde._entry``) runs after this module, and takes over
# Ctrl-C only then. ``typing`` (and ``re``, for the errors) took 8 ms, in which a Ctrl-C was a
# traceback.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ragsonde.errors import (
        AuthError,
        CollectionNotFoundError,
        DimensionMismatchError,
        EmbeddingError,
        ErrorCode,
        QueryValidationError,
        RagsondeError,
        StoreConnectionError,
    )
    from ragsonde.retriever import Retriever
    from ragsonde.workspace import Workspace

__version__ = "0.1.0"

__all__ = [
    "AuthError",
    "CollectionNotFoundError",
    "DimensionMismatchError",
    "EmbeddingError",
    "ErrorCode",
    "QueryValidationError",
    "RagsondeError",
    "Retriever",
    "StoreConnectionError",
    "Workspace",
    "__version__",
]

#: Names loaded on first use (PEP 562), so ``import ragsonde`` and ``ragsonde --help`` stay instant:
#: the retriever and workspace pull in pydantic and the settings machinery.
_LAZY = {
    "Retriever": "ragsonde.retriever",
    "Workspace": "ragsonde.workspace",
    **{n: "ragsonde.errors" for n in __all__ if n.endswith("Error") or n == "ErrorCode"},
}


def __getattr__(name: str) -> "Any":
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragsonde' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
