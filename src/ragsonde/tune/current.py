"""Does tune's choice beat what the collection runs now? A paired test on held-out folds.

The current configuration is measured the way ``ragsonde eval`` measures it: the settings'
search (``[search]``, the environment, the server's) on the collection as it is built, through
the retriever. Tune's side is the held-out score of every query under the configuration chosen
on the other folds (:func:`~ragsonde.tune.select.held_out_scores`): what adopting the
recommendation would have scored on queries it was not chosen on. The two are compared query by
query (:func:`~ragsonde.evaluate.compare.paired_comparison`); unless tune's side is
significantly better, the verdict is "keep what you have".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragsonde.evaluate.compare import paired_comparison
from ragsonde.evaluate.options import EvalOptions
from ragsonde.evaluate.runner import evaluate
from ragsonde.tune.options import TuneOptions
from ragsonde.tune.report import ConfigResult, VersusCurrent
from ragsonde.tune.select import held_out_scores
from ragsonde.workspace import Workspace

__all__ = ["versus_current"]

_METRIC = "ndcg@10"


def versus_current(
    dataset: str | Path,
    workspace: Workspace,
    options: TuneOptions,
    admitted: Sequence[ConfigResult],
    query_ids: Sequence[str],
) -> VersusCurrent:
    """Measure the current configuration and test the held-out choice against it."""
    report = evaluate(
        dataset,
        workspace=workspace,
        options=EvalOptions(k=[10], throughput=False, split=options.split),
    )
    current = {q: row.metrics.get(_METRIC, 0.0) for q, row in report.per_query.items()}
    tuned, chosen = held_out_scores(admitted, query_ids, options.folds)
    ids = [q for q in query_ids if q in current and q in tuned]
    result = paired_comparison(
        _METRIC, [current[q] for q in ids], [tuned[q] for q in ids], alpha=options.alpha
    )
    adopt = result.significant and result.delta > 0
    gain = (
        f"On held-out folds tune's choice scores {result.mean_b:.4f} nDCG@10 against "
        f"{result.mean_a:.4f} for the current configuration ({result.delta:+.4f}, "
        f"{result.confidence:.0%} interval {result.ci_low:+.4f} to {result.ci_high:+.4f}; "
        f"paired t-test p={result.p_ttest:.3g}, permutation p={result.p_permutation:.3g})"
    )
    reason = (
        f"{gain}: a significant gain, adopt it."
        if adopt
        else f"{gain}: not a significant gain, keep what you have."
    )
    params = report.search.params
    built = report.search.collection_index
    if params is None or built is None:  # evaluate always fills them; a bug otherwise
        raise RuntimeError("the evaluation report does not say which search ran")
    return VersusCurrent(
        current_search=params,
        current_index=built,
        current_ndcg=result.mean_a,
        tuned_held_out_ndcg=result.mean_b,
        chosen_per_fold=chosen,
        comparison=result,
        verdict="adopt" if adopt else "keep what you have",
        reason=reason,
    )
