"""No function in ``src/`` takes more than 12 parameters, except a CLI command's own function,
whose parameters are its flags: a longer list is a model waiting to be written (as the eval
command's flags became :class:`~ragsonde.evaluate.EvalOptions`)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import ROOT

MOST = 12
SRC = ROOT / "src" / "ragsonde"


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    count = len(names) + (a.vararg is not None) + (a.kwarg is not None)
    return count - (1 if names[:1] in (["self"], ["cls"]) else 0)


def _is_command(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Registered as a Typer command: ``@app.command(...)`` (or any ``@<x>.command``)."""
    for deco in fn.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute) and target.attr == "command":
            return True
    return False


def long_signatures(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            n = _parameters(node)
            if n > MOST and not _is_command(node):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name}: {n}")
    return found


def test_no_function_takes_more_than_twelve_parameters():
    assert long_signatures(SRC) == []


def test_the_walk_finds_a_long_signature_and_spares_a_command(tmp_path: Path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    thirteen = ", ".join(f"p{i}" for i in range(13))
    (pkg / "m.py").write_text(
        f"def wide({thirteen}): ...\n"
        f"class C:\n    def method(self, {', '.join(f'p{i}' for i in range(12))}): ...\n"
        f"@app.command('x')\ndef cmd({thirteen}): ...\n"
        f"def starred(*a, **k): ...\n",
        encoding="utf-8",
    )
    assert long_signatures(pkg) == ["pkg/m.py:1 wide: 13"]
