"""The MCP ``search`` tool on a collection whose text no layout reads (LangChain writing its text
under ``body`` through qdrant-client): its structured answer warns, as ``ragsonde query`` does on
stderr. Before, an agent got results with blank text and not a word. Through the MCP SDK's own
client over stdio; oracle: the text LangChain stored, read back once the server is told the
path."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import jsonschema
import pytest

from tests.integrations.support import Built
from tests.support import home_env

pytestmark = pytest.mark.slow  # starts servers that load the model

QUESTION = "DNA methylation in cancer"


def _search(b: Built, **env: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The search tool's output schema and its structured answer, from a server on ``b``."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragsonde", "mcp", "--collection", b.collection],
        env={**home_env(b.path.parent / "home"), "QDRANT_URL": str(b.path), **env},
    )

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            got = await s.call_tool("search", {"query": QUESTION, "top_k": 5})
            assert not got.is_error and got.structured_content is not None, got.content
            return tools["search"].output_schema or {}, got.structured_content

    return anyio.run(main)


def test_search_warns_when_every_result_has_empty_text(langchain_body: Built) -> None:
    schema, blank = _search(langchain_body)
    jsonschema.validate(blank, schema)
    assert "warnings" in schema["properties"]
    assert len(blank["results"]) == 5 and not any(r["text"] for r in blank["results"])
    assert len(blank["warnings"]) == 1
    warning = blank["warnings"][0]
    assert warning.startswith("5 of 5 results have empty text")
    assert "RAGSONDE_MAPPING__TEXT=PATH" in warning and "inspect_collection" in warning
    # told the path, the same server reads the text LangChain stored and has nothing to say
    schema, found = _search(langchain_body, RAGSONDE_MAPPING__TEXT="body")
    jsonschema.validate(found, schema)
    texts = {r["text"] for r in langchain_body.rows}
    assert [r["chunk_id"] for r in found["results"]] == [r["chunk_id"] for r in blank["results"]]
    assert all(r["text"] in texts for r in found["results"]) and found["warnings"] == []
