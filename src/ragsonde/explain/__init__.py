"""Why did it miss? Each missed relevant document blamed on the pipeline stage that lost it.

>>> from ragsonde.evaluate import evaluate                                # doctest: +SKIP
>>> from ragsonde.explain import explain_report
>>> report = evaluate("scifact/", collection="scifact")                   # doctest: +SKIP
>>> explain_report(report, "scifact/").counts["ranking"]                # doctest: +SKIP
64

The stages, their order and their evidence: :mod:`ragsonde.explain.ladder`; the section it
writes into the evaluation report: :mod:`ragsonde.evaluate.misses`; which documents no query
reaches: :mod:`ragsonde.explain.retrievability`.
"""

from __future__ import annotations

from ragsonde.evaluate.misses import (
    STAGES,
    FieldShare,
    Miss,
    MissesReport,
    Outcome,
    QueryMisses,
    Retrievability,
    Stage,
    Step,
)
from ragsonde.explain.ladder import LADDER, Rung, climb
from ragsonde.explain.pipeline import Pipeline, Ranking
from ragsonde.explain.retrievability import gini, retrievability
from ragsonde.explain.run import (
    DEFAULT_EXPLAIN_K,
    evaluate_explained,
    explain_query,
    explain_report,
)

__all__ = [
    "DEFAULT_EXPLAIN_K",
    "LADDER",
    "STAGES",
    "FieldShare",
    "Miss",
    "MissesReport",
    "Outcome",
    "Pipeline",
    "QueryMisses",
    "Ranking",
    "Retrievability",
    "Rung",
    "Stage",
    "Step",
    "climb",
    "evaluate_explained",
    "explain_query",
    "explain_report",
    "gini",
    "retrievability",
]
