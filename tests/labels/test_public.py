"""ragsonde.labels lists its public names once, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ragsonde.labels as labels


def test_all_lists_exactly_the_public_names():
    public = {
        n
        for n, v in vars(labels).items()
        if not n.startswith("_") and str(getattr(v, "__module__", "")).startswith("ragsonde.labels")
    }
    assert public <= set(labels.__all__), sorted(public - set(labels.__all__))
    assert all(hasattr(labels, n) for n in labels.__all__)


@pytest.mark.slow  # a process
def test_importing_labels_loads_no_heavy_library():
    code = (
        "import sys, ragsonde.labels; "
        "print(sorted(m for m in ('sklearn', 'torch', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
