"""Payload values of a type their field cannot be read as (:mod:`ragsonde.models.unread`): the
table of its docstring, value by value, and a mapping reading them."""

from __future__ import annotations

from typing import Any

import pytest

from ragsonde.models.payload import DEFAULT_MAPPING, LAYOUTS
from ragsonde.models.unread import Unread, id_text, json_type, text_of


@pytest.mark.parametrize(
    ("value", "text", "doc_id", "kind"),
    [
        ("a", "a", "a", "text"),
        ("", "", "", "text"),
        (5, "5", "5", "an integer"),
        (-12, "-12", "-12", "an integer"),
        (1.5, "1.5", None, "a decimal number"),
        (4983.0, "4983.0", None, "a decimal number"),
        (True, None, None, "true/false"),
        (False, None, None, "true/false"),
        (["a", "b"], None, None, "a list"),
        ([], None, None, "a list"),
        ({"body": "a"}, None, None, "an object"),
        (None, None, None, "null"),
    ],
)
def test_each_type_reads_as_the_table_says(value: Any, text: Any, doc_id: Any, kind: str):
    assert text_of(value) == text
    assert id_text(value) == doc_id
    assert json_type(value) == kind


def test_a_mapping_leaves_what_has_no_text_in_metadata_and_lists_it():
    payload = {
        "text": ["first part.", "second part."],
        "url": 5,
        "title": True,
        "section": {"h": 1},
        "chunk_index": True,
        "created_at": 20261129,
        "doc_id": "d",
    }
    fields = DEFAULT_MAPPING.read(payload)
    assert fields.text == "" and fields.url == "5" and fields.created_at == "20261129"
    assert fields.title is None and fields.section is None and fields.chunk_index is None
    assert fields.metadata == {
        "text": ["first part.", "second part."],
        "title": True,
        "section": {"h": 1},
        "chunk_index": True,
        "doc_id": "d",
    }
    assert [(name, path) for name, path, _ in fields.unread] == [
        ("text", "text"),
        ("title", "title"),
        ("section", "section"),
    ]
    # a null field is absent, not unread, and not metadata (as before)
    empty = DEFAULT_MAPPING.read({"text": None, "chunk_index": -1})
    assert empty.text == "" and empty.unread == () and "text" not in empty.metadata
    assert empty.chunk_index is None and empty.metadata == {"chunk_index": -1}


def test_a_nested_path_names_itself_and_its_container_stays_in_metadata():
    lc = LAYOUTS["langchain"].mapping
    fields = lc.read({"page_content": 7, "metadata": {"title": ["x"], "doc_id": "d"}})
    assert fields.text == "7" and fields.title is None
    assert fields.unread == (("title", "metadata.title", ["x"]),)
    assert fields.metadata == {"metadata": {"title": ["x"], "doc_id": "d"}}


def test_the_tally_counts_per_field_path_and_type_and_names_the_first_point():
    tally = Unread()
    assert not tally and tally.warnings() == []
    tally.add("text", "page_content", ["a"], "7")
    tally.add("text", "page_content", ["b"], "9")
    tally.add("text", "page_content", {"x": 1}, "3")
    other = Unread()
    other.add("doc_id", "metadata.doc_id", ["d", "e"], "4")
    other.add("text", "page_content", ["c"], "11")
    tally.merge(other)
    lines = tally.warnings()
    assert len(lines) == 3
    assert lines[0].startswith(
        "payload field 'page_content' (the text) holds a list, not text, in 3 results (the "
        "first: point 7): read as empty text"
    )
    assert "--field text=PATH (RAGSONDE_MAPPING__TEXT)" in lines[0]
    assert "holds an object, not text, in 1 result (the first: point 3)" in lines[1]
    assert lines[2].startswith(
        "payload field 'metadata.doc_id' (the doc_id) holds a list, not a document id"
    )
    assert tally.found("chunk")[0] == "'page_content' holds a list in 3 chunks (the first: point 7)"
