"""The promises of docs/SECURITY.md that no other test holds: the API key on every route but the
open ones (a route added later included), and loopback by default."""

from __future__ import annotations

import re
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
def locked(server_settings, retriever, tmp_path_factory) -> Iterator[tuple[str, list[str]]]:
    home = tmp_path_factory.mktemp("locked") / "home"
    settings = server_settings.model_copy(
        update={"api_key": SecretStr("k3y-of-the-server"), "home": home}
    )
    app = create_app(settings, retriever)
    mounts = [r.path for r in app.routes if isinstance(r, Mount)]
    with run_server(app) as url:
        yield url, mounts


@pytest.mark.slow
def test_every_route_and_mount_but_the_open_ones_needs_the_key(locked):
    url, mounts = locked
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
