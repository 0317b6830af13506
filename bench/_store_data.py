"""The store bench's data: synthetic 384-dim vectors shaped like sentence embeddings, their
url payloads, held-out queries, and the exact top-10 each query should find (see
:mod:`bench.bench_store` for the distribution and why)."""

from __future__ import annotations

import numpy as np

DIM = 384
N_URLS = 1000
K = 10
BATCH = 1000
EF_SWEEP = (None, 64, 128, 256)
COLL = "bench"


def _normalise(x: np.ndarray) -> np.ndarray:
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def generate(n: int, n_queries: int, seed: int) -> dict[str, np.ndarray]:
    """``n`` points + ``n_queries`` held-out queries from one clustered distribution."""
    rng = np.random.default_rng(seed)
    total = n + n_queries
    n_clusters = max(8, int(np.sqrt(n)))
    spectrum = (np.arange(1, DIM + 1, dtype=np.float32) ** -0.35).astype(np.float32)
    spectrum /= np.linalg.norm(spectrum) / np.sqrt(DIM)  # mean square 1
    mean_dir = _normalise(rng.standard_normal((1, DIM), dtype=np.float32))[0]
    centres = _normalise(
        0.6 * mean_dir + rng.standard_normal((n_clusters, DIM), dtype=np.float32) * spectrum / 19.6
    )
    cluster_w = rng.zipf(1.6, n_clusters).astype(np.float64).clip(max=50)
    cluster = rng.choice(n_clusters, size=total, p=cluster_w / cluster_w.sum())
    spread = rng.lognormal(np.log(0.045), 0.25, n_clusters).astype(np.float32)
    url_w = 1.0 / np.arange(1, N_URLS + 1) ** 1.05
    url_p = url_w / url_w.sum()
    home_url = rng.choice(N_URLS, size=n_clusters, p=url_p)
    x = np.empty((total, DIM), dtype=np.float32)
    for start in range(0, total, 100_000):  # chunks keep the temporary arrays small
        c = cluster[start : start + 100_000]
        noise = rng.standard_normal((len(c), DIM), dtype=np.float32) * spectrum
        x[start : start + len(c)] = centres[c] + noise * spread[c, None]
    _normalise(x)
    urls = np.where(rng.random(total) < 0.5, home_url[cluster], rng.choice(N_URLS, total, p=url_p))
    perm = rng.permutation(total)
    q_idx, p_idx = perm[:n_queries], np.sort(perm[n_queries:])
    return {
        "x": np.ascontiguousarray(x[p_idx]),
        "url": urls[p_idx].astype(np.int32),
        "cluster": cluster[p_idx].astype(np.int32),
        "q": np.ascontiguousarray(x[q_idx]),
        "q_url": urls[q_idx].astype(np.int32),
    }


def exact_truth(data: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-10 by exact cosine: unfiltered, and within each query's filter url (-1 padded)."""
    x, q, url = data["x"], data["q"], data["url"]
    truth = np.empty((len(q), K), dtype=np.int64)
    for s in range(0, len(q), 50):
        scores = x @ q[s : s + 50].T
        top = np.argpartition(-scores, K, axis=0)[:K].T
        for j, row in enumerate(top):
            truth[s + j] = row[np.argsort(-scores[row, j])]
    q_url = data["q_url"].copy()
    counts = np.bincount(url, minlength=N_URLS)
    empty = counts[q_url] == 0  # the query's url has no points: filter on its nearest's url
    q_url[empty] = url[truth[empty, 0]]
    order = np.argsort(url, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts)])
    ftruth = np.full((len(q), K), -1, dtype=np.int64)
    for i, u in enumerate(q_url):
        rows = order[bounds[u] : bounds[u + 1]]
        s = x[rows] @ q[i]
        best = rows[np.argsort(-s)[:K]]
        ftruth[i, : len(best)] = best
    return truth, ftruth, q_url


def url_of(u: int) -> str:
    """The url payload of source ``u``."""
    return f"https://docs.example.org/source-{u:04d}"


def recall(hits: list[list[int]], truth: np.ndarray) -> float:
    """Mean over queries of |hits ∩ truth| / |truth| (truth rows are -1 padded)."""
    vals = []
    for got, row in zip(hits, truth, strict=True):
        want = {int(t) for t in row if t >= 0}
        vals.append(len(want & set(got[:K])) / len(want) if want else 1.0)
    return float(np.mean(vals))
