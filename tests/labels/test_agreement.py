"""The judge's agreement statistics on fixed grades, checked against scikit-learn: Cohen's
kappa (``cohen_kappa_score``), the confusion per grade (``confusion_matrix``), and the position
bias counted by hand."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from ragsonde.labels import BenchmarkEntry, Label, agreement, position_bias
from ragsonde.labels.models import GRADES

#: (query, item) -> (human grade, LLM grade); human 0 is "not listed" on a query with labels.
FIXED = {
    ("q1", "a"): (1, 3),
    ("q1", "b"): (2, 2),
    ("q1", "c"): (0, 1),
    ("q1", "d"): (0, 0),
    ("q2", "a"): (1, 0),
    ("q2", "e"): (3, 3),
    ("q2", "f"): (0, 2),
    ("q3", "g"): (2, 1),
    ("q3", "h"): (0, 0),
    ("q3", "i"): (1, 2),
}


def _entries() -> list[BenchmarkEntry]:
    out = []
    for q in ("q1", "q2", "q3"):
        labels = []
        for (qq, item), (h, m) in FIXED.items():
            if qq != q:
                continue
            if h:  # humans list only what they found relevant
                labels.append(Label(id=item, grade=h, source="human", judge="me"))
            labels.append(Label(id=item, grade=m, source="llm", judge="local:x"))
        out.append(BenchmarkEntry(query_id=q, query=f"query {q}", labels=labels))
    # a query the humans never labelled: not compared
    out.append(
        BenchmarkEntry(
            query_id="q4", query="q4", labels=[Label(id="z", grade=3, source="llm", judge="x")]
        )
    )
    return out


@pytest.mark.parametrize("llm_from", [1, 2, 3])
def test_kappa_and_the_confusion_per_grade_match_scikit_learn(llm_from: int) -> None:
    a = agreement(_entries(), llm_from)
    human = [h for h, _ in FIXED.values()]
    llm = [m for _, m in FIXED.values()]
    binary_h = [int(h >= 1) for h in human]
    binary_m = [int(m >= llm_from) for m in llm]
    assert (a.queries, a.pairs) == (3, len(FIXED))
    assert a.kappa == pytest.approx(cohen_kappa_score(binary_h, binary_m), abs=1e-4)
    expected = confusion_matrix(human, llm, labels=[0, 1, 2, 3])
    got = np.asarray([[a.confusion[h][m] for m in GRADES] for h in GRADES])
    assert (got == expected).all()
    two = confusion_matrix(binary_h, binary_m, labels=[0, 1])
    assert (a.both_not, a.llm_only, a.human_only, a.both_relevant) == tuple(two.ravel())
    assert a.raw_agreement == pytest.approx(float(np.trace(two)) / len(FIXED), abs=1e-4)


def test_position_bias_counts_every_change_and_its_direction() -> None:
    # (query first, passage first): 2 of 6 change, one up, one down; one crosses grade 2
    pairs = [(2, 2), (0, 0), (1, 3), (3, 2), (0, 0), (2, 2)]
    p = position_bias(pairs, llm_from=2)
    assert (p.pairs, p.changed, p.higher_passage_first, p.lower_passage_first) == (6, 2, 1, 1)
    assert p.changed_share == pytest.approx(2 / 6, abs=1e-4)
    assert p.relevance_flipped == 1  # 1 -> 3 crosses it; 3 -> 2 stays relevant
    assert position_bias([]).changed_share is None
