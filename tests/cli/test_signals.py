"""``ragsonde serve`` as a real process stopped by a signal: it shuts down cleanly (the app's
shutdown runs, no traceback), exits as the signal says, and leaves the embedded store unlocked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ragsonde.store.edge import EdgeStore
from tests.support import ROOT, closed_port

pytestmark = pytest.mark.slow


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    ("sig", "code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM)],
    ids=["SIGINT", "SIGTERM"],
)
def test_serve_stops_cleanly_on_a_signal(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    port = closed_port()
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("QDRANT_URL", "RAGSONDE_API_KEY")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragsonde", "serve", "--port", str(port), "--home", str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
        # A shell's background job starts with SIGINT ignored, and a child inherits that: then
        # Python installs no KeyboardInterrupt handler and uvicorn's re-raised SIGINT does
        # nothing (exit 0). The server starts as from a terminal, whatever ran the tests.
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not come up"
            time.sleep(0.2)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == code, err
    assert "Application shutdown complete" in err and "Traceback" not in err
    # Ctrl-C is said on the way out (Typer's exit 130 alone prints nothing); SIGTERM is not
    assert ("Interrupted (Ctrl-C)." in err) is (sig == signal.SIGINT), err
    EdgeStore(home).close()  # the lock was released: the store opens again


def test_a_cleanup_that_hangs_after_sigterm_is_cut_at_the_grace(tmp_path: Path) -> None:
    """``ragsonde mcp``'s event loop once spun for ever while it shut down after a SIGTERM
    that landed mid-request: the process outlived the signal. The cleanup a SIGTERM starts now
    has SIGTERM_GRACE_S; then the process ends as the signal says."""
    script = tmp_path / "hang.py"
    script.write_text(
        "import signal, sys, time\n"
        "import ragsonde.cli as cli\n"
        "cli.SIGTERM_GRACE_S = 1.0\n"
        "cli._GRACE['armed'] = True  # as cli.run() arms it\n"
        "signal.signal(signal.SIGTERM, cli._on_sigterm)\n"
        "try:\n"
        "    print('ready', flush=True)\n"
        "    time.sleep(60)\n"
        "finally:\n"
        "    while True:  # a cleanup that never ends\n"
        "        time.sleep(0.05)\n"
    )
    with subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == -signal.SIGTERM
        assert time.monotonic() - started < 15
