"""A search tool's answer read into a ranking: fields named by flags, read off the output schema
or the first answer; malformed items refused with the query and the item named."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from ragsonde.errors import QueryValidationError
from ragsonde.mcp.items import ItemMap, Matcher, items_of, map_from_schema, ranked


class Hit(BaseModel):
    id: str
    similarity: float
    content: str


class Hits(BaseModel):
    hits: list[Hit]
    total: int


def answer(data: Any, structured: bool = True) -> CallToolResult:
    import json

    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(data))],
        structured_content=data if structured else None,
    )


def test_the_map_is_read_off_the_output_schema() -> None:
    m = map_from_schema(ItemMap(), Hits.model_json_schema())
    assert (m.items, m.id, m.score, m.text) == ("hits", "id", "similarity", "content")
    assert m.how == "id" and m.source["id"] == "output schema"


def test_flags_win_over_the_schema() -> None:
    m = map_from_schema(ItemMap.of_flags({"id": "content"}), Hits.model_json_schema())
    assert m.id == "content" and m.source["id"] == "--map" and m.score == "similarity"


def test_the_first_answer_names_fields_without_a_schema() -> None:
    m = ItemMap()
    data = {"results": [{"source": "a.md", "relevance_score": 0.5}], "took": 3}
    items = items_of(answer(data, structured=False), m, "q1")
    assert m.items == "results" and m.url == "source" and m.score == "relevance_score"
    assert m.how == "url" and len(items) == 1


def test_ranked_ids_scores_and_missing_scores() -> None:
    m = ItemMap(items="r", id="doc")
    pairs, unmatched = ranked([{"doc": "a"}, {"doc": 7}], m, None, "q1")
    assert pairs == [("a", 2.0), ("7", 1.0)] and unmatched == 0


def test_text_is_matched_exactly_and_the_rest_counted() -> None:
    m = ItemMap(items="r", text="t", score="s")
    matcher = Matcher({"alpha text": "d1"}, {})
    pairs, unmatched = ranked(
        [{"t": " alpha text ", "s": 0.9}, {"t": "beta", "s": 0.8}], m, matcher, "q"
    )
    assert pairs == [("d1", 0.9)] and unmatched == 1


@pytest.mark.parametrize(
    ("item", "what"),
    [
        ({"doc": None, "s": 1}, "no usable id"),
        ({"doc": True, "s": 1}, "no usable id"),
        ({"doc": "a", "s": "high"}, "not a number"),
    ],
)
def test_a_malformed_item_names_the_query_and_the_item(item: dict[str, Any], what: str) -> None:
    m = ItemMap(items="r", id="doc", score="s")
    with pytest.raises(QueryValidationError, match=f"query q9: item 1 .*{what}"):
        ranked([{"doc": "ok", "s": 1.0}, item], m, None, "q9")


def test_an_answer_without_a_list_or_with_non_objects_is_refused() -> None:
    with pytest.raises(QueryValidationError, match="no list of items"):
        items_of(answer({"results": "none"}), ItemMap(items="results"), "q2")
    with pytest.raises(QueryValidationError, match=r"item 0 .* not an object"):
        items_of(answer({"results": ["a"]}), ItemMap(items="results"), "q2")
    with pytest.raises(QueryValidationError, match="neither structuredContent nor JSON"):
        items_of(
            CallToolResult(content=[TextContent(type="text", text="plain words")]),
            ItemMap(),
            "q2",
        )


def test_unknown_map_keys_are_refused() -> None:
    with pytest.raises(QueryValidationError, match="unknown key"):
        ItemMap.of_flags({"identifier": "x"})
