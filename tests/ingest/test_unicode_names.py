"""A folder's file whose name is not UTF-8, or whose front matter holds a lone surrogate, is
skipped and listed; the other files go in. Both were a TypeError traceback from the tokenizer
(the title is the file's stem, or the front matter's), and the whole ingest was lost."""

from __future__ import annotations

import os
from pathlib import Path

from ragsonde.ingest.document import Document, Failure
from ragsonde.ingest.sources.folder import FolderSource


def _read(root: Path) -> tuple[list[str], list[Failure]]:
    read = list(FolderSource(root))
    return [d.doc_id for d in read if isinstance(d, Document)], [
        f for f in read if isinstance(f, Failure)
    ]


def test_a_file_name_that_is_not_utf8_is_skipped_naming_it(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Lidar\n\nLidar is a sensor.\n", encoding="utf-8")
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xffname.md"), "wb") as f:
        f.write(b"Battery notes.\n")
    ids, failed = _read(tmp_path)
    assert ids == ["a"]
    assert len(failed) == 1 and "its name is not UTF-8" in failed[0].reason
    assert failed[0].source == "bad\ufffdname.md"  # printable: the failure list can be printed
    failed[0].source.encode("utf-8")


def test_front_matter_holding_a_lone_surrogate_is_skipped_naming_the_field(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Lidar\n\nLidar is a sensor.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text(
        '---\ntitle: "\\ud800"\n---\n# X\n\nBody text here.\n', encoding="utf-8"
    )
    (tmp_path / "c.md").write_text(
        '---\ntags: [ok, "x\\udc80"]\n---\n# Y\n\nMore text.\n', encoding="utf-8"
    )
    ids, failed = _read(tmp_path)
    assert ids == ["a"]
    reasons = {f.source: f.reason for f in failed}
    assert "front matter's title is not valid Unicode" in reasons["b.md"]
    assert "front matter's tags.1 is not valid Unicode" in reasons["c.md"]
