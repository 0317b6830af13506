"""The bench package's commands: what RESULTS.md prints is what runs from the repo's root
(``python -m bench.<name>``), for new results and for results recorded before bench/ was a
package; and where a run's results go is decided by its parsed ``--quick``, not at import."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench._common import RESULTS_ENV, ROOT, module_command, results_dir
from bench.report import current_command


@pytest.mark.parametrize(
    ("recorded", "typed"),
    [
        ("/work/elsewhere/bench/bench_eval.py", "python -m bench.bench_eval"),
        (
            "python /home/x/clone/bench/bench_store.py --merge",
            "python -m bench.bench_store --merge",
        ),
        ("python bench/bench_embed.py --rounds 1", "python -m bench.bench_embed --rounds 1"),
        ("python bench_hostile.py", "python -m bench.bench_hostile"),
        ("python -m bench.bench_tune --quick", "python -m bench.bench_tune --quick"),
        ("an earlier run", "an earlier run"),
    ],
)
def test_recorded_commands_read_as_typed_today(recorded: str, typed: str):
    assert current_command(recorded) == typed


def test_every_module_a_command_names_exists():
    for module in ("bench.bench_store", "bench._store_worker", "bench.report", "bench.run_all"):
        cmd = module_command(module, "--help")
        assert cmd[1:3] == ["-m", module] and cmd[-1] == "--help"
        assert (ROOT / Path(*module.split("."))).with_suffix(".py").is_file()


def test_results_go_where_the_parsed_flag_says(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv(RESULTS_ENV, raising=False)
    assert results_dir(False) == ROOT / "bench" / "results"
    assert results_dir(True) == ROOT / "bench" / "results" / "quick"
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path))
    assert results_dir(True) == results_dir(False) == tmp_path
