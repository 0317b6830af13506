"""The integrity check knows a derived copy's intended edits (ICT removed a sentence): the edit
recorded with the chunk is checked, so only damage counts."""

from __future__ import annotations

from ragsonde.evaluate.integrity import IntegrityReport
from ragsonde.models import Response, Result
from ragsonde.models.derived import EDIT_KEY, Edit, text_sha256

SOURCE = "Lidar times laser pulses. It measures distance from their echo."
EDITED = "It measures distance from their echo."


def _response(*results: Result) -> Response:
    return Response(
        query_id="q", query="lidar", status="success", top_k_requested=2, collection="c", model="m",
        results=list(results), total_results=len(results),
    )  # fmt: skip


def _result(chunk_id: str, text: str, rank: int, **meta: object) -> Result:
    return Result(
        chunk_id=chunk_id, text=text, url="https://x/a", title="A", chunk_index=0,
        similarity_score=0.9 - rank / 10, rank=rank, metadata=meta,
    )  # fmt: skip


def test_an_intended_edit_is_not_a_problem_and_damage_after_it_still_is():
    edit = Edit(method="ict", removed="Lidar times laser pulses.", text_sha256=text_sha256(EDITED))
    meta = {"content_hash": text_sha256(SOURCE), EDIT_KEY: edit.model_dump()}
    report = IntegrityReport()
    report.check(
        _response(
            _result("as-edited", EDITED, 0, **meta),
            _result("untouched", SOURCE, 1, content_hash=text_sha256(SOURCE)),
        )
    )
    assert report.problems == 0 and report.counts["content_hash_mismatch"] == 0
    damaged = IntegrityReport()
    damaged.check(
        _response(
            _result("changed-since", EDITED + " Extra.", 0, **meta),
            _result("no-edit-recorded", EDITED, 1, content_hash=text_sha256(SOURCE)),
        )
    )
    assert damaged.counts["content_hash_mismatch"] == 2
    assert [e.split()[1] for e in damaged.examples["content_hash_mismatch"]] == [
        "changed-since",
        "no-edit-recorded",
    ]


def test_a_hash_nested_in_a_layouts_metadata_is_read_and_checked():
    """A LangChain-layout copy (``push --layout langchain``) keeps content_hash under
    ``metadata``, Haystack under ``meta``: it was counted missing for every result and the
    warning said the layout stores none, while the check never ran."""
    report = IntegrityReport()
    report.check(
        _response(
            _result("lc", SOURCE, 0, metadata={"content_hash": text_sha256(SOURCE)}),
            _result("hs", SOURCE, 1, meta={"content_hash": text_sha256(SOURCE)}),
        )
    )
    assert report.counts["content_hash_missing"] == 0 and report.problems == 0
    damaged = IntegrityReport()
    damaged.check(
        _response(
            _result("lc", EDITED, 0, metadata={"content_hash": text_sha256(SOURCE)}),
            _result("none", SOURCE, 1, metadata={"doc_id": "a"}),
        )
    )
    assert damaged.counts["content_hash_mismatch"] == 1
    assert damaged.counts["content_hash_missing"] == 1


def test_the_hash_is_read_where_the_mapping_says():
    """``content_hash`` is a mapped field like ``doc_id``: a collection that keeps it elsewhere
    is checked once the mapping (``--field content_hash=PATH``) names the path."""
    from ragsonde.models.payload import build_mapping

    mapping = build_mapping({"content_hash": "props.sha"})
    report = IntegrityReport(mapping=mapping)
    report.check(
        _response(
            _result("ok", SOURCE, 0, props={"sha": text_sha256(SOURCE)}),
            _result("bad", EDITED, 1, props={"sha": text_sha256(SOURCE)}),
            _result("top", SOURCE, 2, content_hash=text_sha256(SOURCE)),  # not where it says
        )
    )
    assert report.counts["content_hash_mismatch"] == 1
    assert report.counts["content_hash_missing"] == 1
    assert report.examples["content_hash_mismatch"][0].startswith("chunk bad")
