"""``QDRANT_URL``: a server URL, ``:memory:``, or a local-mode folder; anything else is a
VALIDATION_ERROR naming the accepted forms (it used to create a folder named after it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ragsonde
from ragsonde.config import load_settings, parse_qdrant_url
from ragsonde.errors import QueryValidationError


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:6333",
        "https://xyz.cloud.qdrant.io:6333",
        "http://127.0.0.1",
        "http://[::1]:6333",
        "https://qdrant.example/prefix",
        ":memory:",
        "path:/srv/qdrant",
    ],
)
def test_accepted_forms_pass_through(url):
    assert parse_qdrant_url(url) == url
    assert load_settings(qdrant_url=url).qdrant_url == url


def test_an_existing_folder_is_local_mode(tmp_path):
    assert parse_qdrant_url(str(tmp_path)) == f"path:{tmp_path}"


@pytest.mark.parametrize("url", [None, "", "   "])
def test_empty_means_the_embedded_store(url):
    assert parse_qdrant_url(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "localhost:6333",
        "qdrant.example",
        "ftp://qdrant.example",
        "http://",
        "http://qdrant.example:port",
        "/no/such/folder",
        "path:",
    ],
)
def test_other_forms_are_a_validation_error_naming_the_accepted_ones(url, monkeypatch):
    monkeypatch.setenv("QDRANT_URL", url)
    with pytest.raises(QueryValidationError) as caught:
        load_settings()
    message = str(caught.value)
    assert "QDRANT_URL" in message
    for form in ("http(s)://host:port", ":memory:", "path:/folder"):
        assert form in message


def test_a_missing_scheme_suggests_it():
    with pytest.raises(ValueError, match=r"did you mean 'http://localhost:6333'"):
        parse_qdrant_url("localhost:6333")


def _query_at(url: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """``ragsonde query x --json`` as a process in ``folder``, with ``QDRANT_URL=url`` and a
    home of its own there."""
    env = {**os.environ, "QDRANT_URL": url, "RAGSONDE_HOME": str(folder / "h")}
    # the ragsonde under test, whatever the working directory (the process runs in folder)
    env["PYTHONPATH"] = str(Path(ragsonde.__file__).parents[1])
    return subprocess.run(
        [sys.executable, "-m", "ragsonde", "query", "x", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=120,
    )


def test_cli_refuses_it_without_creating_a_folder(tmp_path: Path):
    out = _query_at("localhost:6333", tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert json.loads(out.stdout)["error"]["code"] == "VALIDATION_ERROR"
    assert list(tmp_path.iterdir()) == []


def test_a_path_naming_a_file_is_a_validation_error_not_a_server_that_is_down(tmp_path: Path):
    """``QDRANT_URL=path:FILE`` reached qdrant-client, whose ``[Errno 17] File exists`` became a
    CONNECTION_ERROR asking "Is the server running and QDRANT_URL right?"."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a store\n", encoding="utf-8")
    out = _query_at(f"path:{a_file}", tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "VALIDATION_ERROR", error
    assert f"'path:{a_file}' names a file, not a folder" in error["message"], error
    assert a_file.read_text(encoding="utf-8") == "not a store\n"


def test_a_folder_another_process_has_open_says_so_not_that_a_server_is_down(tmp_path: Path):
    """qdrant-client's local mode lets one process open a folder (a framework's script, a
    ``ragsonde serve``): the second got "Is the server running and QDRANT_URL right? Unset
    QDRANT_URL …", advice that loses the user's collection."""
    from qdrant_client import QdrantClient

    folder = tmp_path / "qdrant"
    holder = QdrantClient(path=str(folder))
    try:
        out = _query_at(f"path:{folder}", tmp_path)
    finally:
        holder.close()
    assert out.returncode == 1, out.stdout + out.stderr
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "CONNECTION_ERROR", error
    assert "one process open a folder at a time" in error["message"], error
    assert "Is the server running" not in error["message"] and ".." not in error["message"]
