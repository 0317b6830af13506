"""The evaluation flags of ``ragsonde eval``, made from :class:`~ragsonde.evaluate.EvalOptions`.

:func:`eval_options` adds one flag per option field to a command and hands the command one
``options`` argument, the model built from the flags (and the search flags, which become
``options.search``). A field added to the model gets its flag here with no other change: its
name (``--max-recall-loss``), its type and its description. A few fields have a flag written by
hand (:data:`_OWN`: another name or a text form, ``--gate``, ``--k 1,5,10``), and two come from
flags every command shares (:data:`_ELSEWHERE`). A test fails when a field has no flag.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import typer
from pydantic.fields import FieldInfo

from ragsonde.cli._search import search_options
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.options import EvalOptions

__all__ = ["ELSEWHERE", "eval_flags", "eval_options"]

_R = TypeVar("_R")


def _ks(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise QueryValidationError(
            f"k: {text!r} is not a list of cutoffs; give them like 1,3,5,10,100.", field="k"
        ) from None


@dataclass(frozen=True)
class Flag:
    """One option's flag: the command's parameter, its Typer type, its default, and how the
    value given becomes the option's."""

    param: str
    annotation: Any
    default: Any
    value: Callable[[Any], Any] | None = None  # None: the value as given

    def option(self, given: Any) -> Any:
        return given if self.value is None else self.value(given)


#: Option fields whose flag is written by hand: a name or a text form the field's own would
#: not give.
_OWN: dict[str, Flag] = {
    "k": Flag(
        "k",
        Annotated[str, typer.Option("--k", help="Cutoffs, comma-separated.")],
        "1,3,5,10,100",
        _ks,
    ),
    "gates": Flag(
        "gate",
        Annotated[
            list[str] | None,
            typer.Option("--gate", help="e.g. 'ndcg@10>=0.60', 'latency.total_ms.p95<=50'."),
        ],
        None,
        lambda v: v or [],
    ),
    "throughput": Flag(
        "no_throughput",
        Annotated[bool, typer.Option("--no-throughput", help="Skip the batched-throughput pass.")],
        False,
        lambda v: not v,
    ),
    "queries_file": Flag(
        "queries",
        Annotated[
            Path | None,
            typer.Option(
                "--queries", help="Queries for TREC qrels: TSV (id<TAB>text) or BEIR queries.jsonl."
            ),
        ],
        None,
    ),
}

#: Option fields given by flags every command shares, not by a flag of their own.
ELSEWHERE: dict[str, str] = {
    "search": "the search flags (ragsonde.cli._search), the same in query, batch and explain",
    "mapping": "--field FIELD=PATH, the mapping setting every command reads",
}


def _derived(name: str, info: FieldInfo) -> Flag:
    """The flag a field gets from the model alone: ``--field-name``, its type, its help."""
    flag = "--" + name.replace("_", "-")
    kind = info.annotation
    help_text = info.description or ""
    choices = typing.get_args(kind) if typing.get_origin(kind) is typing.Literal else ()
    if choices:  # Typer reads a str; the model checks the choice and names the field
        kind = str
        help_text = f"{help_text.rstrip('.')}: {' | '.join(map(str, choices))}."
    if kind is bool:
        return Flag(name, Annotated[bool, typer.Option(flag, help=help_text)], info.default)
    optional = type(None) in typing.get_args(kind) or isinstance(kind, types.UnionType)
    return Flag(
        name,
        Annotated[kind, typer.Option(flag, help=help_text)],
        info.default if not optional else None,
    )


def eval_flags(model: type[EvalOptions] = EvalOptions) -> dict[str, Flag]:
    """Each option field's flag, by field name (those of :data:`ELSEWHERE` left out)."""
    return {
        name: _OWN.get(name) or _derived(name, info)
        for name, info in model.model_fields.items()
        if name not in ELSEWHERE
    }


def eval_options(*search: str) -> Callable[[Callable[..., _R]], Callable[..., _R]]:
    """Add the evaluation flags, and the search flags ``search``, to a command that declares
    ``options: EvalOptions``; it receives the options the flags make.

    ``mapping`` is not among them: the command's ``--field`` is the mapping setting, as in
    every command that reads a collection."""
    flags = eval_flags()

    def decorate(fn: Callable[..., _R]) -> Callable[..., _R]:
        sig = inspect.signature(fn)
        if "options" not in sig.parameters:
            raise TypeError(f"{fn.__name__} must take an `options` parameter")

        @functools.wraps(fn)
        def command(*args: Any, search: dict[str, Any] | None = None, **kwargs: Any) -> _R:
            given = {
                name: flag.option(kwargs.pop(flag.param, flag.default))
                for name, flag in flags.items()
            }
            options = EvalOptions(**given, search=search or {})
            return fn(*args, options=options, **kwargs)

        hints = get_type_hints(fn, include_extras=True)
        kept = [
            p.replace(annotation=hints.get(p.name, p.annotation))
            for p in sig.parameters.values()
            if p.name != "options"
        ]
        added = [
            inspect.Parameter(
                f.param, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.annotation
            )
            for f in flags.values()
        ]
        search_param = inspect.Parameter(
            "search", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=dict[str, Any] | None
        )
        command.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=[*kept, *added, search_param], return_annotation=sig.return_annotation
        )
        own = {k: v for k, v in hints.items() if k != "options"}
        command.__annotations__ = {
            **own,
            **{f.param: f.annotation for f in flags.values()},
            "search": dict[str, Any] | None,
        }
        return search_options(*search)(command)

    return decorate
