"""Every search setting through every surface: the value set is the value that ran.

Each case sets one search parameter (with what it needs beside it: ``fusion`` needs hybrid) on
one surface, runs a real query or evaluation on a real embedded collection with the real model,
and reads back from the response or report itself that the parameter ran with that value, and,
where the results can show it, that they obey it (``top_k`` results, scores above the
threshold, BM25 or RRF scores). Then the precedence: flag > environment > file > default.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import tomli_w
from typer.testing import CliRunner

from ragsonde.config import Settings, load_settings
from ragsonde.evaluate import EvalOptions
from ragsonde.ingest import IngestOptions, ingest
from ragsonde.models import Query
from ragsonde.retriever import Retriever
from ragsonde.samples import robotics_docs
from ragsonde.server import create_app
from ragsonde.testing.pytest_plugin import retrieval_gates
from ragsonde.workspace import Workspace
from tests.support import evaluate_in, run_server

pytestmark = pytest.mark.slow

QUESTION = "GPS satellite fix accuracy"
BENCH = [
    {
        "query_id": "a",
        "query": "how does a laser rangefinder measure distance",
        "relevant": ["lidar"],
    },
    {"query_id": "b", "query": "why does my heading drift over time", "relevant": ["imu"]},
    {"query_id": "c", "query": QUESTION, "relevant": ["gps"]},
]

#: One case per setting: what is set, and what the results must show when it ran.
CASES: dict[str, tuple[dict[str, Any], Callable[[list[dict[str, Any]]], bool]]] = {
    "mode": ({"mode": "sparse"}, lambda rs: rs[0]["raw_score"] > 1.0),  # BM25, not a cosine
    "fusion": (
        {"mode": "hybrid", "fusion": "rrf", "rrf_k": 60},
        lambda rs: max(r["raw_score"] for r in rs) <= 2 / 60 + 1e-6,  # RRF sums 1/(60 + rank)
    ),
    "exact": ({"exact": True}, lambda rs: len(rs) > 0),
    "hnsw_ef": ({"hnsw_ef": 77}, lambda rs: len(rs) > 0),
    "score_threshold": (
        {"score_threshold": 0.42},
        lambda rs: all(r["similarity_score"] >= 0.42 for r in rs),
    ),
    "top_k": ({"top_k": 2}, lambda rs: len(rs) == 2),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """The robotics docs in ``docs``, dense and BM25, in an embedded home (then closed, so
    every surface opens it as a user would)."""
    home = tmp_path_factory.mktemp("surfaces") / "home"
    settings = Settings(home=home, collection="docs")
    with Workspace(settings, embedder=embedder) as ws:
        ingest(str(robotics_docs()), workspace=ws, options=IngestOptions(sparse=True))
    return home


@pytest.fixture(scope="module")
def bench_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bench") / "bench.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in BENCH), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No setting from the machine: no ragsonde.toml in the cwd, no RAGSONDE_* variable."""
    import os

    monkeypatch.chdir(tmp_path)
    for var in list(os.environ):
        if var.startswith("RAGSONDE_") or var.startswith("QDRANT_"):
            monkeypatch.delenv(var)


