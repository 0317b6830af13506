"""Hostile input at the CLI (issue 13), as a user's shell sends it: a real process, real files.

Bad bytes in argv, bad batch files, a malformed ragsonde.toml: each is VALIDATION_ERROR naming
what (and where) with exit 2, never a traceback. One bad query in a batch fails alone.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.store import open_store
from tests.support import fill

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # every test here starts a process


def run(*args: str | bytes, env: dict[str, str] | None = None, cwd: Path = ROOT, timeout=120):
    """``python -m ragsonde ARGS``; arguments may be bytes (not UTF-8), as a shell passes them."""
    full_env = {k: v for k, v in os.environ.items() if k != "QDRANT_URL"}
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    full_env.update(env or {})
    argv = [os.fsencode(sys.executable), b"-m", b"ragsonde"]
    argv += [a if isinstance(a, bytes) else a.encode() for a in args]
    out = subprocess.run(argv, capture_output=True, env=full_env, timeout=timeout, cwd=cwd)
    return out.returncode, out.stdout.decode(), out.stderr.decode()


def refused(result, *needles: str) -> None:
    """Exit 2, VALIDATION_ERROR, each needle in the message, and no traceback."""
    code, stdout, stderr = result
    assert code == 2, (code, stdout, stderr)
    assert "Traceback" not in stdout + stderr
    assert "VALIDATION_ERROR" in stdout + stderr
    for needle in needles:
        assert needle in stdout + stderr, (needle, stdout, stderr)


# -- argv -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        [b"query", b"lidar \xff range"],
        [b"batch", b"queries-\xfe.jsonl"],
        [b"query", b"lidar", b"--collection", b"d\xe9j\xe0"],  # latin-1, not UTF-8
    ],
)
def test_non_utf8_argv_is_a_validation_error(args):
    refused(run(*args), "not valid UTF-8", "byte 0x")


def test_non_utf8_argv_with_json_prints_the_error_object():
    code, stdout, _ = run(b"query", b"\xff", b"--json")
    assert code == 2
    error = json.loads(stdout)["error"]
    assert error["code"] == "VALIDATION_ERROR" and "UTF-8" in error["message"]


# -- batch files ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "needles"),
    [
        (b"\x00\x01\x02binary\x00", ["line 1 holds binary data (NUL bytes)"]),
        (b'{"text": "ok"}\n{"text": "caf\xe9"}\n', ["line 2 is not UTF-8 text"]),
        ('{"text": "lidar"}\n'.encode("utf-16"), ["it is UTF-16 text", "save it as UTF-8"]),
        (b'{"text": "ok"}\n{"text": "ok"}\n{"text": \n', ["not valid JSON", "line 3"]),
        (b'[{"text": "ok"},\n {"text": }]', ["not valid JSON", "line 2"]),
        (b"\n\n", ["no queries"]),
        (b"[" * 100_000, ["JSON"]),
    ],
)
def test_bad_batch_files_name_the_file_and_line(tmp_path, content, needles):
    path = tmp_path / "queries.jsonl"
    path.write_bytes(content)
    refused(run("batch", str(path), "--home", str(tmp_path / "h")), "queries.jsonl", *needles)


def test_a_folder_given_as_the_batch_file(tmp_path):
    refused(run("batch", str(tmp_path), "--json"), "is a folder")


@pytest.fixture(scope="module")
def home(tmp_path_factory, embedder) -> Path:
    path = tmp_path_factory.mktemp("hostile-home")
    store = open_store(Settings(home=path))
    fill(store, embedder, "rag_embedding")
    store.close()
    return path


def test_a_lone_surrogate_query_fails_alone_and_json_still_prints(home, tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        '{"text": "laser distance", "query_id": "good"}\n'
        '{"text": "lidar \\ud800 range", "query_id": "bad"}\n'
        '{"text": "gyroscope drift", "query_id": "good2", "filters": {"section": "\\udc80"}}\n'
        '{"text": "gyroscope drift", "query_id": "good3"}\n',
        encoding="utf-8",
    )
    code, stdout, stderr = run("batch", str(path), "--json", env={"RAGSONDE_HOME": str(home)})
    assert code == 2 and "Traceback" not in stderr, stderr
    out = json.loads(stdout)
    assert out["status"] == "partial"
    by_id = {r["query_id"]: r for r in out["responses"]}
    assert by_id["good"]["status"] == by_id["good3"]["status"] == "success"
    assert by_id["good"]["results"] and by_id["good3"]["results"]
    for bad in ("bad", "good2"):
        assert by_id[bad]["error"]["code"] == "VALIDATION_ERROR"
        assert "Unicode" in by_id[bad]["error"]["message"]
    assert by_id["bad"]["query"] == "lidar \ufffd range"
    code, stdout, stderr = run("batch", str(path), env={"RAGSONDE_HOME": str(home)})
    assert code == 2 and "Traceback" not in stdout + stderr and "partial" in stdout


# -- ragsonde.toml --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "needles"),
    [
        (b'collection = "docs"\nhome = "unterminated\n', ["not valid TOML", "line 2"]),
        (b'collection = "d\xe9j\xe0"\n', ["not UTF-8", "line 1"]),
        (b"top_k = [1, 2\n", ["not valid TOML"]),
    ],
)
def test_a_malformed_config_file_is_a_validation_error(tmp_path, content, needles):
    (tmp_path / "ragsonde.toml").write_bytes(content)
    refused(run("query", "lidar", cwd=tmp_path), "ragsonde.toml", *needles)


def test_a_folder_named_as_the_config_file(tmp_path):
    (tmp_path / "conf").mkdir()
    refused(run("query", "x", env={"RAGSONDE_CONFIG": str(tmp_path / "conf")}), "is a folder")


# -- serve ----------------------------------------------------------------------------------------
def test_serve_on_a_busy_port_fails_before_loading_the_model():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        started = time.monotonic()
        result = run("serve", "--port", str(port), timeout=60)
        elapsed = time.monotonic() - started
    refused(result, f"127.0.0.1:{port}", "--port")
    assert elapsed < 8, elapsed  # loading the model alone takes ~10 s here


# -- ingest -------------------------------------------------------------------------------------
def test_symlinks_leaving_the_folder_are_skipped_and_listed(tmp_path):
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "passwords.md").write_text("# Secret\n\nhunter2 is the password.\n")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "lidar.md").write_text("# Lidar\n\nLidar times laser pulses.\n")
    (docs / "inside.md").symlink_to(docs / "lidar.md")  # stays inside: fine
    (docs / "leak.md").symlink_to(outside / "passwords.md")
    (docs / "sub" / "up.md").symlink_to(Path("..") / ".." / "secret" / "passwords.md")
    (docs / "dirlink").symlink_to(outside, target_is_directory=True)
    (docs / "latin1.md").write_bytes(b"# Caf\xe9\n\nna\xefve\n")
    home = tmp_path / "home"
    code, stdout, stderr = run("ingest", str(docs), "-c", "links", "--home", str(home), "--json")
    assert code == 0, stderr
    report = json.loads(stdout)
    failed = {f["source"]: f["reason"] for f in report["failed"]}
    assert "outside" in failed["leak.md"] and "outside" in failed["sub/up.md"]
    assert "UTF-8" in failed["latin1.md"] and "line 1" in failed["latin1.md"]
    assert report["documents"] == 2  # lidar.md and inside.md
    code, stdout, _ = run("query", "password hunter2", "-c", "links", "--home", str(home), "--json")
    assert code == 0
    assert all("hunter2" not in r["text"] for r in json.loads(stdout)["results"])


def test_a_broken_front_matter_is_a_warning_naming_the_file(tmp_path):
    """Markdown whose front matter is not valid YAML is ingested as text (it was), and the run
    now says that its metadata (here its url and title) was not read."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lidar.md").write_text("---\ntitle: Lidar\nurl: [unclosed\n---\nLidar times pulses.\n")
    (docs / "radar.md").write_text("---\ntitle: Radar\n---\nRadar times echoes.\n")
    home = tmp_path / "home"
    code, stdout, stderr = run("ingest", str(docs), "-c", "fm", "--home", str(home), "--json")
    assert code == 0, stderr
    report = json.loads(stdout)
    assert report["documents"] == 2 and report["failed"] == []
    assert [w for w in report["warnings"] if "front matter" in w] == [
        w for w in report["warnings"] if w.startswith("lidar: ")
    ]
    assert any(w.startswith("lidar: ") and "not valid YAML" in w for w in report["warnings"])
    assert "lidar: its front matter is not valid YAML" in stderr


