"""llama.cpp's server in a child process: ``python -m ragsonde.labels.llama_child SPEC_JSON``.

Why a process and not a thread: ``xllamacpp.Server()`` holds the GIL while it loads the model
and swallows a SIGINT that arrives meanwhile, so a Ctrl-C during the start was lost and the
command hung with the server still listening; and a crash in native code would take the whole
command down. Here the parent waits on a pipe (a SIGINT interrupts it at once) and ends the
child with SIGTERM, which kills it whatever it is doing.

The protocol: the child prints one JSON line on stdout, ``{"url": "http://127.0.0.1:PORT"}`` or
``{"error": "…"}``, then serves until its stdin closes (the parent closed it, or died: the child
then dies with it; on Linux the kernel also kills it when the parent dies).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

__all__ = ["main"]

#: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the child when the parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        import contextlib
        import ctypes

        # no prctl: the closed stdin still ends the child
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the line above: nobody to serve
        raise SystemExit(1)


def _start(spec: dict[str, Any]) -> Any:
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = spec["path"]
    params.n_ctx = spec["n_ctx"]
    params.n_parallel = 1
    params.cpuparams.n_threads = spec["threads"]
    params.cpuparams_batch.n_threads = spec["threads"]
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port, chosen by the OS
    params.verbosity = 0
    if spec.get("chat_template"):
        params.chat_template = spec["chat_template"]
        params.use_jinja = True
    return xlc.Server(params)


def main() -> None:
    # the parent decides when the child ends (a terminal's Ctrl-C reaches the whole group)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    spec = json.loads(sys.argv[1])
    _die_with_parent(int(spec["parent"]))
    try:
        server = _start(spec)
        answer = {"url": str(server.listening_address).rstrip("/")}
    except Exception as e:  # reported to the parent, which raises LlmError with it
        answer = {"error": f"{type(e).__name__}: {e}"}
        server = None
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    if server is not None:
        sys.stdin.read()  # serve until the parent closes the pipe or dies


if __name__ == "__main__":
    main()
