"""The mapping is an evaluation option: one model for the library, the CLI and ``/v1/eval``."""

from __future__ import annotations

import pytest

from ragsonde.cli._common import exit_code_for
from ragsonde.errors import ErrorCode, QueryValidationError, RelevanceError
from ragsonde.evaluate import EvalOptions
from ragsonde.evaluate.relevance import check_missing
from ragsonde.server.routes_eval import EvalRequest


def test_eval_request_carries_the_mapping_to_the_options():
    req = EvalRequest.parse(
        {"dataset": "b.jsonl", "mapping": {"doc_id": "metadata.source", "layout": "langchain"}}
    )
    assert req.options.mapping == {"doc_id": "metadata.source", "layout": "langchain"}
    assert EvalOptions().mapping is None and not EvalOptions().allow_missing


@pytest.mark.parametrize(
    ("mapping", "said"),
    [({"txt": "page_content"}, "Unknown mapping field"), ({"layout": "nope"}, "Unknown layout")],
)
def test_a_bad_mapping_is_a_validation_error_naming_it(mapping, said):
    with pytest.raises(QueryValidationError) as err:
        EvalOptions(mapping=mapping)
    assert err.value.field == "mapping" and said in err.value.message


def test_more_than_half_missing_fails_unless_allowed():
    check_missing(["a"], 2, allow_missing=False)  # half: scored as misses
    with pytest.raises(RelevanceError) as err:
        check_missing(["a", "b"], 3, allow_missing=False)
    assert "2 of 3" in err.value.message and "--allow-missing" in err.value.message
    # a VALIDATION_ERROR, but the evaluation failed: the CLI's table exits 1, not 2
    assert err.value.code is ErrorCode.VALIDATION_ERROR and exit_code_for(err.value) == 1
    assert exit_code_for(QueryValidationError("bad input")) == 2
    check_missing(["a", "b"], 3, allow_missing=True)


@pytest.mark.slow  # the real model and the sample collection
def test_the_evaluations_integrity_reads_content_hash_through_its_mapping(sample_home, embedder):
    """The integrity checks read ``content_hash`` through the evaluation's mapping: a path that
    holds nothing makes every result's hash missing, the default finds ragsonde's own."""
    from ragsonde.config import Settings
    from ragsonde.evaluate import evaluate
    from ragsonde.samples import robotics_benchmark
    from ragsonde.workspace import Workspace

    settings = Settings(home=sample_home, collection="robotics")
    counts = []
    for mapping in (None, {"content_hash": "props.sha"}):
        options = EvalOptions(k=[5], throughput=False, mapping=mapping)
        with Workspace(settings, embedder=embedder) as ws:
            integrity = evaluate(str(robotics_benchmark()), options, ws).integrity
        counts.append((integrity.checked_results, integrity.counts["content_hash_missing"]))
    (checked, missing), (checked_again, missing_mapped) = counts
    assert checked == checked_again > 0
    assert missing == 0 and missing_mapped == checked