def test_an_ingest_that_read_nothing_but_failures_fails(tmp_path):
    """A single file named on the command line that cannot be read (or a folder whose every
    file failed) is no ingest: exit 1 saying so, in the terminal and with --json. It exited 0
    with "Ingested 0 documents"."""
    bad = tmp_path / "latin1.md"
    bad.write_bytes(b"# Caf\xe9\n\nna\xefve\n")
    home = tmp_path / "home"
    code, _, stderr = run("ingest", str(bad), "-c", "one", "--home", str(home))
    assert code == 1, stderr
    assert "Nothing was ingested" in stderr and "UTF-8" in stderr
    code, stdout, stderr = run("ingest", str(bad), "-c", "one", "--home", str(home), "--json")
    assert code == 1, stderr
    assert json.loads(stdout)["failed"][0]["source"] == "latin1.md"
    good = tmp_path / "docs"
    good.mkdir()
    (good / "lidar.md").write_text("# Lidar\n\nLidar times laser pulses.\n")
    (good / "latin1.md").write_bytes(bad.read_bytes())
    code, _, stderr = run("ingest", str(good), "-c", "two", "--home", str(home))
    assert code == 0, stderr  # one good document: the failed one is listed, not fatal


def test_an_ingest_of_a_folder_with_no_file_it_reads_fails(tmp_path):
    """A folder of PDFs only (or the wrong folder) is no ingest: exit 1 naming the kinds of
    file ingest reads. It exited 0 with "Ingested 0 documents" and an empty collection."""
    folder = tmp_path / "pdfs"
    folder.mkdir()
    (folder / "manual.pdf").write_bytes(b"%PDF-1.4\n")
    home = tmp_path / "home"
    code, _, stderr = run("ingest", str(folder), "-c", "none", "--home", str(home))
    message = " ".join(stderr.split())
    assert code == 1, stderr
    assert f"Nothing was ingested: {folder} holds no file ingest reads (.md," in message, message
    code, stdout, stderr = run("ingest", str(folder), "-c", "none", "--home", str(home), "--json")
    assert code == 1, stderr
    assert json.loads(stdout)["documents"] == 0
    (folder / "lidar.md").write_text("# Lidar\n\nLidar times laser pulses.\n")
    code, _, stderr = run("ingest", str(folder), "-c", "none", "--home", str(home))
    assert code == 0, stderr
    (folder / "lidar.md").unlink()  # emptied on purpose: --prune deletes, and that is an ingest
    code, _, stderr = run("ingest", str(folder), "-c", "none", "--home", str(home), "--prune")
    assert code == 0, stderr


