"""A pytest plugin, so a user's own test suite fails when their retrieval regresses.

Installed with ragsonde (entry point ``pytest11``); nothing heavy is imported until used::

    def test_retrieval_quality(assert_retrieval):
        assert_retrieval("bench.jsonl", ["ndcg@10>=0.6", "latency.total_ms.p95<=80"],
                         collection="docs")

``assert_retrieval`` evaluates the benchmark with the user's settings (``RAGSONDE_*`` environment,
``ragsonde.toml``) and fails with the table of failed gates; it returns the report otherwise.
The ``ragsonde_settings`` fixture is the settings it uses: override it in a ``conftest.py`` to
point at a test collection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ragsonde.config import Settings
    from ragsonde.evaluate import EvalReport

__all__ = ["assert_retrieval", "ragsonde_settings", "retrieval_gates"]


def retrieval_gates(
    benchmark: str | Path,
    gates: Sequence[str],
    *,
    settings: Settings | None = None,
    collection: str | None = None,
    **options: Any,
) -> EvalReport:
    """Evaluate ``benchmark``; raise ``AssertionError`` listing the failed ``gates``."""
    from ragsonde.evaluate import EvalOptions, evaluate

    opts = EvalOptions(gates=list(gates), **({"throughput": False} | options))
    report = evaluate(benchmark, collection=collection, settings=settings, options=opts)
    failed = [g for g in report.gates if not g.passed]
    if failed:
        lines = "\n".join(f"  {g.gate}: got {g.value}" for g in failed)
        raise AssertionError(
            f"retrieval gates failed on {report.dataset} ({report.n_queries} queries, "
            f"collection {report.collection}):\n{lines}"
        )
    return report


@pytest.fixture
def ragsonde_settings() -> Settings:
    """The settings retrieval is evaluated with (environment and ragsonde.toml)."""
    from ragsonde.config import load_settings

    return load_settings()


@pytest.fixture
def assert_retrieval(ragsonde_settings: Settings) -> Callable[..., EvalReport]:
    """``assert_retrieval(benchmark, gates, collection=None, **EvalOptions)``."""

    def check(
        benchmark: str | Path, gates: Sequence[str], collection: str | None = None, **kw: Any
    ) -> EvalReport:
        return retrieval_gates(
            benchmark, gates, settings=ragsonde_settings, collection=collection, **kw
        )

    return check