def _cli(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    import ragsonde.cli
    from ragsonde.cli.app import app

    ragsonde.cli._register()
    out = CliRunner().invoke(app, list(args), env=env or {})
    assert out.exit_code == 0, out.stdout + out.stderr
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def _flags(values: dict[str, Any]) -> list[str]:
    names = {"score_threshold": "--threshold"}
    out: list[str] = []
    for key, value in values.items():
        flag = names.get(key, "--" + key.replace("_", "-"))
        out += [flag] if value is True else [flag, str(value)]
    return out


def _response(resp: Any) -> dict[str, Any]:
    data: dict[str, Any] = resp.model_dump(mode="json") if hasattr(resp, "model_dump") else resp
    assert data["status"] == "success", data.get("error")
    return data


def _settings(home: Path, values: dict[str, Any]) -> Settings:
    return Settings(home=home, collection="docs", search=values)


def _wait(api: httpx.Client, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job: dict[str, Any] = api.get(f"/v1/eval/{job_id}").json()
        if job["status"] in {"done", "error", "cancelled"}:
            assert job["status"] == "done", job["error"]
            return job
        time.sleep(0.2)
    raise AssertionError("the evaluation job did not finish")


@pytest.fixture
def server(home: Path) -> Iterator[Callable[[dict[str, Any]], httpx.Client]]:
    """``server(values)``: a real HTTP server on loopback whose settings set ``values``."""
    stack: list[Any] = []

    def start(values: dict[str, Any]) -> httpx.Client:
        ctx = run_server(create_app(_settings(home, values)))
        url = ctx.__enter__()
        stack.append(ctx)
        client = httpx.Client(base_url=url, timeout=60)
        stack.append(client)
        return client

    yield start
    for item in reversed(stack):
        if isinstance(item, httpx.Client):
            item.close()
        else:
            item.__exit__(None, None, None)


# -- the query surfaces: a response, whose results can show the setting ran --------------------
def q_retriever_dict(home: Path, v: dict[str, Any], _: Any) -> dict[str, Any]:
    with Retriever(_settings(home, v)) as r:
        return _response(r.retrieve({"query": QUESTION}))


def q_retriever_query(home: Path, v: dict[str, Any], _: Any) -> dict[str, Any]:
    with Retriever(_settings(home, v)) as r:
        return _response(r.retrieve(Query(query_text=QUESTION)))


def q_query_fields(home: Path, v: dict[str, Any], _: Any) -> dict[str, Any]:
    """Set on the query itself: contract fields at the top, the rest in its search block."""
    contract = {k: v[k] for k in ("mode", "top_k", "score_threshold") if k in v}
    rest = {k: x for k, x in v.items() if k not in contract}
    with Retriever(Settings(home=home, collection="docs")) as r:
        return _response(r.retrieve(Query(query_text=QUESTION, search=rest or None, **contract)))


def q_workspace(home: Path, v: dict[str, Any], _: Any) -> dict[str, Any]:
    with Workspace(home=home, collection="docs", search=v) as ws:
        return _response(Retriever(workspace=ws).retrieve({"query": QUESTION}))


def q_cli_flag(home: Path, v: dict[str, Any], _: Any) -> dict[str, Any]:
    return _response(
        _cli("query", QUESTION, "--home", str(home), "-c", "docs", "--json", *_flags(v))
    )


def q_env(home: Path, v: dict[str, Any], _: Any) -> dict[str, Any]:
    env = {
        f"RAGSONDE_SEARCH__{k.upper()}": str(x).lower() if x is True else str(x)
        for k, x in v.items()
    }
    return _response(_cli("query", QUESTION, "--home", str(home), "-c", "docs", "--json", env=env))


def q_toml(home: Path, v: dict[str, Any], _: Any) -> dict[str, Any]:
    path = home.parent / "surfaces.toml"
    path.write_text(tomli_w.dumps({"collection": "docs", "search": v}), encoding="utf-8")
    with Retriever(load_settings(config=path, home=home)) as r:
        return _response(r.retrieve({"query": QUESTION}))


def q_http_server_setting(home: Path, v: dict[str, Any], server: Any) -> dict[str, Any]:
    api = server(v)
    return _response(api.post("/v1/query", json={"query": QUESTION}).json())


def q_http_body(home: Path, v: dict[str, Any], server: Any) -> dict[str, Any]:
    api = server({})
    contract = {k: v[k] for k in ("mode", "top_k", "score_threshold") if k in v}
    rest = {k: x for k, x in v.items() if k not in contract}
    body = {"query": QUESTION, **contract, **({"search": rest} if rest else {})}
    return _response(api.post("/v1/query", json=body).json())


QUERY_SURFACES = [
    q_retriever_dict,
    q_retriever_query,
    q_query_fields,
    q_workspace,
    q_cli_flag,
    q_env,
    q_toml,
    q_http_server_setting,
    q_http_body,
]


@pytest.mark.parametrize("surface", QUERY_SURFACES, ids=lambda f: f.__name__[2:])
@pytest.mark.parametrize("setting", list(CASES))
def test_a_query_runs_the_setting_given(
    home: Path, server: Any, surface: Any, setting: str
) -> None:
    values, shows = CASES[setting]
    resp = surface(home, values, server)
    for key, value in values.items():
        assert resp["search"][key] == value, (surface.__name__, key, resp["search"])
    assert shows(resp["results"]), (surface.__name__, setting, resp["results"])
    assert resp["top_k_requested"] == values.get("top_k", 5)


# -- the evaluation surfaces: a report, whose search block says what ran ---------------------
GATES = ["hit_rate@3>=0.0"]


def e_library(home: Path, v: dict[str, Any], bench: Path, _: Any) -> dict[str, Any]:
    report = evaluate_in(
        bench,
        settings=_settings(home, v),
        options=EvalOptions(k=[1, 3], throughput=False, gates=GATES),
    )
    return report.model_dump(mode="json")


def e_options(home: Path, v: dict[str, Any], bench: Path, _: Any) -> dict[str, Any]:
    """Set in the options (an HTTP body's shape), over default settings, with gates."""
    report = evaluate_in(
        bench,
        settings=Settings(home=home, collection="docs"),
        options=EvalOptions(k=[1, 3], throughput=False, search=v, gates=GATES),
    )
    return report.model_dump(mode="json")


def e_pytest_plugin(home: Path, v: dict[str, Any], bench: Path, _: Any) -> dict[str, Any]:
    return retrieval_gates(bench, GATES, settings=_settings(home, v), k=[1, 3]).model_dump(
        mode="json"
    )


def e_cli(home: Path, v: dict[str, Any], bench: Path, _: Any) -> dict[str, Any]:
    args = ["eval", str(bench), "--home", str(home), "-c", "docs", "--k", "1,3"]
    return _cli(*args, "--no-throughput", "--json", *_flags(v))


def e_http(home: Path, v: dict[str, Any], bench: Path, server: Any) -> dict[str, Any]:
    api = server(v)
    job = api.post("/v1/eval", json={"benchmark": BENCH, "k": [1, 3]}).json()
    report: dict[str, Any] = _wait(api, job["job_id"])["report"]
    return report


def e_http_gates(home: Path, v: dict[str, Any], bench: Path, server: Any) -> dict[str, Any]:
    api = server(v)
    job = api.post("/v1/eval", json={"benchmark": BENCH, "k": [1, 3], "gates": GATES}).json()
    report: dict[str, Any] = _wait(api, job["job_id"])["report"]
    assert report["gates"][0]["passed"] is True
    return report


EVAL_SURFACES = [e_library, e_options, e_pytest_plugin, e_cli, e_http, e_http_gates]


@pytest.mark.parametrize("surface", EVAL_SURFACES, ids=lambda f: f.__name__[2:])
@pytest.mark.parametrize("setting", [s for s in CASES if s != "top_k"])  # eval's depth is k
def test_an_evaluation_runs_the_setting_given(
    home: Path, bench_file: Path, server: Any, surface: Any, setting: str
) -> None:
    values, _ = CASES[setting]
    report = surface(home, values, bench_file, server)
    ran = report["search"]["params"]
    for key, value in values.items():
        assert ran[key] == value, (surface.__name__, key, ran)
    assert report["search"]["mode"] == values.get("mode", "dense")
    assert report["search"]["exact"] is values.get("exact", False)
    assert report["search"]["score_threshold"] == values.get("score_threshold", 0.0)


def test_http_eval_on_a_hybrid_server_matches_the_cli(
    home: Path, bench_file: Path, server: Any
) -> None:
    """The first reproduction: a server set to hybrid evaluates hybrid, with the CLI's figures."""
    over_http = e_http(home, {"mode": "hybrid"}, bench_file, server)
    on_cli = e_cli(home, {"mode": "hybrid"}, bench_file, server)
    assert over_http["search"]["mode"] == "hybrid" == on_cli["search"]["mode"]
    assert over_http["search"]["fusion"] == on_cli["search"]["fusion"] == "dbsf"
    assert over_http["metrics"] == on_cli["metrics"]
    dense = e_cli(home, {}, bench_file, server)
    assert dense["search"]["mode"] == "dense"
    assert [r["retrieved"] for r in dense["per_query"].values()] != [
        r["retrieved"] for r in on_cli["per_query"].values()
    ]


def test_precedence_flag_over_env_over_file_over_default(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "tuned.toml"  # not ./ragsonde.toml, which is read without --config
    path.write_text('collection = "docs"\n[search]\nhnsw_ef = 11\n', encoding="utf-8")
    args = ["query", QUESTION, "--home", str(home), "--json"]
    env = {"RAGSONDE_SEARCH__HNSW_EF": "22"}
    assert _cli(*args, "--config", str(path), "--hnsw-ef", "33", env=env)["search"]["hnsw_ef"] == 33
    assert _cli(*args, "--config", str(path), env=env)["search"]["hnsw_ef"] == 22
    assert _cli(*args, "--config", str(path))["search"]["hnsw_ef"] == 11
    assert _cli(*args, "-c", "docs")["search"]["hnsw_ef"] is None
    # and `ragsonde config --json` says where each came from
    shown = _cli("config", "--config", str(path), "--json", env=env)
    by_key = {row["key"]: row for row in shown["settings"]}
    assert by_key["search.hnsw_ef"]["value"] == 22
    assert (by_key["search.hnsw_ef"]["source"], by_key["search.hnsw_ef"]["where"]) == (
        "env",
        "RAGSONDE_SEARCH__HNSW_EF",
    )
    assert (by_key["collection"]["source"], by_key["collection"]["where"]) == ("file", str(path))
    assert by_key["search.mode"]["source"] == "default"


def test_a_query_objects_unset_fields_inherit_the_settings(home: Path) -> None:
    """The second reproduction: ``Query`` objects and dicts run the same search."""
    with Retriever(_settings(home, {"mode": "hybrid"})) as r:
        as_dict = r.retrieve({"query": QUESTION})
        as_query = r.retrieve(Query(query_text=QUESTION))
        told = r.retrieve(Query(query_text=QUESTION, mode="dense"))
    assert as_dict.search is not None and as_query.search is not None and told.search is not None
    assert as_dict.search.mode == as_query.search.mode == "hybrid" and told.search.mode == "dense"
    assert [x.chunk_id for x in as_dict.results] == [x.chunk_id for x in as_query.results]
    assert [x.raw_score for x in as_dict.results] != [x.raw_score for x in told.results]


def test_an_index_the_collection_was_not_built_with_is_named_in_a_warning(
    home: Path, bench_file: Path, tmp_path: Path
) -> None:
    """The third reproduction: a tuned config whose [index] differs from the collection's build
    warns, naming each difference and the command that applies it; [search] still runs."""
    path = tmp_path / "tuned.toml"
    path.write_text(
        tomli_w.dumps(
            {
                "collection": "docs",
                "search": {"mode": "hybrid"},
                "index": {"bm25_k1": 0.9, "bm25_b": 0.4, "hnsw_m": 16},
            }
        ),
        encoding="utf-8",
    )
    args = ["eval", str(bench_file), "--home", str(home), "--k", "1,3", "--no-throughput"]
    report = _cli(*args, "--config", str(path), "--json")
    warned = [w for w in report["warnings"] if w.startswith("index.")]
    assert len(warned) == 2, report["warnings"]  # hnsw_m 16 is what the collection has
    assert "index.bm25_b = 0.4" in warned[0] and "bm25_b = 0.75" in warned[0]
    assert "index.bm25_k1 = 0.9" in warned[1] and "bm25_k1 = 1.2" in warned[1]
    assert all("tune --apply" in w for w in warned)
    assert report["search"]["mode"] == "hybrid"
    built = report["search"]["collection_index"]
    assert (built["bm25_k1"], built["bm25_b"], built["hnsw_m"]) == (1.2, 0.75, 16)


def test_inspect_takes_the_collection_as_an_argument_and_shows_its_bm25(home: Path) -> None:
    """The fourth reproduction: `ragsonde inspect mydocs`, as the README writes it."""
    import ragsonde.cli
    from ragsonde.cli.app import app

    ragsonde.cli._register()
    out = CliRunner().invoke(app, ["inspect", "docs", "--home", str(home)])
    assert out.exit_code == 0, out.stdout + out.stderr
    assert "docs (edge)" in out.stdout
    assert "BM25 k1=1.2 b=0.75 title_weight=0 language=english" in out.stdout
    as_json = _cli("inspect", "docs", "--home", str(home), "--json")
    assert as_json["bm25"] == {"k1": 1.2, "b": 0.75, "title_weight": 0, "language": "english"}
    twice = CliRunner().invoke(app, ["inspect", "docs", "-c", "other", "--home", str(home)])
    assert twice.exit_code == 2 and "named twice" in twice.stdout + twice.stderr
