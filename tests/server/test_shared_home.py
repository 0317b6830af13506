"""The server and the CLI share a home (issue 13.3): a real ``ragsonde serve`` process answers
queries while a real ``ragsonde ingest`` process writes into the collection it serves, sees the
new data within seconds, and never answers 5xx; a second server on the same home is ready only
because its queries succeed."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest

from tests.support import home_env, serve_process

pytestmark = pytest.mark.slow  # starts a server and ingest processes, loads the model

OLD = "Lidar sensors measure distance with pulsed laser light reflected by surfaces."
NEW = "Quokkas are small marsupials living on Rottnest Island near Perth in Australia."


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragsonde", *args],
        env=home_env(home),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _serve(home: Path) -> AbstractContextManager[str]:
    return serve_process(home, "-c", "mydocs")


def _top(url: str, text: str) -> httpx.Response:
    return httpx.post(f"{url}/v1/query", json={"text": text, "top_k": 1}, timeout=60)


def test_ingest_while_serving_and_a_second_server(tmp_path: Path) -> None:
    home, docs = tmp_path / "home", tmp_path / "docs"
    docs.mkdir()
    (docs / "lidar.md").write_text(f"# Lidar\n\n{OLD}\n", encoding="utf-8")
    first = _cli(home, "ingest", str(docs), "-c", "mydocs")
    assert first.returncode == 0, first.stderr

    with _serve(home) as url:
        assert httpx.get(f"{url}/readyz", timeout=60).status_code == 200
        assert _top(url, NEW).json()["results"][0]["text"] != NEW  # not there yet

        statuses: list[int] = []
        stop = threading.Event()

        def client() -> None:  # a steady client: the server is never idle for long
            while not stop.is_set():
                statuses.append(_top(url, "laser distance").status_code)

        thread = threading.Thread(target=client)
        thread.start()
        try:
            (docs / "quokka.md").write_text(f"# Quokka\n\n{NEW}\n", encoding="utf-8")
            ingest = _cli(home, "ingest", str(docs), "-c", "mydocs")
            assert ingest.returncode == 0, ingest.stdout + ingest.stderr
            deadline = time.monotonic() + 10
            while _top(url, NEW).json()["results"][0]["text"] != NEW:
                assert time.monotonic() < deadline, "the server never saw the new document"
                time.sleep(0.2)
        finally:
            stop.set()
            thread.join(timeout=120)
        assert statuses and set(statuses) == {200}, statuses

        # A second server on the same home takes turns with the first: ready means it answers.
        with _serve(home) as second:
            ready = httpx.get(f"{second}/readyz", timeout=60)
            assert ready.status_code == 200, ready.text
            answers = [_top(u, NEW) for u in (second, url, second)]
            assert [r.status_code for r in answers] == [200, 200, 200]
            assert all(r.json()["results"][0]["text"] == NEW for r in answers)
