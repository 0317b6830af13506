"""Paths only under the allowed roots: ``..`` and links that lead out are refused alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.mcp.roots import Roots, roots_from_uris


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "sub" / "bench.jsonl").write_text("{}\n")
    (tmp_path / "secret.txt").write_text("no\n")
    (tmp_path / "root" / "escape").symlink_to(tmp_path / "secret.txt")
    return tmp_path


def test_a_path_under_the_root_resolves(tree: Path) -> None:
    roots = Roots([tree / "root"])
    assert roots.check("sub/bench.jsonl", "benchmark") == tree / "root" / "sub" / "bench.jsonl"
    assert roots.check(str(tree / "root" / "sub"), "benchmark") == tree / "root" / "sub"


@pytest.mark.parametrize(
    "path", ["../secret.txt", "sub/../../secret.txt", "escape", "/etc/passwd", "~/x"]
)
def test_paths_that_lead_out_are_refused(tree: Path, path: str) -> None:
    with pytest.raises(QueryValidationError, match="outside the folders") as info:
        Roots([tree / "root"]).check(path, "benchmark")
    assert info.value.field == "benchmark" and info.value.code == "VALIDATION_ERROR"


def test_a_missing_file_and_an_empty_path_are_validation_errors(tree: Path) -> None:
    roots = Roots([tree / "root"])
    with pytest.raises(QueryValidationError, match="does not exist"):
        roots.check("sub/none.jsonl", "benchmark")
    with pytest.raises(QueryValidationError, match="give a file path"):
        roots.check("", "benchmark")


def test_a_second_root_allows_its_own_tree(tree: Path) -> None:
    roots = Roots([tree / "root", tree])
    assert roots.check(str(tree / "secret.txt"), "benchmark") == tree / "secret.txt"


def test_client_roots_are_file_uris() -> None:
    uris = ["file:///home/me/project", "file:///tmp/with%20space", "https://example.com/x"]
    assert roots_from_uris(uris) == [Path("/home/me/project"), Path("/tmp/with space")]


@pytest.mark.parametrize("linked", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "qrels"])
def test_a_beir_folder_whose_named_files_link_out_is_refused(tree: Path, linked: str) -> None:
    """A BEIR folder's files are read by name, not by a walk (which skips a link leading out):
    a ``corpus.jsonl`` under the root linked to a file outside was read by ``ingest``."""
    beir = tree / "root" / "beir"
    (beir / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        (beir / name).write_text("{}\n")
    roots = Roots([tree / "root"])
    assert roots.check("beir", "source") == beir  # links inside the root are fine
    target = beir / linked
    if target.is_dir():
        (tree / "outside_qrels").mkdir()
        for child in target.iterdir():
            child.unlink()
        target.rmdir()
        target.symlink_to(tree / "outside_qrels", target_is_directory=True)
    else:
        target.unlink()
        target.symlink_to(tree / "secret.txt")
    with pytest.raises(QueryValidationError, match="a link to a file outside") as info:
        roots.check("beir", "source")
    assert info.value.field == "source"
