"""The SDK is an optional extra: the CLI's --help (every command registered, ``mcp`` and
``eval --mcp`` included) does not import it."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support import ROOT


def test_help_does_not_import_the_sdk() -> None:
    code = (
        "import sys\n"
        "from ragsonde.cli import _register\n"
        "_register(['--help'])\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'ragsonde.mcp'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
