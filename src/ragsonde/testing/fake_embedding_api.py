"""A real HTTP server on loopback that speaks Cohere's and OpenAI's embedding APIs.

For the one thing that cannot run here, a paid remote API. It answers the real request shapes
with the real response and error bodies, with deterministic vectors (seeded by text and input
type), and can be told to fail: a wrong key, N rate-limited or 503 answers, malformed bodies,
slow answers, or a hang (no answer at all until it stops). It records every request it
receives.

    with FakeEmbeddingAPI(api_key="k") as api:
        settings = Settings(embedder="cohere:embed-english-v3.0", cohere_base_url=api.url,
                            cohere_api_key="k")
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Any

import numpy as np

from ragsonde.testing._loopback import base_url, serve, shutdown, take_fault

__all__ = ["FakeEmbeddingAPI", "RecordedRequest", "fake_vector"]

COHERE_DIMS = {"embed-english-v3.0": 1024, "embed-english-light-v3.0": 384}


def fake_vector(text: str, dim: int, input_type: str = "") -> list[float]:
    """The deterministic unit vector the fake returns for ``text``."""
    seed = int.from_bytes(hashlib.sha256(f"{input_type}\x00{text}".encode()).digest()[:8], "big")
    vec = np.random.default_rng(seed).normal(size=dim)
    return [float(x) for x in vec / np.linalg.norm(vec)]


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class _Faults:
    rate_limited: int = 0
    unavailable: int = 0
    malformed: int = 0
    wrong_count: int = 0
    delay_s: float = 0.0
    retry_after: str = "0"
    #: Hang: read each request and never answer it (until the fake stops; at most 10 minutes).
    hang: bool = False


@dataclass
class FakeEmbeddingAPI:
    """Start with ``with``; ``url`` is the base URL for both APIs (Cohere: ``{url}``; OpenAI:
    ``{url}/v1``)."""

    api_key: str | None = None
    openai_dim: int = 64
    requests: list[RecordedRequest] = field(default_factory=list)
    faults: _Faults = field(default_factory=_Faults)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._stopping = threading.Event()  # releases hung requests

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake API is not running")
        return base_url(self._server)

    def __enter__(self) -> FakeEmbeddingAPI:
        self._stopping.clear()
        self._server = serve(self._answer)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping.set()
        if self._server is not None:
            shutdown(self._server)
            self._server = None

    # -- behaviour -----------------------------------------------------------------------------
    def _take(self, name: str) -> bool:
        return take_fault(self.faults, name, self._lock)

    def _answer(
        self, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            self.requests.append(RecordedRequest(path, headers, body))
        if self.faults.delay_s:
            time.sleep(self.faults.delay_s)
        if self.faults.hang:
            self._stopping.wait(timeout=600)
        cohere = path.startswith("/v2/embed")
        openai = path.endswith("/embeddings")
        if not (cohere or openai):
            return 404, {"message": f"no route for {path}"}, {}
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            if cohere:
                return 401, {"id": "err", "message": "invalid api token"}, {}
            return (
                401,
                {
                    "error": {
                        "message": "Incorrect API key provided.",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_api_key",
                    }
                },
                {},
            )
        if self._take("rate_limited"):
            msg = "You are past the rate limit; please slow down."
            err: Any = (
                {"message": msg}
                if cohere
                else {
                    "error": {
                        "message": msg,
                        "type": "requests",
                        "param": None,
                        "code": "rate_limit_exceeded",
                    }
                }
            )
            return 429, err, {"retry-after": self.faults.retry_after}
        if self._take("unavailable"):
            return (
                503,
                {"message": "service unavailable"}
                if cohere
                else {
                    "error": {
                        "message": "The server is overloaded.",
                        "type": "server_error",
                        "param": None,
                        "code": None,
                    }
                },
                {},
            )
        if self._take("malformed"):
            return 200, b"{not json", {}
        return self._cohere(body) if cohere else self._openai(body)

    def _cohere(self, body: Any) -> tuple[int, Any, dict[str, str]]:
        if not isinstance(body, dict) or not isinstance(body.get("texts"), list):
            return 400, {"message": "invalid request: texts must be an array of strings"}, {}
        model, input_type = body.get("model"), body.get("input_type")
        if model not in COHERE_DIMS:
            return 404, {"message": f"model '{model}' not found"}, {}
        if input_type not in {"search_query", "search_document", "classification", "clustering"}:
            return 400, {"message": "invalid request: input_type is required for v3 models"}, {}
        if len(body["texts"]) > 96:
            return 400, {"message": "invalid request: texts must have at most 96 items"}, {}
        texts = body["texts"][:-1] if self._take("wrong_count") else body["texts"]
        vecs = [fake_vector(t, COHERE_DIMS[model], input_type) for t in texts]
        return (
            200,
            {
                "id": "fake-embed-id",
                "embeddings": {"float": vecs},
                "texts": body["texts"],
                "meta": {"api_version": {"version": "2"}, "billed_units": {"input_tokens": 1}},
                "response_type": "embeddings_by_type",
            },
            {},
        )

    def _openai(self, body: Any) -> tuple[int, Any, dict[str, str]]:
        inputs = body.get("input") if isinstance(body, dict) else None
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs:
            return (
                400,
                {
                    "error": {
                        "message": "'input' is a required property",
                        "type": "invalid_request_error",
                        "param": "input",
                        "code": None,
                    }
                },
                {},
            )
        texts = inputs[:-1] if self._take("wrong_count") else inputs
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t, self.openai_dim)}
            for i, t in enumerate(texts)
        ]
        data.reverse()  # real servers may answer out of order: clients must sort by index
        return (
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
            },
            {},
        )
