"""The layout's rules, read from the source files.

- The package: no module in ``src/`` or ``bench/`` over 500 lines; ``store/`` is the backend and
  imports nothing of the rooms above it (tune, evaluate, …); the rooms (subpackages) import each
  other without a circle, lazy imports included; no two modules import each other at import
  time; nothing in ``src/`` imports ``bench``.
- The test tree: shared helpers live in support modules, fixtures in conftest files, and no test
  module imports another test module or a conftest (pytest loads those itself).
"""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SRC = REPO / "src"
MAX_LINES = 500
#: What the backend may import: its own modules and the floors below it.
STORE_MAY_IMPORT = {"store", "errors", "progress", "models"}
#: The modules outside ``store/`` that may import it: each opens a store or uses a tool of the
#: backend's (inspect, push). Everything else imports the vocabulary, ``ragsonde.models``.
STORE_USERS_AT_MOST = 10
#: Room -> room edges that close a circle today, each with why; the circle check leaves them out,
#: and a test fails once one is gone (then delete it here). History sits above the evaluation's
#: report (it stores and diffs reports), but ``evaluate()`` still records its finished report and
#: ``evaluate.schema`` publishes history's schemas: both belong to the surfaces above.
KNOWN_WAYS_BACK: dict[tuple[str, str], str] = {
    ("evaluate", "history"): "evaluate.runner records the report; evaluate.schema lists history's",
}


def _nodes(path: Path, *, import_time_only: bool = False) -> Iterator[ast.AST]:
    """Every node of ``path``; ``import_time_only``: only what runs when the module is imported
    (not the bodies of functions and classes, nor ``if TYPE_CHECKING:`` blocks)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    if not import_time_only:
        yield from ast.walk(tree)
        return
    for top in tree.body:
        if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(top, ast.If) and "TYPE_CHECKING" in ast.unparse(top.test):
            continue
        yield from ast.walk(top)


def _imported_modules(path: Path, *, import_time_only: bool = False) -> list[str]:
    """The absolute module names ``path`` imports (``from a import b``: ``a`` and ``a.b``)."""
    names: list[str] = []
    for node in _nodes(path, import_time_only=import_time_only):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return names


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``root/package`` by its dotted name."""
    return {_module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}


def _room(module: str) -> str:
    """The room of a ``ragsonde`` module: its subpackage or top-level module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(ragsonde)"


def _room_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Room -> the other rooms its modules import (lazy imports included)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = graph.setdefault(_room(name), set())
        for imported in _imported_modules(path):
            if imported.startswith("ragsonde.") and _room(imported) != _room(name):
                deps.add(_room(imported))
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of ``graph`` (empty: none)."""
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as e:
        return list(e.args[1])
    return []


def _too_long(paths: Iterable[Path], root: Path = REPO) -> list[str]:
    return [
        f"{p.relative_to(root).as_posix()}: {n} lines"
        for p in paths
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]


PACKAGE = _modules(SRC, "ragsonde")
BENCH = _modules(REPO, "bench")


def test_the_walk_finds_the_modules():
    assert {"ragsonde.store.edge", "ragsonde.tune.variants", "ragsonde.errors"} <= set(PACKAGE)
    assert {"bench", "bench._common", "bench.run_all"} <= set(BENCH)


def test_no_module_is_over_500_lines():
    assert _too_long([*PACKAGE.values(), *BENCH.values()]) == []


def _store_offenders(modules: dict[str, Path]) -> list[str]:
    return [
        f"{name} imports {imported}"
        for name, path in modules.items()
        if _room(name) == "store"
        for imported in _imported_modules(path)
        if imported.startswith("ragsonde.") and _room(imported) not in STORE_MAY_IMPORT
    ]


def _store_users(modules: dict[str, Path]) -> list[str]:
    """The modules outside ``store/`` that import ``ragsonde.store`` (lazily included)."""
    return sorted(
        name
        for name, path in modules.items()
        if _room(name) != "store"
        and any(
            m == "ragsonde.store" or m.startswith("ragsonde.store.")
            for m in _imported_modules(path)
        )
    )


def test_few_modules_import_the_backend():
    users = _store_users(PACKAGE)
    assert len(users) <= STORE_USERS_AT_MOST, users
    assert "ragsonde.config" not in users
    # a private module of the store's is the store's own
    private = [
        f"{name} imports {m}"
        for name, path in PACKAGE.items()
        if _room(name) != "store"
        for m in _imported_modules(path)
        if m.startswith("ragsonde.store._")
    ]
    assert private == []


def test_store_imports_nothing_above_it():
    assert _store_offenders(PACKAGE) == []


def test_the_rooms_import_each_other_without_a_circle():
    graph = _room_graph(PACKAGE)
    for (room, back), _why in KNOWN_WAYS_BACK.items():
        assert back in graph[room], f"{room} -> {back} is gone: delete it from KNOWN_WAYS_BACK"
        graph[room].discard(back)
    assert _circle(graph) == []


def test_no_two_modules_import_each_other_at_import_time():
    graph = {
        name: {m for m in _imported_modules(path, import_time_only=True) if m in PACKAGE} - {name}
        for name, path in PACKAGE.items()
    }
    assert _circle(graph) == []


def test_the_package_never_imports_bench():
    offenders = [
        f"{name} imports {imported}"
        for name, path in PACKAGE.items()
        for imported in _imported_modules(path)
        if imported == "bench" or imported.startswith("bench.")
    ]
    assert offenders == []


@pytest.fixture
def bad_package(tmp_path: Path) -> dict[str, Path]:
    """A package with every offence: a long module, a store importing tune, a circle."""
    files = {
        "ragsonde/__init__.py": "",
        "ragsonde/store/__init__.py": "def f():\n    from ragsonde.tune.variants import X\n",
        "ragsonde/tune/__init__.py": "from ragsonde.store import f\n",
        "ragsonde/tune/variants.py": "X = 1\n" * (MAX_LINES + 1),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return _modules(tmp_path, "ragsonde")


def test_the_checks_see_the_offences(bad_package: dict[str, Path], tmp_path: Path):
    assert set(bad_package) == {
        "ragsonde",
        "ragsonde.store",
        "ragsonde.tune",
        "ragsonde.tune.variants",
    }
    assert _too_long(bad_package.values(), tmp_path) == [
        f"ragsonde/tune/variants.py: {MAX_LINES + 1} lines"
    ]
    assert _store_users(bad_package) == ["ragsonde.tune"]
    assert _store_offenders(bad_package) == [
        "ragsonde.store imports ragsonde.tune.variants",
        "ragsonde.store imports ragsonde.tune.variants.X",  # ``from a import b`` names a.b too
    ]
    graph = _room_graph(bad_package)
    assert graph["store"] == {"tune"}  # a lazy import counts
    assert sorted(set(_circle(graph))) == ["store", "tune"]
    at_import = {
        name: {m for m in _imported_modules(p, import_time_only=True) if m in bad_package}
        for name, p in bad_package.items()
    }
    assert at_import["ragsonde.store"] == set()  # the lazy import runs only when called
