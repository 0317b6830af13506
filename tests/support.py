"""Plain helpers and data shared by the tests (fixtures live in the conftest files).

Test modules import from here, never from a conftest or another test module.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from click.testing import Result

from ragsonde.models.points import PointRecord

if TYPE_CHECKING:
    import httpx
    from fastapi import FastAPI

    from ragsonde.models import Response

#: The checkout: the working directory of the CLI processes.
ROOT = Path(__file__).resolve().parents[1]

#: The shared benchmark data, read in place: ``RAGSONDE_DATA`` or ``../shared/data`` beside the
#: checkout. Tests that need it skip, saying where they looked, when it is absent.
DATA = Path(
    os.environ.get("RAGSONDE_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)
SCIFACT = DATA / "scifact"
#: Chroma's chunking-evaluation corpora and span-labelled questions (see its README there).
CHUNKING = DATA / "chunking"

#: The ``cli`` fixture (tests/cli/conftest.py): ``cli(*args, env=...)`` runs ``ragsonde`` in process.
Cli = Callable[..., Result]

#: A tiny corpus with clear right and wrong answers, for retrieval tests.
DOCS = [
    (
        "lidar",
        "Sensors > Lidar",
        "Lidar measures distance by timing laser pulses reflected off surfaces.",
    ),
    (
        "sonar",
        "Sensors > Ultrasonic",
        "Ultrasonic rangefinders emit sound pulses and listen for the echo.",
    ),
    (
        "imu",
        "Sensors > IMU",
        "An IMU combines accelerometers and gyroscopes; gyroscope bias makes heading drift.",
    ),
    (
        "pid",
        "Control > PID",
        "A PID controller sums proportional, integral and derivative terms of the error.",
    ),
    (
        "lipo",
        "Power > Batteries",
        "Never discharge a LiPo cell below 3.0 volts; it can swell or catch fire.",
    ),
    (
        "astar",
        "Planning > A*",
        "A* search expands nodes by cost so far plus an admissible heuristic to the goal.",
    ),
    (
        "slam",
        "Mapping > SLAM",
        "SLAM builds a map of an unknown place while tracking the robot's pose in it.",
    ),
    (
        "gps",
        "Sensors > GPS",
        "RTK GPS corrects satellite positions with a base station to reach centimetres.",
    ),
]


INDEXED = {"url": "keyword", "section": "keyword", "doc_id": "keyword"}


def fill(store: Any, embedder: Any, name: str = "docs") -> None:
    """Create ``name`` and write the DOCS corpus into it, embedded with ``embedder``."""
    store.create_collection(name, embedder.dimension, indexed_fields=INDEXED)
    vecs = embedder.embed_documents([d[2] for d in DOCS])
    store.upsert(
        name,
        [
            PointRecord(
                id=str(i + 1),
                vector=vecs[i].tolist(),
                payload={
                    "text": text,
                    "url": f"https://docs.example/{doc}",
                    "title": doc.upper(),
                    "section": section,
                    "chunk_index": 0,
                    "doc_id": doc,
                    "created_at": "2026-01-01T00:00:00+00:00",
                    "lang": "en",
                },
            )
            for i, (doc, section, text) in enumerate(DOCS)
        ],
    )


#: A stored chunk that is an XSS attempt: the page must show it as text and run nothing.
EVIL_TEXT = "<img src=x onerror=alert(1)>"
EVIL = PointRecord(
    id="99",
    vector=None,
    payload={
        "text": EVIL_TEXT,
        "url": "javascript:alert(2)",
        "title": "<script>alert(3)</script>",
        "section": "<b onmouseover=alert(4)>Untrusted</b>",
        "chunk_index": 0,
        "doc_id": "evil",
    },
)

#: The body limit the test servers run with (small, so an oversized body is cheap to send).
MAX_BODY = 16_384


@contextmanager
def run_server(app: FastAPI) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port; yield ``http://127.0.0.1:PORT``."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_config=None, access_log=False, ws="none", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m ragsonde ARGS`` as a real process (QDRANT_URL unset unless ``env`` sets it)."""
    full_env = {k: v for k, v in os.environ.items() if k != "QDRANT_URL"}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "ragsonde", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=ROOT,
    )


#: A query whose answer is the ``lidar`` page of :data:`DOCS`.
LIDAR = "how does a laser rangefinder measure distance"


def error_of(r: httpx.Response, status: int, code: str) -> Response:
    """Assert ``r`` is the contract error Response with ``status`` and ``code``."""
    from ragsonde.models import Response

    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert "Traceback" not in r.text
    resp = Response.model_validate(r.json())
    assert resp.status == "error" and resp.results == [] and resp.total_results == 0
    assert resp.error is not None and resp.error.code == code, resp.error
    assert resp.error.message
    return resp


#: Queries about :data:`DOCS`, for concurrent callers.
TEXTS = [
    "how does a laser rangefinder measure distance",
    "why does my heading drift over time",
    "lithium battery safe voltage",
    "A* heuristic search",
    "map an unknown room while tracking the robot",
    "centimetre accuracy from satellites",
    "tune the derivative term of a controller",
    "ultrasonic echo timing",
    "gyroscope bias",
    "what is SLAM",
    "battery swelling",
    "sensor fusion of wheel odometry and IMU",
]


def together(fn: Callable[[Any], Any], args: list[Any]) -> list[Any]:
    """Call ``fn`` on every arg from its own thread, all released at once; results in order."""
    barrier = threading.Barrier(len(args))

    def call(arg: Any) -> Any:
        barrier.wait()
        return fn(arg)

    with ThreadPoolExecutor(len(args)) as pool:
        return list(pool.map(call, args))


