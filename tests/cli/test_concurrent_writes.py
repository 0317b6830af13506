"""Two ``ragsonde`` processes writing the same thing at once, and Ctrl-C mid-way: nothing is lost,
nothing is half-written, and the loser says why. Real processes on a real embedded store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.labels import BenchmarkEntry, read_entries, write_entries
from ragsonde.models.derived import COPY_KEY, EDIT_KEY
from ragsonde.store import open_store
from ragsonde.store.edge import EdgeStore
from ragsonde.store.lock import lock_shard
from ragsonde.testing.fake_chat_api import FakeChatAPI, default_responder
from ragsonde.tune.variants import ORPHAN_AGE_S
from tests.labels.support import fill_sections
from tests.support import CHUNKING, ROOT, home_env, serve_process, together

pytestmark = pytest.mark.slow  # starts processes

PAGES = {
    "lidar.md": "# Lidar\n\nLidar measures distance by timing laser pulses off surfaces.\n",
    "sonar.md": "# Sonar\n\nUltrasonic rangefinders emit sound pulses and listen for the echo.\n",
    "imu.md": "# IMU\n\nAn IMU combines accelerometers and gyroscopes to track heading.\n",
}


def _pages(folder: Path) -> Path:
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _start(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ragsonde", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=home_env(home),
        cwd=ROOT,
    )


def _wait_for(what: str, done: object, procs: list[subprocess.Popen[str]]) -> None:
    deadline = time.monotonic() + 60
    while not callable(done) or not done():
        for p in procs:
            if p.poll() is not None:
                out, err = p.communicate()
                raise AssertionError(f"exited {p.returncode} before {what}: {out}{err}")
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.05)


def test_two_ingests_creating_one_collection_at_once_both_succeed(tmp_path: Path) -> None:
    """The second to create a collection waits for the first and then writes into the one it
    made; before, it failed at once with CONNECTION_ERROR (the lock held by the creator), and
    after a wait it would have created the shard a second time over the first one."""
    home, pages = tmp_path / "home", _pages(tmp_path / "pages")
    folder = home / "collections" / "docs"
    # A creator holds the new collection's lock while both ingests arrive: they must wait.
    creator = lock_shard("docs", folder)
    procs = [_start(home, "ingest", str(pages), "-c", "docs") for _ in range(2)]
    try:
        _wait_for(
            "both ingests waited for the lock",
            lambda: all((folder / f".ragsonde.want.{p.pid}").exists() for p in procs),
            procs,
        )
        creator.release()
        results = [p.communicate(timeout=120) for p in procs]
    finally:
        creator.release()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, out + err
        assert "Ingested 3 documents" in out, out
    store = EdgeStore(home)
    try:
        stored = [p for batch in store.scroll("docs") for p in batch]
    finally:
        store.close()
    assert sorted(p.payload["doc_id"] for p in stored) == sorted(n[:-3] for n in PAGES)


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragsonde", *args],
        capture_output=True,
        text=True,
        env=home_env(home),
        cwd=ROOT,
        timeout=300,
    )


def _cut_short(store: EdgeStore, name: str) -> None:
    """What a ``generate`` killed mid-copy leaves: the copy stamped, half its points missing."""
    ids = [p.id for batch in store.scroll(name) for p in batch]
    store.delete_points(name, ids[len(ids) // 2 :])


def _unedited(store: EdgeStore, name: str, source: str, chunk_ids: list[str]) -> None:
    """What a ``generate`` killed after the copy, before its rewrite, leaves: every point copied
    and stamped, the source chunks still holding their query sentence."""
    stamp = store.retrieve(name, chunk_ids[:1])[0].payload[COPY_KEY]
    points = store.retrieve(source, chunk_ids, with_vectors=True)
    store.upsert(name, [replace(p, payload={**p.payload, COPY_KEY: stamp}) for p in points])


@pytest.mark.parametrize("kill", [_cut_short, _unedited], ids=["mid-copy", "before-rewrite"])
def test_an_ict_copy_left_by_a_killed_generate_is_built_again_not_reused(
    scifact_dir: Path, tmp_path: Path, kill: object
) -> None:
    """A copy stamped like a whole one was reused as it was (half its points: leakage 22 %
    instead of 49 %, and every eval on it wrong without a word)."""
    home, beir = tmp_path / "home", tmp_path / "beir"
    beir.mkdir()
    lines = (scifact_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    (beir / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _run(home, "ingest", str(beir), "--format", "beir", "-c", "sci").returncode == 0
    gen = ("generate", "-c", "sci", "--n", "6", "-o", str(tmp_path / "g.jsonl"), "--json")
    first = _run(home, *gen)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["evaluate_on_copy"] == "built"
    entries = [json.loads(line) for line in (tmp_path / "g.jsonl").read_text().splitlines()]
    sources = [e["source_chunk"] for e in entries]
    store = EdgeStore(home)
    try:
        assert callable(kill)
        kill(store, "sci-ict-s0", *(("sci", sources) if kill is _unedited else ()))
    finally:
        store.close()
    again = _run(home, *gen)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["evaluate_on_copy"] == "repaired"
    store = EdgeStore(home)
    try:
        assert store.count("sci-ict-s0") == store.count("sci")
        for p in store.retrieve("sci-ict-s0", sources):
            assert EDIT_KEY in p.payload
        assert {p.id for p in store.retrieve("sci-ict-s0", sources)} == set(sources)
    finally:
        store.close()
    third = _run(home, *gen)  # whole now: reused
    assert json.loads(third.stdout)["evaluate_on_copy"] == "reused", third.stderr


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as from a terminal, whatever ran the tests


def test_judge_stopped_by_ctrl_c_keeps_its_answers_and_two_reruns_at_once_finish(
    tmp_path: Path, embedder: Any
) -> None:
    """Ctrl-C while the LLM answers: exit 130 with one line, no traceback, no output file; the
    answers already had are in the cache, so a rerun pays only for the rest; two reruns at once
    both finish and write one whole benchmark."""
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    fill_sections(store, "site", embedder=embedder)
    store.close()
    bench, out = tmp_path / "b.jsonl", tmp_path / "b.judged.jsonl"
    write_entries(bench, [BenchmarkEntry(query_id="q1", query="ultrasonic echo", relevant={})])
    answered, go_on = [0], threading.Event()

    def slow_after_three(prompt: str) -> str:
        answered[0] += 1
        if answered[0] > 3:
            go_on.wait(60)  # the fourth call hangs: Ctrl-C arrives during it
        return default_responder(prompt)

    args = ("judge", str(bench), "-c", "site", "--llm", "openai:gpt-4o-mini", "--mode", "sparse")
    args += ("--depth", "6", "--json")
    with FakeChatAPI(responder=slow_after_three) as api:
        env = {**home_env(home), "OPENAI_BASE_URL": f"{api.url}/v1", "OPENAI_API_KEY": "sk-x"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragsonde", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
            preexec_fn=_default_sigint,
        )
        _wait_for("the fourth call", lambda: answered[0] > 3, [proc])
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "Interrupted (Ctrl-C)." in err and "Traceback" not in err, err
        assert not out.exists()
        go_on.set()
        reruns = [
            subprocess.Popen(
                [sys.executable, "-m", "ragsonde", *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=ROOT,
            )
            for _ in range(2)
        ]
        done = [p.communicate(timeout=300) for p in reruns]
    for p, (stdout, stderr) in zip(reruns, done, strict=True):
        assert p.returncode == 0, stderr
        report = json.loads(stdout)
        usage = report["usage"]
        assert usage["cached"] >= 3, usage  # the three answered before Ctrl-C were kept
        assert usage["calls"] + usage["cached"] == report["judged"] > 3, report
    (entry,) = read_entries(out)  # one whole benchmark, whichever rerun wrote it last
    graded = [(lab.id, lab.chunk_id) for lab in entry.labels if lab.source == "llm"]
    assert len(graded) == len(set(graded)) == report["judged"]  # each chunk graded once


def test_two_servers_on_one_home_lose_no_grade_of_the_judge_page(tmp_path: Path) -> None:
    """Each grade answered 200 must be in the file: two servers (or any two processes) saving
    grades into one benchmark read, changed and wrote it back over each other (35 of 40
    grades kept, every one answered 200)."""
    import httpx

    home = tmp_path / "home"
    home.mkdir()
    with serve_process(home) as one, serve_process(home) as two:

        def grade(i: int) -> int:
            r = httpx.post(
                f"{(one, two)[i % 2]}/v1/judge/benchmarks/shared/grades",
                json={"query": "what is lidar", "chunk_id": f"c{i}", "doc_id": f"d{i}", "grade": 2},
                timeout=60,
            )
            return r.status_code

        assert together(grade, list(range(48))) == [200] * 48
    (entry,) = read_entries(home / "benchmarks" / "shared.jsonl")
    assert sorted(lab.chunk_id or "" for lab in entry.labels) == sorted(f"c{i}" for i in range(48))


#: Once argv[3] exists, writes the result in argv[1] to argv[2] 500 times as a sweep does;
#: prints how many writes failed.
REWRITE = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from ragsonde.chunking.report import ConfigResult\n"
    "from ragsonde.chunking.sweep import _write\n"
    "r = ConfigResult.model_validate_json(Path(sys.argv[1]).read_text())\n"
    "print('ready', flush=True)\n"
    "while not Path(sys.argv[3]).exists():\n"
    "    time.sleep(0.001)\n"
    "failed = 0\n"
    "for _ in range(500):\n"
    "    try:\n"
    "        _write(Path(sys.argv[2]), r)\n"
    "    except Exception:\n"
    "        failed += 1\n"
    "print(failed, flush=True)\n"
)


def test_two_chunking_sweeps_finishing_one_configuration_at_once_both_write_it(
    tmp_path: Path,
) -> None:
    """Two sweeps of the same run write each finished configuration to one file; with one
    shared temporary name, about one write in ten of either failed (its rename found the file
    gone: the other had renamed it), ending that sweep after all its work."""
    home, docs = tmp_path / "home", tmp_path / "speech.md"
    speech = CHUNKING / "corpora" / "state_of_the_union.md"
    if not speech.is_file():
        pytest.skip(f"chunking data not found at {CHUNKING}")
    docs.write_text(speech.read_text(encoding="utf-8")[:4000], encoding="utf-8")
    sweep = _run(home, "chunking", str(docs), "--questions", "3", "-g", "fixed 64/0")
    assert sweep.returncode == 0, sweep.stderr
    (saved,) = (home / "chunking" / "runs").rglob("fixed-64-0.json")
    target, go = tmp_path / "result.json", tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", REWRITE, str(saved), str(target), str(go)],
            stdout=subprocess.PIPE,
            text=True,
            env=home_env(home),
        )
        for _ in range(2)
    ]
    for p in procs:  # both loaded: released together
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    go.touch()
    failed = [int(p.communicate(timeout=120)[0]) for p in procs]
    assert failed == [0, 0]
    assert target.read_text() == saved.read_text()  # whole
    assert [p.name for p in tmp_path.iterdir() if "result" in p.name] == ["result.json"]


def test_two_processes_exporting_the_model_at_once_both_succeed(tmp_path: Path) -> None:
    """Two first commands on a fresh machine both export the ONNX model (about 20 s each):
    with one shared ``.partial`` file they traced into it together and one's rename found it
    gone. Each now writes its own, and the export in place is whole and verified."""
    from ragsonde.embedders.local import resolve_model_path
    from ragsonde.embedders.onnx import find_export

    source = Path(resolve_model_path("sentence-transformers/all-MiniLM-L6-v2"))
    model = tmp_path / "model"
    for src in source.rglob("*"):  # the weights linked, without any export of theirs
        if src.is_file() and "onnx" not in src.relative_to(source).parts:
            (model / src.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            (model / src.relative_to(source)).symlink_to(src)
    env = {**home_env(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "ragsonde.embedders.export", str(model), "--quant", "fp32"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        for _ in range(2)
    ]
    done = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, done, strict=True):
        assert p.returncode == 0, out + err
    found = find_export(model, "fp32")
    assert found is not None and found[1].min_cosine >= 0.9999
    assert found[0].stat().st_size == found[1].file_size
    assert not [p for p in found[0].parent.iterdir() if p.name.endswith((".partial", ".tmp"))]


def _scifact_slice(scifact: Path, folder: Path, docs: int) -> Path:
    """The first ``docs`` SciFact documents as a BEIR folder, and a benchmark of the test
    queries whose relevant documents are all among them; returns the benchmark."""
    folder.mkdir()
    lines = (scifact / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:docs]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    kept = {json.loads(line)["_id"] for line in lines}
    texts = {}
    for line in (scifact / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        texts[row["_id"]] = row["text"]
    relevant: dict[str, dict[str, int]] = {}
    for line in (scifact / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        qid, doc, grade = line.split("\t")
        relevant.setdefault(qid, {})[doc] = int(grade)
    bench = folder.parent / "bench.jsonl"
    rows = [
        {"query_id": q, "query": texts[q], "relevant": r}
        for q, r in relevant.items()
        if set(r) <= kept
    ]
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return bench


def test_a_variant_folder_left_by_a_killed_tune_is_deleted_by_the_next(
    scifact_dir: Path, tmp_path: Path
) -> None:
    """``kill -9`` during ``tune`` leaves the variant it was measuring: a copy of the collection
    in the temporary folder, which no later run deleted (they piled up, one per kill)."""
    home, scratch = tmp_path / "home", tmp_path / "scratch"
    scratch.mkdir()
    bench = _scifact_slice(scifact_dir, tmp_path / "beir", 300)
    ingest = _run(home, "ingest", str(tmp_path / "beir"), "--format", "beir", "-c", "sci")
    assert ingest.returncode == 0, ingest.stderr
    env = {**home_env(home), "TMPDIR": str(scratch)}
    args = [sys.executable, "-m", "ragsonde", "tune", str(bench), "-c", "sci", "--folds", "2"]
    killed = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        _wait_for(
            "a variant was built",
            lambda: any((scratch / d).is_dir() for d in os.listdir(scratch)),
            [killed],
        )
    finally:
        killed.kill()
        killed.wait()
    (left,) = scratch.glob("ragsonde-variant-*")
    old = time.time() - 2 * ORPHAN_AGE_S
    os.utime(left, (old, old))  # killed a while ago
    again = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert not left.exists()
    assert not list(scratch.glob("ragsonde-variant-*"))
