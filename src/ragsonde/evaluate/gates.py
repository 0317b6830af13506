"""Pass/fail gates for CI.

``ndcg@10>=0.60``, ``latency.total_ms.p95<=50``, ``integrity.problems==0``.

A gate on an estimated metric (``eval --estimate``: ``metrics_ci``) tests its 95 % interval's
end: ``>=``/``>`` the lower end, ``<=``/``<`` the upper. A gate on a metric of a benchmark
some of whose labels a machine made (``benchmark.machine_labels``: generated, or an LLM
judge's) passes only that way: on the raw score it fails, and says why.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    from ragsonde.evaluate.report import EvalReport, GateResult

__all__ = ["OPERATORS", "Gate", "parse_gate"]

#: Comparison -> function; longest first so ``>=`` is not read as ``>``.
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}
_GATE = re.compile(
    r"^\s*(?P<path>[A-Za-z_][\w@.]*)\s*(?P<op>" + "|".join(map(re.escape, OPERATORS)) + r")\s*"
    r"(?P<value>-?\d+(?:\.\d+)?)\s*$"
)


@dataclass(frozen=True)
class Gate:
    path: str
    op: str
    threshold: float

    def __str__(self) -> str:
        """The gate as :func:`parse_gate` reads it back: the threshold in plain decimals
        (``1e+06`` is not a number a gate takes)."""
        text = format(Decimal(repr(self.threshold)), "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return f"{self.path}{self.op}{text}"

    def evaluate(self, report: EvalReport) -> GateResult:
        """The gate against a report: a metric name, or a path into its JSON."""
        from ragsonde.evaluate.report import GateResult

        estimated = (report.metrics_ci or {}).get(self.path)
        if estimated is not None and self.op in {">=", ">", "<=", "<"}:
            # an estimated metric passes only when its whole 95 % interval clears the threshold
            upper = self.op.startswith("<")
            return GateResult(
                gate=str(self),
                value=estimated.high if upper else estimated.low,
                passed=estimated.passes(self.op, self.threshold),
                on=f"the {'upper' if upper else 'lower'} end of the 95 % interval "
                f"({estimated.method}, {estimated.n_labeled} labelled queries)",
            )
        machine = report.benchmark.machine_labels
        if machine and self.path in report.metrics:  # never on a machine's raw score
            return GateResult(
                gate=str(self),
                value=report.metrics[self.path],
                passed=False,
                on=_refused(machine, sum(1 for r in report.per_query.values() if r.relevant)),
            )
        value = _lookup(report.model_dump(mode="json"), self.path)
        passed = value is not None and OPERATORS[self.op](value, self.threshold)
        return GateResult(gate=str(self), value=value, passed=bool(passed))


def _refused(machine: Mapping[str, str], labelled: int) -> str:
    """Why a gate on the raw score of machine-made labels fails."""
    who = ", ".join(sorted(set(machine.values()))[:3])
    return (
        f"refused: a machine made the labels of {len(machine)} of the {labelled} labelled "
        f"queries ({who}), and a gate on a metric of machine-made labels passes only through "
        "the 95 % interval of an estimate (PPI), never on the raw score. Judge some queries "
        "(`ragsonde judge`, or the page's Judge view) and evaluate with --estimate"
    )


def _lookup(report: Mapping[str, Any], path: str) -> float | None:
    metrics = report.get("metrics", {})
    if path in metrics:
        return float(metrics[path])
    node: Any = report
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise QueryValidationError(
                f"Gate '{path}' names nothing in the report. Use a metric "
                f"({', '.join(list(metrics)[:6])}, …) or a path like latency.total_ms.p95 or "
                "integrity.problems.",
                field="gate",
            )
        node = node[part]
    return float(node) if isinstance(node, int | float) else None


def parse_gate(text: str) -> Gate:
    """``"ndcg@10>=0.6"`` -> :class:`Gate`; a malformed gate says what a good one looks like."""
    m = _GATE.match(text)
    if m is None:
        raise QueryValidationError(
            f"Bad gate {text!r}: write METRIC OP NUMBER, e.g. 'ndcg@10>=0.60' or "
            f"'latency.total_ms.p95<=50' (operators: {' '.join(OPERATORS)}).",
            field="gate",
        )
    return Gate(m.group("path"), m.group("op"), float(m.group("value")))
