"""A command line loads only the module of the command it names (``ragsonde history list`` does
not load the retriever to list runs); ``--help`` and an unknown word still see every command."""

from __future__ import annotations

import pytest

import ragsonde.cli
from ragsonde.cli import _COMMAND_MODULES, _modules_for
from tests.support import run


def _commands() -> dict[str, str]:
    """Every registered command (and command group) -> the module that defines it."""
    from ragsonde.cli.app import app

    ragsonde.cli._register()
    out: dict[str, str] = {}
    for c in app.registered_commands:
        assert c.callback is not None
        out[c.name or c.callback.__name__.replace("_", "-")] = c.callback.__module__
    for g in app.registered_groups:
        assert g.name is not None and g.typer_instance is not None
        callback = g.typer_instance.registered_commands[0].callback
        assert callback is not None
        out[g.name] = callback.__module__
    return out


def test_each_command_line_names_the_module_of_its_command():
    commands = _commands()
    assert {"query", "batch", "inspect", "eval", "history", "serve"} <= commands.keys()
    assert {m.rsplit(".", 1)[1] for m in commands.values()} == set(_COMMAND_MODULES)
    for name, module in commands.items():
        own = (module.rsplit(".", 1)[1],)
        assert _modules_for([name, "--help"]) == own, name
        assert _modules_for(["--config", "x.toml", name]) == own, name
        assert _modules_for(["--config=x.toml", name]) == own, name


def test_help_no_command_and_unknown_words_load_every_command():
    for argv in ([], ["--help"], ["-h"], ["nope"], ["--config", "x.toml"]):
        assert _modules_for(argv) == _COMMAND_MODULES, argv
    assert _modules_for(["--version"]) == ()


@pytest.mark.slow  # processes
def test_the_real_command_lists_every_command_and_refuses_an_unknown_one():
    shown = run("--help")
    assert shown.returncode == 0, shown.stderr
    for name in ("query", "inspect", "eval", "history", "tune", "serve"):
        assert name in shown.stdout, name
    wrong = run("histroy", "list")
    assert wrong.returncode == 2 and "No such command" in wrong.stderr


def _imported(stderr: str) -> set[str]:
    """The modules ``-X importtime`` (``PYTHONPROFILEIMPORTTIME``) says a process imported."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


@pytest.mark.slow  # processes
@pytest.mark.parametrize("argv", [("--help",), ("query", "--help"), ("eval", "--help")])
def test_help_loads_no_numpy(argv: tuple[str, ...]):
    """The embedder interface names numpy's array type only for the type checker, and the
    commands import the retriever when they run: ``--help`` stays instant."""
    shown = run(*argv, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert shown.returncode == 0, shown.stderr
    loaded = _imported(shown.stderr)
    assert "ragsonde.cli.app" in loaded  # the profile was read
    assert not {m for m in loaded if m == "numpy" or m.startswith("numpy.")}, argv


def test_the_import_profile_is_read_as_python_writes_it():
    profile = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       123 |        123 |           numpy.version\n"
        "import time:       273 |     359381 | ragsonde.retriever\n"
    )
    assert _imported(profile) == {"numpy.version", "ragsonde.retriever", "imported package"}
