""":func:`ragsonde.traffic.switching.quick_switching`: the interpreter's switch interval while
replays run, shared by nested and concurrent replays, and put back by the last one."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

from ragsonde.traffic.switching import SWITCH_INTERVAL, quick_switching


@pytest.fixture(autouse=True)
def _interval() -> Iterator[float]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield 0.005
    sys.setswitchinterval(before)


def test_the_interval_is_lowered_inside_and_restored_after() -> None:
    with quick_switching():
        assert sys.getswitchinterval() == SWITCH_INTERVAL
    assert sys.getswitchinterval() == 0.005


def test_it_is_restored_after_an_error() -> None:
    with pytest.raises(KeyError), quick_switching():
        raise KeyError("x")
    assert sys.getswitchinterval() == 0.005


def test_a_lower_interval_the_user_set_is_kept() -> None:
    sys.setswitchinterval(SWITCH_INTERVAL / 4)
    with quick_switching():
        assert sys.getswitchinterval() == SWITCH_INTERVAL / 4
    assert sys.getswitchinterval() == SWITCH_INTERVAL / 4


def test_overlapping_replays_that_end_out_of_order_restore_the_first_interval() -> None:
    """Two replays on two threads: the first starts, the second starts, the first ends (the
    second still runs: the interval stays low), the second ends (the interval found by the
    first is back, not the lowered one the second found)."""
    steps = [threading.Event() for _ in range(4)]
    seen: dict[str, float] = {}

    def second() -> None:
        steps[0].wait()
        with quick_switching():
            steps[1].set()
            steps[2].wait()
            seen["second, after the first ended"] = sys.getswitchinterval()
        steps[3].set()

    t = threading.Thread(target=second)
    t.start()
    with quick_switching():
        steps[0].set()
        steps[1].wait()
    steps[2].set()
    steps[3].wait()
    t.join()
    assert seen == {"second, after the first ended": SWITCH_INTERVAL}
    assert sys.getswitchinterval() == 0.005


def test_a_nested_block_with_a_lower_interval_lowers_it_further() -> None:
    with quick_switching():
        with quick_switching(SWITCH_INTERVAL / 2):
            assert sys.getswitchinterval() == SWITCH_INTERVAL / 2
        assert sys.getswitchinterval() == SWITCH_INTERVAL / 2  # shared until the last ends
    assert sys.getswitchinterval() == 0.005
