"""The public surface is listed once per package, and that list matches the real names."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

import ragsonde
import ragsonde.errors

#: Every package of ragsonde, found by walking it, so a new package cannot be forgotten here.
PACKAGES = [
    "ragsonde",
    *sorted(
        info.name for info in pkgutil.walk_packages(ragsonde.__path__, "ragsonde.") if info.ispkg
    ),
]

CONTRACT = Path(__file__).resolve().parents[1] / "docs" / "CONTRACT.md"


def test_the_walk_finds_the_packages():
    assert {"ragsonde.store", "ragsonde.evaluate", "ragsonde.server", "ragsonde.cli"} <= set(
        PACKAGES
    )
    assert len(PACKAGES) >= 13


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_exactly_the_public_names(name):
    mod = importlib.import_module(name)
    exported = list(mod.__all__)
    assert len(exported) == len(set(exported)), "a name is listed twice"
    # Every public class/function defined in the package is exported...
    public = {
        n
        for n, v in vars(mod).items()
        if not n.startswith("_")
        and not isinstance(v, ModuleType)
        and str(getattr(v, "__module__", "")).startswith(name)
    }
    assert public <= set(exported), sorted(public - set(exported))
    # ...and every exported name exists.
    for n in exported:
        assert hasattr(mod, n), n


def test_top_level_names_load_lazily_and_are_the_real_ones():
    from ragsonde.retriever import Retriever
    from ragsonde.workspace import Workspace

    assert ragsonde.Workspace is Workspace and ragsonde.Retriever is Retriever
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = ragsonde.Nope


def test_the_contract_copy_lists_exactly_the_error_codes():
    table = CONTRACT.read_text(encoding="utf-8").split("| code | when |", 1)[1]
    documented = re.findall(r"^\| `([A-Z_]+)` \|", table, flags=re.M)
    assert sorted(documented) == sorted(ragsonde.ErrorCode)
    assert "docs/CONTRACT.md" in (ragsonde.errors.__doc__ or "")


def test_every_error_has_a_distinct_contract_code():
    classes = [
        getattr(ragsonde.errors, n)
        for n in ragsonde.errors.__all__
        if isinstance(getattr(ragsonde.errors, n), type)
        and issubclass(getattr(ragsonde.errors, n), ragsonde.RagsondeError)
        and getattr(ragsonde.errors, n) is not ragsonde.RagsondeError
    ]
    branches = [c for c in classes if c.__bases__ == (ragsonde.RagsondeError,)]
    assert sorted(c.code for c in branches) == sorted(ragsonde.ErrorCode)
    # a refinement (RelevanceError: a VALIDATION_ERROR the CLI exits 1 with) keeps its code
    for cls in classes:
        (branch,) = [b for b in branches if issubclass(cls, b)]
        assert cls.code is branch.code, cls


@pytest.mark.slow  # starts a process
def test_importing_the_core_does_not_import_heavy_libraries():
    import subprocess
    import sys

    code = (
        "import sys, ragsonde, ragsonde.cli, ragsonde.retriever, ragsonde.store, ragsonde.embedders,"
        " ragsonde.workspace;"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'fastapi', 'qdrant_client', 'qdrant_edge') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("name", ["ragsonde.evaluate", "ragsonde.history"])
def test_lazy_names_stay_what_they_are_once_every_module_is_loaded(name):
    """A package that loads its names on first use (PEP 562) must not lose one to a submodule
    of the same name: importing ``pkg.trend`` sets ``pkg.trend`` to the module."""
    mod = importlib.import_module(name)
    for info in pkgutil.walk_packages(mod.__path__, f"{name}."):
        importlib.import_module(info.name)
    shadowed = [n for n in mod.__all__ if isinstance(getattr(mod, n), ModuleType)]
    assert shadowed == []
