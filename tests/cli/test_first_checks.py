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
