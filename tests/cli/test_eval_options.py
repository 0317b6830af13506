"""The eval command's flags are the options model's fields: one model, built once from them."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import typer
from pydantic import Field
from typer.testing import CliRunner

from ragsonde.cli._eval_options import ELSEWHERE, eval_flags, eval_options
from ragsonde.evaluate import EvalOptions
from ragsonde.server.routes_eval import EvalRequest


def _flag_names(annotation: Any) -> list[str]:
    """The flag's names (in ``Annotated``, Typer reads the option's first argument as one)."""
    option = typing.get_args(annotation)[1]
    return [option.default, *option.param_decls]


def test_every_option_has_a_flag_or_a_shared_one():
    flags = eval_flags()
    assert set(flags) | set(ELSEWHERE) == set(EvalOptions.model_fields)
    assert _flag_names(flags["gates"].annotation) == ["--gate"]
    assert _flag_names(flags["max_recall_loss"].annotation) == ["--max-recall-loss"]


def test_a_new_option_gets_its_flag_from_the_model_alone():
    class WithKnob(EvalOptions):
        knob_size: int = Field(default=3, description="A knob.")

    flag = eval_flags(WithKnob)["knob_size"]
    assert _flag_names(flag.annotation) == ["--knob-size"]
    assert flag.default == 3
    assert typing.get_args(flag.annotation)[1].help == "A knob."


def _invoke(*args: str) -> EvalOptions:
    app = typer.Typer()
    seen: dict[str, EvalOptions] = {}

    @app.command("run")
    @eval_options("mode", "exact")
    def run(dataset: str, options: EvalOptions) -> None:
        seen["options"] = options

    @app.command("other")  # two commands: the app stays a group, as ragsonde's
    def other() -> None: ...

    result = CliRunner().invoke(app, ["run", "bench.jsonl", *args])
    assert result.exit_code == 0, result.output
    return seen["options"]


def test_the_flags_build_the_options_the_library_takes():
    got = _invoke(
        "--k",
        "10,5",
        "--gate",
        "ndcg@10>=0.5",
        "--no-throughput",
        "--mode",
        "hybrid",
        "--exact",
        "--by",
        "category",
        "--max-recall-loss",
        "0.1",
        "--queries",
        "q.tsv",
        "--relevance-by",
        "url",
        "--judged-only",
    )
    want = EvalOptions(
        k=[5, 10],
        gates=["ndcg@10>=0.5"],
        throughput=False,
        search={"mode": "hybrid", "exact": True},
        by="category",
        max_recall_loss=0.1,
        queries_file=Path("q.tsv"),
        relevance_by="url",
        judged_only=True,
    )
    assert got == want
    # the search flags not given stay unset: they inherit the settings' (ragsonde.toml)
    assert got.search.set_fields() == {"mode": "hybrid", "exact": True}
    assert _invoke() == EvalOptions()


def test_the_http_body_is_the_same_options_beside_what_to_evaluate():
    body = {"dataset": "b.jsonl", "k": [5, 10], "mode": "hybrid", "gates": ["ndcg@10>=0.5"]}
    req = EvalRequest.parse(body)
    assert req.dataset == "b.jsonl"
    assert req.options == EvalOptions(k=[5, 10], search={"mode": "hybrid"}, gates=body["gates"])
    documented = set(EvalRequest.body_schema()["properties"])
    assert set(EvalOptions.model_fields) <= documented
    assert {"dataset", "benchmark", "collection", "explain", "explain_k"} <= documented
    assert "options" not in documented


def test_the_published_schema_is_the_options_model():
    from ragsonde.evaluate.schema import get_schema

    schema = get_schema("options")
    assert set(schema["properties"]) == set(EvalOptions.model_fields)
    assert schema["additionalProperties"] is False
