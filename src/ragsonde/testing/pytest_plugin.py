"""A pytest plugin, so a user's own test suite fails when their retrieval regresses.

Installed with ragsonde (entry point ``pytest11``); nothing heavy is imported until used::

    def test_retrieval_quality(assert_retrieval):
        assert_retrieval("bench.jsonl", ["ndcg@10>=0.6", "latency.total_ms.p95<=80"],
                         collection="docs")

``assert_retrieval`` evaluates the benchmark with the user's settings (``RAGSONDE_*`` environment,
``ragsonde.toml``) and fails with the table of failed gates; it returns the report otherwise.
``estimate=True`` (a partly labelled benchmark, as ``eval --estimate``) estimates every metric
with its 95 % interval (``report.metrics_ci``), and a gate such as ``ndcg@10>=0.6`` then passes
only when the interval's lower end clears it; the failure says which end it tested. A gate on a
metric of machine-made labels (generated, an LLM judge's) passes only that way, never on the raw
score (:mod:`ragsonde.evaluate.gates`).
``baseline="runs.jsonl"`` (a ``ragsonde history export``, or ``last``/``best``/a run id of the
history) also fails it when the run is significantly worse on ndcg@10 than that baseline.
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
    baseline: str | Path | None = None,
    **options: Any,
) -> EvalReport:
    """Evaluate ``benchmark``; raise ``AssertionError`` listing the failed ``gates``, or the
    significant regressions against ``baseline`` (the run is recorded, as every eval)."""
    from ragsonde.estimate import estimating
    from ragsonde.evaluate import EvalOptions, evaluate
    from ragsonde.workspace import using

    opts = EvalOptions(gates=list(gates), **({"throughput": False} | options))
    with using(settings=settings) as ws:
        step = estimating(opts, workspace=ws)  # estimate=True: timed and recorded with the run
        report = evaluate(benchmark, opts, ws, collection=collection, extend=step)
    failed = [g for g in report.gates if not g.passed]
    if failed:
        lines = "\n".join(
            f"  {g.gate}: got {g.value}" + (f", on {g.on}" if g.on else "") for g in failed
        )
        raise AssertionError(
            f"retrieval gates failed on {report.dataset} ({report.n_queries} queries, "
            f"collection {report.collection}):\n{lines}"
        )
    if baseline is not None:
        _against_baseline(report, str(baseline), settings, opts.predictor)
    return report


def _against_baseline(
    report: EvalReport, baseline: str, settings: Settings | None, predictor: str
) -> None:
    """Fail on a significant regression against ``baseline``: by PPI++ on a partly labelled
    benchmark (``predictor``'s predictions), as ``eval --baseline``."""
    from functools import partial

    from ragsonde.config import load_settings
    from ragsonde.estimate import comparison_predictor, estimate_comparison
    from ragsonde.history import history_path
    from ragsonde.history.baseline import against_baseline

    if report.history_run is None:
        raise AssertionError(
            "a baseline needs the run recorded: unset RAGSONDE_RECORD=0 (or set "
            "RAGSONDE_HISTORY to a scratch file)"
        )
    path = history_path((settings or load_settings()).home)
    paired = partial(estimate_comparison, predictor=comparison_predictor(predictor))
    base, diff = against_baseline(report.history_run, baseline, path, paired=paired)
    if diff.gate is not None and not diff.gate.passed:
        worse = [m for m in diff.metrics if m.metric in diff.gate.regressions]
        lines = "\n".join(
            f"  {m.metric}: {m.mean_a:.4f} -> {m.mean_b:.4f} "
            + (
                f"(B - A by {m.ppi.method} {m.ppi.estimate:+.4f} [{m.ppi.low:+.4f}, "
                f"{m.ppi.high:+.4f}]: {m.ppi.n_labeled} labelled, {m.ppi.n_predicted} predicted)"
                if m.ppi is not None
                else f"(p t {m.p_ttest:.3g}, p perm {m.p_permutation:.3g})"
            )
            for m in worse
        )
        changed = ", ".join(diff.changed_fields) or "nothing in the fingerprint"
        raise AssertionError(
            f"retrieval regressed against baseline run {base.summary.run_id} ({changed} "
            f"changed):\n{lines}"
        )


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
