"""Variant folders a killed tune left are deleted; a live tune's, or one just made, never."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ragsonde.store.lock import lock_shard
from ragsonde.tune.variants import ORPHAN_AGE_S, reap_orphans


def _variant(workdir: Path, name: str, age_s: float) -> Path:
    folder = workdir / f"ragsonde-variant-{name}"
    (folder / "collections" / "variant").mkdir(parents=True)
    then = time.time() - age_s
    os.utime(folder, (then, then))
    return folder


def test_only_old_folders_no_process_holds_are_deleted(tmp_path: Path) -> None:
    orphan = _variant(tmp_path, "orphan", 2 * ORPHAN_AGE_S)
    young = _variant(tmp_path, "young", 1.0)  # another tune made it a moment ago
    live = _variant(tmp_path, "live", 2 * ORPHAN_AGE_S)
    mine = tmp_path / "unrelated"
    mine.mkdir()
    held = lock_shard("variant", live / "collections" / "variant")  # a tune measuring it
    try:
        assert reap_orphans(tmp_path) == [orphan]
        assert not orphan.exists() and young.is_dir() and live.is_dir() and mine.is_dir()
    finally:
        held.release()
    assert reap_orphans(tmp_path) == [live]  # its tune was killed after all