#: ``versus`` runs (the ``versus`` fixture): the local model (A) against the loopback fake's
#: hash-seeded 64-d embedder (B), each in its own derived collection, on the sample robotics set.
HASHED = "openai:hashed-64"
A_COLL = "robotics__local-sentence-transformers-all-minilm-l6-v2"
B_COLL = "robotics__openai-hashed-64"
#: Queries in ``versus_bench``: runs on collections that exist cost only their queries.
SMALL = 15


def per_query(report: dict[str, Any], metric: str) -> Any:
    """``metric`` of every query of a report's JSON, in query-id order (a numpy array)."""
    import numpy as np

    ids = sorted(report["per_query"])
    return np.asarray([report["per_query"][q]["metrics"][metric] for q in ids])


def home_env(home: Path) -> dict[str, str]:
    """The environment of a ``ragsonde`` process on ``home``: this checkout's ``src`` first, no
    ``RAGSONDE_``/``QDRANT_`` variable of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGSONDE_", "QDRANT_"))}
    env["PYTHONPATH"] = f"{ROOT / 'src'}{os.pathsep}{env.get('PYTHONPATH', '')}"
    env["RAGSONDE_HOME"] = str(home)
    return env


@contextmanager
def serve_process(home: Path, *args: str) -> Iterator[str]:
    """A real ``ragsonde serve ARGS`` process on ``home`` and a free loopback port; yields its
    URL once ``/healthz`` answers, and terminates it afterwards (its stderr goes to a log file
    beside ``home``, shown if it exits early)."""
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    log = home.parent / f"serve-{port}.log"
    url = f"http://127.0.0.1:{port}"
    with (
        log.open("w") as err,
        subprocess.Popen(
            [sys.executable, "-m", "ragsonde", "serve", *args, "--port", str(port)],
            env=home_env(home),
            stdout=subprocess.DEVNULL,
            stderr=err,
        ) as proc,
    ):
        try:
            deadline = time.monotonic() + 120
            while True:
                if proc.poll() is not None:
                    raise AssertionError(f"serve exited {proc.returncode}: {log.read_text()}")
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise AssertionError("serve did not start in 120 s")
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def evaluate_in(
    dataset: Any,
    options: Any = None,
    *,
    settings: Any = None,
    store: Any = None,
    embedder: Any = None,
    **kwargs: Any,
) -> Any:
    """:func:`ragsonde.evaluate.evaluate` in a workspace of these parts, closed after (what
    most tests want: their own settings, store or model)."""
    from ragsonde.evaluate import evaluate
    from ragsonde.workspace import Workspace

    with Workspace(settings, store=store, embedder=embedder) as ws:
        return evaluate(dataset, options, ws, **kwargs)


def versus_in(
    dataset: Any, embedders: Any, options: Any = None, *, settings: Any = None, **kwargs: Any
) -> Any:
    """:func:`ragsonde.evaluate.versus.evaluate_versus` in a workspace of ``settings``."""
    from ragsonde.evaluate.versus import evaluate_versus
    from ragsonde.workspace import Workspace

    with Workspace(settings) as ws:
        return evaluate_versus(dataset, embedders, options, ws, **kwargs)


def robotics_hybrid(home: Path, embedder: Any) -> Path:
    """``home`` with the sample robotics docs ingested as ``robotics``, dense and BM25 vectors
    (a module's own home: the tests that use it write calibrations and history there)."""
    from ragsonde.config import Settings
    from ragsonde.ingest import IngestOptions, ingest
    from ragsonde.samples import robotics_docs

    ingest(
        str(robotics_docs()),
        settings=Settings(home=home, collection="robotics"),
        embedder=embedder,
        options=IngestOptions(sparse=True),
    )
    return home


#: A second process that opens one embedded collection (``argv[2]``) of a home (``argv[1]``)
#: and holds it until its stdin closes, as a long-running ingest or a notebook would; more
#: arguments are only carried on its command line.
_HOLDER = (
    "import sys\n"
    "from ragsonde.store.edge import EdgeStore\n"
    "s = EdgeStore(sys.argv[1]); s.count(sys.argv[2])\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
    "s.close()\n"
)

#: The same, by a program outside ragsonde: qdrant-edge itself, without ragsonde's lock file.
ENGINE_HOLDER = (
    "import sys\n"
    "import qdrant_edge as qe\n"
    "s = qe.EdgeShard.load(f'{sys.argv[1]}/collections/{sys.argv[2]}')\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
    "s.close()\n"
)


@contextmanager
def holding(
    home: Path, collection: str, *extra: str, script: str = _HOLDER
) -> Iterator[subprocess.Popen[str]]:
    """A real process holding ``collection`` of ``home`` once this yields it (ragsonde's store,
    or ``script``, e.g. :data:`ENGINE_HOLDER`); closing its stdin lets go (it then exits 0).
    Whatever the test did, it is let go and reaped on the way out."""
    with subprocess.Popen(
        [sys.executable, "-c", script, str(home), collection, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdin is not None and holder.stdout is not None
        try:
            assert holder.stdout.readline().strip() == "held"
            yield holder
        finally:
            if not holder.stdin.closed:
                holder.stdin.close()
            try:
                holder.wait(timeout=60)
            except subprocess.TimeoutExpired:
                holder.kill()
                raise


#: The first frame of an MCP session over stdio, for tests that speak the wire by hand (id 1).
MCP_INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
