"""How the ONNX backend groups texts into passes of the graph (pure: no model)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragsonde.embedders.onnx import token_batches


def test_short_texts_share_a_pass_up_to_the_budget_and_long_ones_go_alone():
    lengths = [20, 300, 25, 22, 256, 21]
    passes = token_batches(lengths, budget=256, cap=64)
    assert passes[0] == [1] and passes[1] == [4]  # longest first, each alone
    assert passes[2] == [2, 3, 5, 0]  # 4 x 25 padded tokens <= 256
    assert token_batches(lengths, budget=10**6, cap=2) == [[1, 4], [2, 3], [5, 0]]
    assert token_batches([], budget=256, cap=64) == []


@given(
    st.lists(st.integers(min_value=0, max_value=600), max_size=200),
    st.integers(min_value=1, max_value=4096),
    st.integers(min_value=1, max_value=128),
)
def test_every_text_once_within_budget_and_cap(lengths, budget, cap):
    passes = token_batches(lengths, budget, cap)
    assert sorted(i for p in passes for i in p) == list(range(len(lengths)))
    for p in passes:
        assert 1 <= len(p) <= cap
        widest = max(max(lengths[i] for i in p), 1)
        assert len(p) == 1 or len(p) * widest <= budget
        assert lengths[p[0]] == max(lengths[i] for i in p)  # padded to the first
