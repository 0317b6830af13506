"""Micro-batching: single queries that arrive together are embedded in one model call.

The server answers each ``POST /v1/query`` in a worker thread (the retriever is synchronous), so
concurrent queries call ``embed_queries`` from different threads at about the same time. With
micro-batching on, the server's retriever embeds through a :class:`MicroBatchingEmbedder`: each
caller puts its texts on a queue and waits; one batcher thread takes the first request and
every request already waiting (up to ``RAGSONDE_MICROBATCH_MAX`` texts), embeds them with one
``embed_queries`` call and hands each caller its own rows. Requests queue while the model is
busy, so batches grow with the load by themselves; ``RAGSONDE_MICROBATCH_MS`` > 0 also makes a
batch wait up to that long after its first request arrived, for company (a lone query at low
load then pays the whole wait).

It lives where the worker threads meet the model rather than as an asyncio task on the event
loop: an asyncio batcher would need the route to split the retriever's stages, or each worker
thread to hop back to the loop and out again, for the same result.

**Decision: on by default for the torch model only** (``RAGSONDE_MICROBATCH`` unset; ``1``/``0``
force it); each embedder class says so (``microbatch_by_default``, read by
:func:`ragsonde.embedders.base.microbatched_by_default`). Measured with ``bench/bench_serve.py``
(``ragsonde serve`` processes off and on with ``RAGSONDE_MICROBATCH_MS=0``, open loop, 50
clients, 30 s per rate in alternating blocks; 2 cores; ``bench/results/serve.json`` holds the
last run).

torch, three full runs on a machine shared with other work:

- capacity (50 closed-loop clients): 19 → 30, 22 → 34 and 18 → 31 req/s (x1.54, x1.52, x1.68);
- overload (130 % of the capacity without it): p95 2,265 → 133, 4,004 → 127 and
  3,217 → 369 ms; only the batched server kept up with the arrival rate; server CPU time per
  query x0.84, x0.69, x0.72;
- low load (10 % of capacity, so each batch holds one query): p50 x1.04, x1.04, x0.78 and p95
  x1.11, x0.98, x0.97, within the noise of 60-66 queries per server on a busy machine.

ONNX Runtime (the default backend), two runs on a quiet machine (load average below 3): capacity
72 → 67 and 74.5 → 65.6 req/s (x0.93, x0.88); low load p50 x1.06, x0.99 and p95 x1.14, x0.87;
overload p95 x1.97, x0.31. A call of one query costs ONNX Runtime little (about 14 ms against
torch's 76 ms), so waiting for company mostly adds a queue; an earlier run at load 12-15 gave
x0.81. So it is off for ONNX. The second full run confirmed torch: capacity 26.5 → 81.3 (x3.07),
low load p50 x1.00 and p95 x0.84.

The rule, fixed before the runs: on only if capacity gains >= 10 % and low-load p50 and p95
cost <= 10 %. The first run missed it by its p95 (x1.11), the next two met it. A remote API
(Cohere, OpenAI) is not CPU-bound and was not measured: there, concurrent calls overlap their
network waits, and one batcher thread with one call in flight would queue them instead.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragsonde.config import Settings
from ragsonde.embedders.base import Embedder, Vectors, microbatched_by_default
from ragsonde.embedders.isolate import embed_groups

__all__ = ["MicroBatchingEmbedder", "batching"]


@dataclass(eq=False)
class _Request:
    texts: Sequence[str]
    arrived: float
    done: threading.Event = field(default_factory=threading.Event)
    result: Vectors | None = None
    error: BaseException | None = None


class MicroBatchingEmbedder:
    """An :class:`~ragsonde.embedders.Embedder` that coalesces concurrent ``embed_queries``.

    ``inner``: the embedder; or ``factory``, a function that builds it on first use (so a bad
    embedder setting surfaces where it did before: at warm-up and in ``/readyz``, not at
    construction), with ``name``, the embedder's spec, answered without building it. Calls of
    ``max_batch`` texts or more, ``embed_documents``, and every call after :meth:`close` go
    straight through.
    """

    def __init__(
        self,
        inner: Embedder | None = None,
        *,
        factory: Callable[[], Embedder] | None = None,
        name: str | None = None,
        window_ms: float = 0.0,
        max_batch: int = 32,
    ) -> None:
        if (inner is None) == (factory is None):
            raise ValueError("give exactly one of inner and factory")
        if window_ms < 0 or max_batch < 1:
            raise ValueError("window_ms must be >= 0 and max_batch >= 1")
        self._inner = inner
        self._factory = factory
        self._name = name
        self.window_s = window_ms / 1000.0
        self.max_batch = max_batch
        self._queue: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()  # None: stop
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        #: Texts per model call, for tests and benchmarks (the most recent calls).
        self.batch_sizes: list[int] = []

    # -- the Embedder interface -------------------------------------------------------------------
    @property
    def inner(self) -> Embedder:
        """The wrapped embedder (built by ``factory`` on first use)."""
        if self._inner is None:
            with self._lock:
                if self._inner is None and self._factory is not None:
                    self._inner = self._factory()
        if self._inner is None:
            raise RuntimeError("no embedder")  # unreachable: __init__ requires one
        return self._inner

    @property
    def name(self) -> str:
        return self._name if self._name is not None else self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """The vectors of ``texts``, computed together with other callers' within the window."""
        inner = self.inner  # built here, in the caller's thread, so its errors are the caller's
        if not texts or len(texts) >= self.max_batch:
            return inner.embed_queries(texts)
        request = _Request(list(texts), time.perf_counter())
        if not self._submit(request):
            return inner.embed_queries(texts)
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def close(self) -> None:
        """Stop the batcher thread once it has answered what is queued; later calls go direct."""
        with self._lock:
            self._closed = True
            thread, self._thread = self._thread, None
            if thread is not None:
                self._queue.put(None)  # under the lock: no request can queue behind it
        if thread is not None:
            thread.join(timeout=30)

    # -- the batcher thread ---------------------------------------------------------------------
    def _submit(self, request: _Request) -> bool:
        with self._lock:
            if self._closed:
                return False
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="ragsonde-microbatch", daemon=True
                )
                self._thread.start()
            self._queue.put(request)
        return True

    def _run(self) -> None:
        carry: _Request | None = None
        while True:
            first = carry if carry is not None else self._queue.get()
            carry = None
            if first is None:
                return
            batch, n = [first], len(first.texts)
            deadline = first.arrived + self.window_s
            stop = False
            while n < self.max_batch:
                wait = deadline - time.perf_counter()
                try:
                    item = self._queue.get(timeout=wait) if wait > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                if n + len(item.texts) > self.max_batch:
                    carry = item  # the first of the next batch
                    break
                batch.append(item)
                n += len(item.texts)
            self._embed(batch)
            if stop:
                return

    def _embed(self, batch: list[_Request]) -> None:
        try:
            # One model call; if it fails, each request is embedded alone, so a request that
            # breaks the model fails by itself and the others running beside it still succeed.
            outcomes = embed_groups(self.inner.embed_queries, [r.texts for r in batch])
        except BaseException as e:  # every waiting caller gets the error, never a hang
            for r in batch:
                r.error = e
                r.done.set()
            return
        if len(self.batch_sizes) >= 10_000:
            del self.batch_sizes[:5_000]
        self.batch_sizes.append(sum(len(r.texts) for r in batch))
        for r, outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, Exception):
                r.error = outcome
            else:
                r.result = outcome
            r.done.set()


def batching(settings: Settings) -> Callable[[Embedder], Embedder] | None:
    """What the server's workspace uses its embedder through
    (:class:`~ragsonde.workspace.Workspace`'s ``wrap_embedder``): a
    :class:`MicroBatchingEmbedder` when RAGSONDE_MICROBATCH is on, or unset and the embedder is
    one batched by default (:func:`~ragsonde.embedders.base.microbatched_by_default`; see the
    measurements above); else the embedder itself. ``None``: micro-batching is off."""
    if settings.microbatch is False:
        return None

    def wrap(inner: Embedder) -> Embedder:
        if settings.microbatch is None and not microbatched_by_default(inner):
            return inner
        return MicroBatchingEmbedder(
            inner,
            name=settings.embedder,
            window_ms=settings.microbatch_ms,
            max_batch=settings.microbatch_max,
        )

    return wrap
