"""Payload layouts and mappings: dotted and JSON-string paths, the layout registry, the
``mapping`` setting, and relevance ids resolved or refused (issue 12.1-12.3).

The frameworks' own layouts are tested on collections their code builds, in
tests/integrations/test_framework_collections.py.
"""

from __future__ import annotations

import json

import pytest

from ragsonde.config import load_settings
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.resolve import POINT_ID, resolve_doc_id_field
from ragsonde.models.payload import (
    DEFAULT_MAPPING,
    LAYOUTS,
    MAPPED_FIELDS,
    build_mapping,
    detect_layout,
    get_path,
)
from ragsonde.store import open_store
from ragsonde.store.inspect import inspect_collection
from tests.support import fill

BLOB = {"meta": {"title": "T", "n": 3}, "body": "the text"}


def test_dotted_paths_reach_into_nested_and_json_string_fields():
    payload = {"a": {"b": {"c": 1}}, "blob": json.dumps(BLOB), "plain": "{not json"}
    assert get_path(payload, "a.b.c") == 1
    assert get_path(payload, "a.b.x") is None
    assert get_path(payload, "blob.meta.title") == "T"
    assert get_path(payload, "blob.body") == "the text"
    assert get_path(payload, "plain.x") is None
    assert get_path(payload, "a.b.c.d") is None


def test_a_json_string_is_decoded_once_per_payload(monkeypatch):
    import ragsonde.models.payload as payload_mod

    calls = []
    real = payload_mod.json.loads

    def counting(text, *a, **kw):
        calls.append(text)
        return real(text, *a, **kw)

    monkeypatch.setattr(payload_mod.json, "loads", counting)
    mapping = build_mapping({"text": "blob.body", "title": "blob.meta.title", "url": "blob.u"})
    fields = mapping.read({"blob": json.dumps(BLOB), "other": 1})
    assert (fields.text, fields.title, fields.url) == ("the text", "T", None)
    assert len(calls) == 1
    assert fields.metadata == {"blob": json.dumps(BLOB), "other": 1}


def test_every_layout_maps_text_and_doc_id_and_the_default_reads_them_all():
    for layout in LAYOUTS.values():
        assert layout.mapping.paths["text"], layout.name
        assert layout.mapping.paths["doc_id"], layout.name
        for name in MAPPED_FIELDS:
            assert set(layout.mapping.paths.get(name, ())) <= set(DEFAULT_MAPPING.paths[name])
    # flat paths are tried before nested ones: one dict lookup for the common case
    dots = [p.count(".") for p in DEFAULT_MAPPING.paths["text"]]
    assert dots == sorted(dots)
    assert DEFAULT_MAPPING.paths["text"][0] == "text"


def test_detect_layout_keeps_the_most_specific_of_equals():
    own = {"text": "x", "doc_id": "d", "content_hash": "h"}
    assert detect_layout([own, own]).name == "ragsonde"
    assert detect_layout([{"text": "x"}]).name == "spec"
    half = detect_layout([own, {"text": "y"}])
    assert (half.name, half.share) == ("spec", 1.0)
    assert detect_layout([{"body": "x"}]).name is None
    assert detect_layout([]).name is None


def test_build_mapping_from_a_layout_with_overrides_and_its_errors():
    m = build_mapping({"layout": "langchain", "doc_id": "metadata.source"})
    assert m.paths["text"] == ("page_content",)
    assert m.paths["doc_id"] == ("metadata.source",)
    assert build_mapping({}) is DEFAULT_MAPPING
    for bad, needle in [
        ({"txt": "a"}, "Unknown mapping field"),
        ({"layout": "nope"}, "Unknown layout"),
        ({"text": " "}, "Empty payload path"),
    ]:
        with pytest.raises(QueryValidationError, match=needle):
            build_mapping(bad)


def test_the_mapping_setting_from_toml_environment_and_arguments(tmp_path, monkeypatch):
    config = tmp_path / "ragsonde.toml"
    config.write_text('[mapping]\ntext = "body"\ntitle = "meta.title"\n', encoding="utf-8")
    monkeypatch.setenv("RAGSONDE_CONFIG", str(config))
    monkeypatch.setenv("RAGSONDE_MAPPING__DOC_ID", "meta.id")
    settings = load_settings(mapping={"title": "heading"})
    assert settings.mapping == {"text": "body", "title": "heading", "doc_id": "meta.id"}
    m = settings.payload_mapping
    assert (m.paths["text"], m.paths["title"], m.paths["doc_id"]) == (
        ("body",),
        ("heading",),
        ("meta.id",),
    )
    monkeypatch.setenv("RAGSONDE_MAPPING__TXT", "x")
    with pytest.raises(QueryValidationError, match="Unknown mapping field"):
        load_settings()


@pytest.mark.slow
def test_inspect_and_resolve_on_an_embedded_collection(edge_settings, embedder):
    store = open_store(edge_settings)
    try:
        fill(store, embedder, "docs")
        report = inspect_collection(store, "docs")
        assert report.layout == "spec"  # the specification's fields, no ragsonde hashes
        assert report.mapping["doc_id"] == "doc_id"
        assert report.warnings == []
        overridden = inspect_collection(store, "docs", mapping=build_mapping({"text": "body"}))
        assert overridden.mapping["text"] is None
        assert overridden.empty_text_share == 1.0
        assert any("--field text=" in w for w in overridden.warnings)
        # a doc_id path the user set, holding nothing, is named (it said "any known path")
        unset = inspect_collection(store, "docs", mapping=build_mapping({"doc_id": "meta.src"}))
        assert any("No document id found at meta.src:" in w for w in unset.warnings)

        by_doc = resolve_doc_id_field(store, "docs", ["lidar", "pid", "missing"])
        assert (by_doc.path, by_doc.configured, by_doc.matched, by_doc.total) == (
            "doc_id",
            True,
            2,
            3,
        )
        by_url = resolve_doc_id_field(store, "docs", ["https://docs.example/gps"])
        assert (by_url.path, by_url.configured) == ("url", False)
        assert "found by sampling" in by_url.describe()
        by_point = resolve_doc_id_field(store, "docs", ["1", "2"])
        assert by_point.path == POINT_ID
        with pytest.raises(QueryValidationError) as err:
            resolve_doc_id_field(store, "docs", ["nothing-like-it"])
        assert "doc_id" in err.value.message and "--field doc_id=" in err.value.message
    finally:
        store.close()
