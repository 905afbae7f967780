"""Runs the test LLM server and records how it ended.

    python scripts/llm_server_wrapper.py RUN_DIR COMMAND [ARGS...]

Writes into RUN_DIR: ``server.log`` (the command's stdout and stderr),
``server.pid`` (the command's pid, for stopping it) and, once the command has
ended, ``server.exit``: how it ended, worded to follow "the server": "was
killed by SIGILL (signal 4)" or "exited with status 1".
scripts/llm_test_server.sh starts the server through this, so that a server
that dies while nobody waits on it (the tests only see a refused connection)
still leaves its cause behind; tests/real_llm_server.py and the script's own
proof read it.

Any Python 3 runs it; it imports nothing outside the standard library.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path


def describe(returncode: int) -> str:
    """How a process ended, from subprocess's return code (negative: the signal)."""
    if returncode >= 0:
        return f"exited with status {returncode}"
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = "an unknown signal"
    return f"was killed by {name} (signal {number})"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: llm_server_wrapper.py RUN_DIR COMMAND [ARGS...]", file=sys.stderr)
        return 2
    run_dir, command = Path(argv[0]), argv[1:]
    with open(run_dir / "server.log", "wb") as log:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    (run_dir / "server.pid").write_text(f"{child.pid}\n")
    # A stop aimed at the wrapper (the process group) reaches the server too;
    # the wrapper stays to record how the server took it.
    signal.signal(signal.SIGTERM, lambda *_: None)
    signal.signal(signal.SIGINT, lambda *_: None)
    returncode = child.wait()
    temporary = run_dir / "server.exit.tmp"
    try:
        temporary.write_text(describe(returncode) + "\n")
        os.replace(temporary, run_dir / "server.exit")
    except OSError:
        pass  # the run directory was deleted by `stop`: nobody asks any more
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
