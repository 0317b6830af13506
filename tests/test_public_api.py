"""The public surface is listed once per package, and that list matches the real names."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import ragsonde
import ragsonde.errors

PACKAGES = [
    "ragsonde",
    "ragsonde.models",
    "ragsonde.store",
    "ragsonde.embedders",
    "ragsonde.retriever",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_exactly_the_public_names(name):
    mod = importlib.import_module(name)
    exported = set(mod.__all__)
    # Every public class/function defined in the package is exported...
    public = {
        n
        for n, v in vars(mod).items()
        if not n.startswith("_")
        and not isinstance(v, type(pkgutil))
        and str(getattr(v, "__module__", "")).startswith(name)
    }
    assert public <= exported, sorted(public - exported)
    for n in exported:
        assert hasattr(mod, n), n


def test_every_error_has_a_distinct_contract_code():
    classes = [
        getattr(ragsonde.errors, n)
        for n in ragsonde.errors.__all__
        if isinstance(getattr(ragsonde.errors, n), type)
        and issubclass(getattr(ragsonde.errors, n), ragsonde.RagsondeError)
        and getattr(ragsonde.errors, n) is not ragsonde.RagsondeError
    ]
    codes = [c.code for c in classes]
    assert sorted(codes) == sorted(ragsonde.ErrorCode)


def test_importing_the_core_does_not_import_heavy_libraries():
    import subprocess
    import sys

    code = (
        "import sys, ragsonde, ragsonde.cli, ragsonde.retriever, ragsonde.store, ragsonde.embedders;"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'fastapi', 'qdrant_client', 'qdrant_edge') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
