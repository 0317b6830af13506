"""The documentation site: it builds with ``mkdocs build --strict``, the README stays a landing
page, and every shell command on the site runs as written.

The README and the site's pages are read alike. A fenced ``bash`` block (and each ``$ `` line of a ``console`` block) is a command a reader will
paste. Each page runs in a folder of its own, block after block, like a reader following it: the
working folder holds ``.venv`` (the repository's, so ``source .venv/bin/activate`` works as the
quickstart says), ``../shared`` (the benchmark data, where the pages say it is) and a fresh
``RAGSONDE_HOME``. What a page needs, the page sets up itself (``python -m ragsonde.samples .``).
A block that cannot run here is marked on the line above it, with one of :data:`REASONS`:
``<!-- docs-test: skip needs a server -->``; the test fails on a mark without a known reason.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import DATA, ROOT

pytestmark = pytest.mark.slow

DOCS = ROOT / "docs"
#: Why a block may not run in the test: each names what is missing here.
REASONS = (
    "needs a server",  # a Qdrant server, or a ragsonde server left running in the background
    "needs an API key",  # a paid remote API (OpenAI, Cohere)
    "runs for minutes",  # a whole-corpus run: bench/ runs it and RESULTS.md keeps its figures
)
_MARK = re.compile(r"<!--\s*docs-test:\s*skip\s+(.*?)\s*-->")
_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    text: str
    skip: str | None


def blocks(path: Path) -> list[Block]:
    """The shell blocks of one page, in order, with their skip marks."""
    out: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent, lang = fence.group(1), fence.group(2)
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        if lang not in ("bash", "console"):
            continue
        mark = None
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0 and (m := _MARK.search(lines[j])):
            mark = m.group(1)
        text = "\n".join(body)
        if lang == "console":
            text = "\n".join(line[2:] for line in body if line.startswith("$ "))
        out.append(Block(path.name, start + 1, lang, text, mark))
    return out


PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def test_every_skip_names_a_known_reason():
    bad = [
        f"{b.page}:{b.line}: {b.skip!r}"
        for page in PAGES
        for b in blocks(page)
        if b.skip is not None and not b.skip.startswith(REASONS)
    ]
    assert not bad, f"docs-test marks with no known reason ({REASONS}): {bad}"


def test_readme_is_a_landing_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; the rest belongs on the site"
    text = "\n".join(lines[:40])
    assert "make demo" in text and "make test" in text


def test_site_builds_strict(tmp_path: Path):
    pytest.importorskip("mkdocs")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.stem)
def test_page_commands_run(page: Path, tmp_path: Path):
    if not DATA.is_dir():
        pytest.skip(f"no benchmark data at {DATA}")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".venv").symlink_to(Path(sys.prefix))
    (tmp_path / "shared").symlink_to(DATA.parent)
    bin_dir = str(Path(sys.executable).parent)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RAGSONDE_", "QDRANT_", "OTEL_"))
    }
    env.update(
        PATH=bin_dir + os.pathsep + env.get("PATH", ""),
        RAGSONDE_HOME=str(work / ".ragsonde"),
        PYTHONPATH=str(ROOT / "src"),
        COLUMNS="200",
    )
    bash = shutil.which("bash") or "/bin/bash"
    for n, block in enumerate(blocks(page)):
        if block.skip is not None:
            continue
        out, err = tmp_path / f"{n}.out", tmp_path / f"{n}.err"
        # Files, not pipes, and a session of its own: a block that leaves a process behind
        # fails on its own output instead of hanging the test, and the process is ended.
        with out.open("w") as stdout, err.open("w") as stderr:
            proc = subprocess.Popen(
                [bash, "-e", "-o", "pipefail", "-c", block.text],
                cwd=work,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                text=True,
                start_new_session=True,
            )
            try:
                code = proc.wait(timeout=900)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
        assert code == 0, (
            f"{block.page}:{block.line} failed (exit {code}):\n{block.text}\n"
            f"--- stdout\n{out.read_text()[-3000:]}\n--- stderr\n{err.read_text()[-3000:]}"
        )