class _Site(BaseHTTPRequestHandler):
    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        if self.path == "/sitemap.xml":
            status, body = (
                200,
                (
                    '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                    f"<url><loc>{base}/lidar</loc></url><url><loc>{base}/gone</loc></url></urlset>"
                ),
            )
        elif self.path == "/lidar":
            status, body = 200, "<html><body><main><h1>Lidar</h1><p>Laser.</p></main></body></html>"
        else:
            status, body = 404, "not found"
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/xml" if "xml" in self.path else "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_web_ingest_with_failed_pages_exits_1_and_lists_them(site, tmp_path):
    home = tmp_path / "home"
    code, stdout, stderr = run("ingest", f"{site}/sitemap.xml", "-c", "web", "--home", str(home))
    assert code == 1, (stdout, stderr)
    assert f"{site}/gone" in stderr and "HTTP 404" in stderr and "Traceback" not in stderr
    assert "Ingested 1 document → " in stdout and "1 page could not be fetched" in stderr
    code, stdout, _ = run(
        "ingest", f"{site}/sitemap.xml", "-c", "web", "--home", str(home), "--json"
    )
    assert code == 1 and json.loads(stdout)["failed"][0]["source"] == f"{site}/gone"


@pytest.mark.parametrize(
    "args",
    [["schema", "traffic"], ["history", "list", "--json"], ["history", "list"]],
    ids=["schema", "json", "table"],
)
def test_standard_output_on_a_full_disk_is_one_error_not_a_traceback(tmp_path, args):
    """``--json > /dev/full``: the files a command writes said "the disk is full", its standard
    output ended in a traceback (OSError: [Errno 28] No space left on device)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGSONDE_", "QDRANT_"))}
    env["RAGSONDE_HOME"] = str(tmp_path / "home")
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "ragsonde", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("VALIDATION_ERROR: Cannot write the standard output: the disk")
