"""Does tune's choice beat what the collection runs now? A paired test on held-out folds.

The current configuration is measured the way ``ragsonde eval`` measures it: the settings'
search (``[search]``, the environment, the server's) on the collection as it is built, through
the retriever. Tune's side is the held-out score of every query under the configuration chosen
on the other folds (:func:`~ragsonde.tune.select.held_out_scores`): what adopting the
recommendation would have scored on queries it was not chosen on. The two are compared query by
query (:func:`~ragsonde.evaluate.compare.paired_comparison`); unless tune's side is
significantly better, the verdict is "keep what you have".

A partly labelled tuning benchmark (rows without ``relevant``): tune chooses on the labelled
queries, and the current configuration is run on every query. The held-out gain is then
estimated over every query by PPI++ (:func:`ragsonde.estimate.estimate_paired`): the labelled
queries' differences, and the score signals of the current ranking of every query as the
prediction (the same function on labelled and unlabelled queries, so the estimate stays
unbiased). "adopt" then rests on that interval excluding 0, and the reason says how many
labelled queries it rests on. Not on a benchmark that carries an LLM judge's labels: tune
scores with them as its ``relevant`` says, and an estimate never takes them as gold, so the
two sides would not be scored alike; there the paired tests decide, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ragsonde.estimate.ppi import MIN_LABELED
from ragsonde.evaluate.compare import paired_comparison
from ragsonde.evaluate.comparison import MetricComparison
from ragsonde.evaluate.options import EvalOptions
from ragsonde.evaluate.provenance import judge_labels
from ragsonde.evaluate.report import EvalReport
from ragsonde.evaluate.runner import evaluate
from ragsonde.models.prediction import PredictedQuery
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
    # estimate: the unlabelled rows are kept and searched too. Not on a benchmark with LLM
    # labels: the estimate path takes them off the gold, and tune's sweep scored with them
    machine = bool(judge_labels(dataset).grades)
    report = evaluate(
        dataset,
        workspace=workspace,
        options=EvalOptions(k=[10], throughput=False, split=options.split, estimate=not machine),
        record=False,  # tune's yardstick, not an eval run: each tune added a run to the history
    )
    current = {q: row.metrics.get(_METRIC, 0.0) for q, row in report.per_query.items()
               if row.relevant}  # fmt: skip
    tuned, chosen = held_out_scores(admitted, query_ids, options.folds)
    ids = [q for q in query_ids if q in current and q in tuned]
    result = paired_comparison(
        _METRIC, [current[q] for q in ids], [tuned[q] for q in ids], alpha=options.alpha
    )
    unlabelled = [q for q, row in report.per_query.items() if not row.relevant]
    if unlabelled and len(ids) >= MIN_LABELED:
        _estimate(result, report, current, tuned, ids + unlabelled, options.alpha)
    adopt = result.verdict == "better"
    reason = f"{_gain(result)}: " + (
        "a significant gain, adopt it." if adopt else "not a significant gain, keep what you have."
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


def _estimate(
    result: MetricComparison,
    report: EvalReport,
    current: Mapping[str, float],
    tuned: Mapping[str, float],
    ids: Sequence[str],
    alpha: float,
) -> None:
    """The held-out gain over every query of a partly labelled benchmark, by PPI++: the
    labelled queries' differences, and the current ranking's score signals for every query."""
    from ragsonde.estimate import ScoreSignals, estimate_paired

    scores = {q: [s for _, s in row.retrieved] for q, row in report.per_query.items()}
    queries = [PredictedQuery(query_id=q, text=report.per_query[q].query) for q in ids]
    signals = ScoreSignals(lambda p: scores[p.query_id], name="current ranking's signals")
    gold = {q: tuned[q] for q in current if q in tuned}
    estimate_paired(result, current, gold, ids, (signals.predict(queries), []), alpha=alpha)


def _gain(result: MetricComparison) -> str:
    """The held-out gain as the reason states it: the paired tests, and on a partly labelled
    benchmark the PPI++ interval the verdict rests on, with how many labels it rests on."""
    gain = (
        f"On held-out folds tune's choice scores {result.mean_b:.4f} nDCG@10 against "
        f"{result.mean_a:.4f} for the current configuration ({result.delta:+.4f}, "
        f"{result.confidence:.0%} interval {result.ci_low:+.4f} to {result.ci_high:+.4f}; "
        f"paired t-test p={result.p_ttest:.3g}, permutation p={result.p_permutation:.3g})"
    )
    p = result.ppi
    if p is None:
        return gain
    return (
        f"{gain}; over every query by {p.method} ({p.n_labeled} labelled queries, "
        f"{p.n_predicted} predicted by {', '.join(p.sources) or 'nothing'}) the gain is "
        f"{p.estimate:+.4f}, 95 % interval {p.low:+.4f} to {p.high:+.4f}"
    )
