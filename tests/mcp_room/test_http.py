"""The same checks over streamable HTTP, at ``/mcp`` of the real app on a loopback port, with
the SDK's ``streamable_http_client``: without an API key, and with one (refused without it, as
the ``/v1/`` routes are)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import ListRootsResult, Root
from pydantic import FileUrl

from ragsonde.config import Settings
from tests.mcp_room.drive import Session, check_session, drive
from tests.support import run_server

KEY = "mcp-test-key-0123456789"


async def _everything(context: Any) -> ListRootsResult:
    """A client that declares the whole disk as its root."""
    return ListRootsResult(roots=[Root(uri=FileUrl("file:///"))])


def _session(url: str, bench_root: Path, headers: dict[str, str] | None) -> Session:
    async def main() -> Session:
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write, list_roots_callback=_everything) as session,
        ):
            outside = bench_root.parent / "outside" / "secret.jsonl"
            return await drive(session, bench_root / "small.jsonl", outside)

    return anyio.run(main)


@pytest.mark.slow
@pytest.mark.parametrize("key", [None, KEY], ids=["no-key", "key"])
def test_http_server_answers_as_the_cli(
    sample_home: Path,
    bench_root: Path,
    cli_report: dict[str, Any],
    key: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ragsonde.server import create_app

    # paths are read in the server's dataset folders only, whatever roots the client declares
    # (this one declares file:///, and read files anywhere on the disk through /mcp)
    monkeypatch.chdir(bench_root.parent)
    settings = Settings(
        home=sample_home, collection="robotics", api_key=key, eval_datasets=[bench_root]
    )
    with run_server(create_app(settings)) as url:
        if key is not None:
            refused = httpx.post(f"{url}/mcp", json={}, timeout=30)
            assert refused.status_code == 401
            assert refused.json()["error"]["code"] == "AUTH_ERROR"
            wrong = httpx.post(f"{url}/mcp", json={}, headers={"X-API-Key": "nope"}, timeout=30)
            assert wrong.status_code == 401 and KEY not in wrong.text
        headers = {"Authorization": f"Bearer {key}"} if key is not None else None
        check_session(
            _session(url, bench_root, headers), cli_report, "read only in the server's dataset"
        )


@pytest.mark.slow
def test_eval_mcp_over_http_scores_ragsondes_own_search_as_the_collection(
    sample_home: Path, bench_root: Path, cli_report: dict[str, Any]
) -> None:
    """``ragsonde eval --mcp URL``: the ``search`` tool of a keyed ``/mcp`` evaluated over
    streamable HTTP (the key sent with --mcp-header) scores as the collection it searches."""
    import json
    import subprocess
    import sys

    from ragsonde.server import create_app
    from tests.mcp_room.drive import KS
    from tests.support import home_env

    settings = Settings(home=sample_home, collection="robotics", api_key=KEY)
    with run_server(create_app(settings)) as url:
        args = ["eval", str(bench_root / "small.jsonl"), "--mcp", f"{url}/mcp", "--tool"]
        args += ["search", "--map", "id=metadata.doc_id", "--json"]
        args += ["--k", ",".join(map(str, KS)), "--mcp-header", f"Authorization=Bearer {KEY}"]
        out = subprocess.run(
            [sys.executable, "-m", "ragsonde", *args],
            capture_output=True,
            text=True,
            env=home_env(sample_home),
            timeout=600,
        )
        assert out.returncode == 0, out.stderr
        report = json.loads(out.stdout)
        assert report["metrics"] == cli_report["metrics"]
        assert "id=metadata.doc_id" in report["warnings"][0]
        keyless = subprocess.run(
            [sys.executable, "-m", "ragsonde", *args[:-2]],
            capture_output=True,
            text=True,
            env=home_env(sample_home),
            timeout=600,
        )
        assert keyless.returncode != 0 and "Traceback" not in keyless.stderr
        assert json.loads(keyless.stdout)["error"]["code"] == "CONNECTION_ERROR"
