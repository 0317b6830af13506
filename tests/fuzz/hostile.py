"""Hostile values for the fuzzing harness (issue 33.7), and its one Hypothesis profile.

Every strategy mixes the ordinary with what breaks programs: lone surrogates (JSON carries them
as ``\\ud800`` escapes; argv as surrogate escapes of bytes that are not UTF-8), NUL bytes, very
long strings, huge, zero and negative numbers, NaN, deep nesting. :data:`FUZZ` bounds each test
(the whole harness runs in about two minutes) and makes a failure reproducible: no example
database, ``print_blob`` on, so Hypothesis prints ``@reproduce_failure`` beside the failing
example; and :func:`fuzz` runs every test with one seed per session, :data:`SEED` (random, or
``RAGSONDE_FUZZ_SEED``), which a failure names: ``RAGSONDE_FUZZ_SEED=N pytest …`` replays it.
"""

from __future__ import annotations

import os
import random
import string
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, seed, settings
from hypothesis import strategies as st

#: The harness's profile; each test sets only its number of examples.
FUZZ = settings(
    deadline=None,
    database=None,  # nothing written to .hypothesis/, and the seed is printed on failure
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)

#: The session's seed: every fuzzing test draws from it, and a failure names it.
SEED = int(os.environ.get("RAGSONDE_FUZZ_SEED") or random.SystemRandom().randrange(2**32))


def fuzz(test: Callable[[], None]) -> None:
    """Run a ``@given`` test with :data:`SEED`; a failure says how to replay it."""
    try:
        seed(SEED)(test)()
    except BaseException as e:
        e.add_note(f"fuzzing seed {SEED}: replay with RAGSONDE_FUZZ_SEED={SEED} pytest ...")
        raise


LONE_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
#: Short text: any Unicode, lone surrogates, NUL and control characters among them.
TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        LONE_SURROGATES,
        st.sampled_from(["\x00", "\n", "\r", "\t", "\u202e", "\ufeff", "%", "_", "\\", "'", '"']),
    ),
    max_size=24,
)
LONG_TEXT = st.builds(
    lambda c, n: c * n,
    st.sampled_from(["a", "é", "\x00", "\ud800"]),
    st.sampled_from([1_000, 140_000]),
)
HUGE = [0, -1, 1, 2**31, 2**63, 2**64, -(2**63) - 1, 10**30, -(10**30)]
INTEGER = st.one_of(st.sampled_from(HUGE), st.integers(-1000, 1000))
NUMBER = st.one_of(INTEGER, st.floats(allow_nan=True, allow_infinity=True))
SCALAR = st.one_of(TEXT, LONG_TEXT, NUMBER, st.booleans(), st.none())
#: Any JSON value, nested a few levels; and now and then 50 or 400 deep (``json.dumps`` of the
#: test itself stops near 1,000; deeper raw bodies are in test_fuzz_http).
JSON: st.SearchStrategy[Any] = st.one_of(
    st.recursive(
        SCALAR,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)
        ),
        max_leaves=12,
    ),
    st.builds(lambda depth, leaf: _nest(depth, leaf), st.sampled_from([50, 400]), SCALAR),
)


def _nest(depth: int, leaf: Any) -> Any:
    for i in range(depth):
        leaf = [leaf] if i % 2 else {"a": leaf}
    return leaf


#: One command-line word, as a shell passes it: text, numbers, options' look-alikes, and bytes
#: that are not UTF-8 (``os.fsdecode`` turns them into surrogate escapes, as Python's argv does).
ARG = st.one_of(
    TEXT.filter(lambda s: "\x00" not in s),  # argv cannot carry NUL: the OS ends the word there
    INTEGER.map(str),
    st.sampled_from(["nan", "inf", "-inf", "1e309", "", " ", "-", "--", "-1", "0", "=", ","]),
    st.binary(min_size=1, max_size=8).filter(lambda b: b"\x00" not in b).map(os.fsdecode),
    st.text(string.ascii_letters + "@:=,.-/", max_size=12),
    st.just("x" * 100_000),  # under the 128 KiB a Linux argv word may have
)
