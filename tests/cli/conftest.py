"""Fixtures for the CLI tests: the ``ragsonde`` app run in process.

``cli(*args, env=...)`` runs the app with Typer's ``CliRunner`` (stdout and stderr apart), with
every command registered as the ``ragsonde`` script registers them. Tests of exit codes and
signals as a real process use :func:`tests.support.run`.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from click.testing import Result
from typer.testing import CliRunner

from tests.support import Cli

#: Variables that would point a command elsewhere than the test says: unset in every run.
_FOREIGN_ENV = (
    "QDRANT_URL",
    "QDRANT_API_KEY",
    "RAGSONDE_QDRANT_URL",
    "RAGSONDE_QDRANT_API_KEY",
    "RAGSONDE_HOME",
    "RAGSONDE_EMBEDDER",
    "RAGSONDE_COLLECTION",
    "RAGSONDE_HISTORY",
    "RAGSONDE_RECORD",
)


@pytest.fixture(scope="session")
def cli() -> Cli:
    """Run ``ragsonde ARGS`` in process; ``env`` adds variables (``None`` unsets one)."""
    import ragsonde.cli
    from ragsonde.cli.app import app

    ragsonde.cli._register()

    def invoke(*args: str, env: Mapping[str, str | None] | None = None) -> Result:
        full_env: dict[str, str | None] = dict.fromkeys(_FOREIGN_ENV)
        full_env.update(env or {})
        return CliRunner().invoke(app, list(args), env=full_env)

    return invoke
