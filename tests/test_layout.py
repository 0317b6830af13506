"""The test tree's own rules: shared helpers live in support modules, fixtures in conftest files,
and no test module imports another test module or a conftest (pytest loads those itself)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _imported_modules(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return names


def test_no_test_module_or_conftest_is_imported():
    offenders = [
        f"{path.relative_to(TESTS)} imports {name}"
        for path in sorted(TESTS.rglob("*.py"))
        for name in _imported_modules(path)
        if name.startswith("tests.")
        and (name.rsplit(".", 1)[-1].startswith("test_") or name.endswith(".conftest"))
    ]
    assert offenders == []


def test_the_check_sees_an_offender(tmp_path: Path):
    bad = tmp_path / "test_x.py"
    bad.write_text("from tests.server.conftest import run_server\nimport tests.cli.test_cli\n")
    assert _imported_modules(bad) == ["tests.server.conftest", "tests.cli.test_cli"]
