"""``collection=""`` is refused at every library door, not read as "the default".

Each call below ran on the settings' default collection when given ``""`` (``collection or
settings.collection``) and reported it as the one asked for. Now every door resolves the name
with :func:`ragsonde.models.query.resolve_collection`: None is the default, ``""`` or a name that
breaks the contract's rule (valid Unicode, 1..255 characters) is a VALIDATION_ERROR naming
``collection``. The home here is empty, so a call that did not refuse would have failed with
COLLECTION_NOT_FOUND for the default collection (or, for ``ingest``, created it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragsonde import QueryValidationError, Retriever, Workspace
from ragsonde.config import Settings, load_settings
from ragsonde.models.query import check_collection, resolve_collection

BAD_NAMES = ["", "\ud800abc", "x" * 256, b"docs", 7]


def _refused(call: Callable[[], Any], field: str = "collection") -> QueryValidationError:
    with pytest.raises(QueryValidationError) as info:
        call()
    assert info.value.field == field, info.value
    return info.value


@pytest.mark.parametrize("name", BAD_NAMES)
def test_the_resolver_refuses_what_is_no_name(name: object) -> None:
    err = _refused(lambda: resolve_collection(name, "docs"))
    assert "\ud800" not in err.message  # the refusal can be printed
    assert resolve_collection(None, "docs") == "docs"
    assert resolve_collection("x" * 255, "docs") == "x" * 255
    assert check_collection("my docs") == "my docs"  # a Qdrant server takes it; Edge checks its own


def test_settings_refuse_the_empty_collection(tmp_path: Path) -> None:
    _refused(lambda: load_settings(home=tmp_path, collection=""))
    _refused(lambda: Workspace(home=tmp_path, collection=""))


def test_retrieve_answers_an_error_for_the_empty_collection(settings: Settings) -> None:
    with Retriever(settings) as r:
        resp = r.retrieve({"query": "lidar"}, collection="")
        assert resp.status == "error" and resp.error is not None
        assert resp.error.code == "VALIDATION_ERROR" and "collection" in resp.error.message
        assert resp.collection == ""  # what was asked, not the default it used to search
        resp = r.retrieve({"query": "lidar"}, collection="\ud800")
        assert resp.error is not None and resp.error.code == "VALIDATION_ERROR"
        assert resp.collection == "\ufffd"


def test_inspect_and_ingest_refuse_the_empty_collection(settings: Settings, tmp_path: Path) -> None:
    from ragsonde.ingest import ingest

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nLidar measures distance with laser pulses.\n")
    with Workspace(settings) as ws:
        _refused(lambda: ws.inspect(""))
        _refused(lambda: ingest(str(docs), collection="", workspace=ws))
        assert ws.store.list_collections() == []  # nothing was written into "docs"


def test_evaluate_and_explain_refuse_the_empty_collection(settings: Settings, bench: Path) -> None:
    from ragsonde.evaluate import evaluate, evaluate_against
    from ragsonde.evaluate.versus import evaluate_versus
    from ragsonde.explain import explain_query

    with Workspace(settings) as ws:
        _refused(lambda: evaluate(bench, workspace=ws, collection=""))
        _refused(lambda: explain_query(bench, "q1", collection="", workspace=ws))
        _refused(lambda: evaluate_against(bench, "http://127.0.0.1:9", ws, collection=""))
        two = ["local:a", "local:b"]
        _refused(lambda: evaluate_versus(bench, two, workspace=ws, collection=""))
        _refused(lambda: evaluate_versus(bench, two, workspace=ws, collections=["", "b"]))
        # a string is a sequence of two one-letter names: "ab" was collections 'a' and 'b'
        _refused(lambda: evaluate_versus(bench, two, workspace=ws, collections="ab"))


def test_labelling_refuses_the_empty_collection(
    settings: Settings, bench: Path, tmp_path: Path
) -> None:
    from ragsonde.labels import GenerateOptions, JudgeOptions, generate, judge

    out = tmp_path / "out.jsonl"
    with Workspace(settings) as ws:
        opts = JudgeOptions(llm="openai:gpt-4o-mini")
        _refused(lambda: judge(bench, out, options=opts, collection="", workspace=ws))
        _refused(lambda: generate(out, collection="", workspace=ws))
        _refused(lambda: GenerateOptions(method="ict", ict_collection=""), "ict_collection")
    assert not out.exists()


def test_traffic_refuses_the_empty_collection(settings: Settings, bench: Path) -> None:
    from ragsonde.traffic.replay import Replayer
    from ragsonde.traffic.run import traffic_report

    with Workspace(settings) as ws:
        _refused(lambda: Replayer(ws, collection=""))
        _refused(lambda: traffic_report([bench], ws, collection=""))


def test_push_refuses_the_empty_target_collection(settings: Settings, tmp_path: Path) -> None:
    from ragsonde.store.push import push

    with Workspace(settings) as src, Workspace(Settings(home=tmp_path / "other")) as dst:
        _refused(lambda: push(src.store, "docs", dst.store, target_collection=""))
        _refused(lambda: push(src.store, "", dst.store))
