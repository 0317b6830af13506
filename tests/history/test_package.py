"""The package's exports: the names the type checker sees are the names loaded on first use."""

from __future__ import annotations

import ast
from pathlib import Path

import ragsonde.history as history


def _typed_exports() -> dict[str, set[str]]:
    """Module -> the names ``ragsonde/history/__init__.py`` imports for the type checker."""
    tree = ast.parse(Path(history.__file__).read_text(encoding="utf-8"))
    (block,) = [n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n)]
    found: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module, ast.unparse(node)
        found.setdefault(node.module.rsplit(".", 1)[1], set()).update(a.name for a in node.names)
    return found


def test_the_typed_names_are_the_lazy_names():
    assert _typed_exports() == {m: set(names) for m, names in history._LAZY.items()}


def test_every_export_loads_to_its_module_s_object():
    import importlib

    for module, names in history._LAZY.items():
        source = importlib.import_module(f"ragsonde.history.{module}")
        for name in names:
            assert getattr(history, name) is getattr(source, name), name
    assert set(history.__all__) == {*history._MODULE_OF, "sparkline", "trend", "write_svg"}
