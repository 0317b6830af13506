"""``ragsonde push`` in process: the JSON report, a resumed push, errors, and the API key kept
out of every output. The source is the ``push_home`` fixture (tests/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.store.push import open_target
from tests.support import Cli


def test_cli_push_json_then_resume(cli: Cli, push_home: Path, tmp_path: Path) -> None:
    target_dir = tmp_path / "target"
    args = ("push", "-c", "docs", "--to", f"path:{target_dir}", "--batch-size", "5", "--json")
    out = cli(*args, env={"RAGSONDE_HOME": str(push_home)})
    assert out.exit_code == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {
        "collection",
        "target",
        "target_collection",
        "points",
        "copied",
        "skipped",
        "seconds",
        "warnings",
    }
    assert report["collection"] == report["target_collection"] == "docs"
    assert report["points"] == report["copied"] > 0 and report["skipped"] == 0
    again = json.loads(cli(*args, env={"RAGSONDE_HOME": str(push_home)}).stdout)
    assert (again["copied"], again["skipped"]) == (0, report["points"])
    human = cli(*args[:-1], "--home", str(push_home))
    assert human.exit_code == 0 and f"{report['points']} already there" in human.stdout
    target = open_target(f"path:{target_dir}")
    try:
        assert target.count("docs") == report["points"]
    finally:
        target.close()


# qdrant-client warns about a key over plain http; a real process prints that warning, but in
# process pytest turns warnings into errors.
@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection:UserWarning")
def test_cli_errors_and_the_api_key_is_never_printed(cli: Cli, push_home: Path) -> None:
    secret = "s3cret-api-key-0123456789"
    env = {"RAGSONDE_HOME": str(push_home), "QDRANT_API_KEY": secret}
    down = cli("push", "-c", "docs", "--to", "http://127.0.0.1:9", "--json", env=env)
    assert down.exit_code == 1, down.stdout + down.stderr
    assert json.loads(down.stdout)["error"]["code"] == "CONNECTION_ERROR"
    flag = cli("push", "-c", "docs", "--to", "http://127.0.0.1:9", "--api-key", secret, env=env)
    assert flag.exit_code == 1 and "CONNECTION_ERROR" in flag.stderr
    for out in (down, flag):
        assert secret not in out.stdout + out.stderr and "Traceback" not in out.stderr
        assert isinstance(out.exception, SystemExit), out.exception  # a clean exit, no crash
    missing = cli("push", "-c", "nope", "--to", ":memory:", "--json", env=env)
    assert missing.exit_code == 1
    assert json.loads(missing.stdout)["error"]["code"] == "COLLECTION_NOT_FOUND"
    nowhere = cli("push", "-c", "docs", "--json", env={"RAGSONDE_HOME": str(push_home)})
    assert nowhere.exit_code == 2
    assert json.loads(nowhere.stdout)["error"]["code"] == "VALIDATION_ERROR"


def test_a_target_folder_that_is_a_file_or_the_source_home_is_refused(
    cli: Cli, push_home: Path, tmp_path: Path
) -> None:
    """``--to path:FILE`` was a CONNECTION_ERROR asking whether the server runs; ``--to
    path:HOME`` (the embedded store being pushed) wrote qdrant-client's ``collection/`` and
    ``meta.json`` among the embedded store's files. Both are a VALIDATION_ERROR naming why."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me", encoding="utf-8")
    before = sorted(p.name for p in push_home.iterdir())
    for to, why in (
        (f"path:{a_file}", f"{a_file} is a file; name a folder"),
        (f"path:{push_home}", "is inside the embedded store's folder"),
        (str(push_home / "copy"), "is inside the embedded store's folder"),
    ):
        out = cli("push", "-c", "docs", "--to", to, env={"RAGSONDE_HOME": str(push_home)})
        message = " ".join(out.stderr.split())
        assert out.exit_code == 2, (to, out.output)
        assert message.startswith("VALIDATION_ERROR: Cannot push to") and why in message, message
    assert a_file.read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in push_home.iterdir()) == before
