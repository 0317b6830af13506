"""The promises of docs/SECURITY.md that no other test holds: the API key on every route but the
open ones (a route added later included), and loopback by default."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import typer
from pydantic import SecretStr
from starlette.routing import Mount

from ragsonde.server import create_app
from ragsonde.server.app import ROUTERS
from tests.support import run_server, serve_process

#: What answers without the key: health for orchestrators, the page (it asks for the key
#: itself), and the API docs.
OPEN_PATHS = {"/healthz", "/readyz", "/", "/docs", "/docs/oauth2-redirect", "/redoc"}
OPEN_PATHS |= {"/openapi.json"}
OPEN_ROUTERS = {"ragsonde.server.routes_health", "ragsonde.server.routes_page"}
OPEN_MOUNTS = {"/static-offline-docs"}  # Swagger UI's own files, bundled


def test_every_router_but_health_and_the_page_is_protected():
    assert {spec.module for spec in ROUTERS if not spec.protected} == OPEN_ROUTERS


@pytest.fixture(scope="module")
def locked(server_settings, retriever, tmp_path_factory) -> Iterator[tuple[str, list[str], Path]]:
    """A server with an API key and a home of its own (the store is the shared one)."""
    home = tmp_path_factory.mktemp("locked") / "home"
    settings = server_settings.model_copy(
        update={"api_key": SecretStr("k3y-of-the-server"), "home": home}
    )
    app = create_app(settings, retriever)
    mounts = [r.path for r in app.routes if isinstance(r, Mount)]
    with run_server(app) as url:
        yield url, mounts, home


@pytest.mark.slow
def test_every_route_and_mount_but_the_open_ones_needs_the_key(locked):
    url, mounts, _ = locked
    doc = httpx.get(f"{url}/openapi.json").json()
    checked = 0
    for path, item in doc["paths"].items():
        if path in OPEN_PATHS:
            continue
        for method in item:
            target = re.sub(r"\{[^}]+\}", "x", path)
            r = httpx.request(method.upper(), f"{url}{target}", json={}, timeout=30)
            assert r.status_code == 401, (method, path, r.status_code, r.text[:200])
            assert r.json()["error"]["code"] == "AUTH_ERROR"
            checked += 1
    assert checked >= 17  # every /v1/ operation, at the time of writing
    for mount in set(mounts) - OPEN_MOUNTS:  # e.g. a future /mcp mounted as an ASGI app
        for sub in (mount, f"{mount}/"):
            r = httpx.post(f"{url}{sub}", json={}, timeout=30)
            assert r.status_code == 401, (sub, r.status_code)


def test_serve_listens_on_loopback_by_default():
    from ragsonde.cli import _register, app

    _register()
    serve = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    host = next(p for p in serve.params if p.name == "host")
    assert host.default == "127.0.0.1"


def _listening(port: int) -> set[str]:
    """The local addresses listening on ``port`` (IPv4, from /proc/net/tcp)."""
    out = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if int(hex_port, 16) == port and state == "0A":  # LISTEN
            out.add(".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return out


@pytest.mark.slow  # starts a server process
def test_a_started_server_listens_on_loopback_only(tmp_path: Path):
    with serve_process(tmp_path / "home") as url:
        port = int(url.rsplit(":", 1)[1])
        assert _listening(port) == {"127.0.0.1"}


BENCH = [
    {
        "query_id": "a",
        "query": "how does a laser rangefinder measure distance",
        "relevant": ["lidar"],
    },
    {"query_id": "b", "query": "why does my heading drift over time", "relevant": ["imu"]},
]
KEY = {"X-API-Key": "k3y-of-the-server"}


def _files(home: Path) -> set[str]:
    return {str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_an_eval_job_writes_its_report_files_and_the_history_only_never_the_key(
    locked, server_settings
):
    url, _, root = locked
    with httpx.Client(base_url=url, headers=KEY, timeout=120) as client:
        r = client.post("/v1/eval", json={"benchmark": BENCH})
        assert r.status_code == 202, r.text
        job_id = r.json()["job_id"]
        for _ in range(600):
            job = client.get(f"/v1/eval/{job_id}").json()
            if job["status"] not in {"queued", "running"}:
                break
            time.sleep(0.2)
        assert job["status"] == "done", job
    written = _files(root)
    reports = {f"eval-reports/{job_id}{ext}" for ext in (".json", ".html", ".benchmark.jsonl")}
    assert reports <= written
    others = written - reports
    assert all(f.startswith("eval-reports/") for f in others), others  # other jobs' reports
    # The run is recorded in the history of the workspace's home (under `ragsonde serve`, the
    # same home; here the shared store's).
    store_home = Path(server_settings.home)
    assert (store_home / "history.sqlite").is_file()
    for folder, name in [(root, n) for n in written] + [(store_home, "history.sqlite")]:
        assert b"k3y-of-the-server" not in (folder / name).read_bytes(), name


@pytest.mark.slow
def test_uploaded_rows_are_bounded(locked):
    url, _, _ = locked
    rows = [{"query": "q", "relevant": ["a"]}] * 10_001
    r = httpx.post(f"{url}/v1/eval", json={"benchmark": rows}, headers=KEY, timeout=60)
    assert r.status_code in {413, 422}, r.text
    assert r.json()["error"]["code"] == "VALIDATION_ERROR"
