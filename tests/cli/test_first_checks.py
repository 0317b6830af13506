"""What a user checks first (issue 12.7): --version, -h, and messages printed as written.

In process (the ``cli`` fixture); ``ragsonde`` as a real process is tested in test_cli.py."""

from __future__ import annotations

import tomllib

import ragsonde
from tests.support import ROOT, Cli


def test_version_and_short_help(cli: Cli):
    version = cli("--version")
    assert version.exit_code == 0
    assert version.stdout.strip() == f"ragsonde {ragsonde.__version__}"
    short = cli("-h")
    assert short.exit_code == 0
    assert "query" in short.stdout and "--version" in short.stdout
    sub = cli("inspect", "-h")
    assert sub.exit_code == 0 and "--field" in sub.stdout


def test_error_messages_keep_their_brackets(cli: Cli, tmp_path):
    # Rich would read '[local]' as markup and print "a b"
    res = cli("inspect", "-c", "a[local]b", "--home", str(tmp_path))
    assert res.exit_code == 2
    assert "'a[local]b'" in res.stderr


def test_push_refuses_an_unknown_layout(cli: Cli, tmp_path):
    res = cli("push", "--to", ":memory:", "--layout", "nope", "--home", str(tmp_path))
    assert res.exit_code == 2
    assert "Unknown layout 'nope'" in res.stderr


def test_license_is_an_spdx_string():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    assert {"langchain", "llamaindex"} <= set(project["optional-dependencies"])


def test_explaining_an_unlabelled_query_says_it_is_unlabelled(cli: Cli, tmp_path):
    """It said "no query 'q2' in bench (1 queries)" of a query the file holds."""
    bench = tmp_path / "bench.jsonl"
    bench.write_text(
        '{"query_id": "q1", "query": "lidar range", "relevant": ["lidar"]}\n'
        '{"query_id": "q2", "query": "battery swelling"}\n',
        encoding="utf-8",
    )
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere"]  # no collection: never reached
    res = cli("explain", str(bench), "-q", "q2", *home)
    assert res.exit_code == 2, res.output
    message = " ".join(res.stderr.split())
    assert message.startswith("VALIDATION_ERROR: query_id: 'q2' of bench was left out (unlabelled)")
    missing = cli("explain", str(bench), "-q", "q9", *home)
    assert missing.exit_code == 2 and "no query 'q9' in bench (1 queries)" in missing.stderr
