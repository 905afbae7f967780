"""scripts/llm_server_wrapper.py: the server's log, pid and how it ended."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WRAPPER = REPO / "scripts" / "llm_server_wrapper.py"
# No core file from the child that kills itself.
NO_CORE = "import resource; resource.setrlimit(resource.RLIMIT_CORE, (0, 0))"


def wrap(run_dir: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(WRAPPER), str(run_dir), sys.executable, "-c", code],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def test_a_server_killed_by_a_signal_leaves_the_signal_and_its_log(tmp_path: Path) -> None:
    code = f"{NO_CORE}; import os, signal; print('loading the model', flush=True); "
    code += "os.kill(os.getpid(), signal.SIGILL)"
    done = wrap(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "server.exit").read_text() == "was killed by SIGILL (signal 4)\n"
    assert (tmp_path / "server.log").read_text() == "loading the model\n"
    assert int((tmp_path / "server.pid").read_text()) > 0


def test_a_server_that_exits_leaves_its_status(tmp_path: Path) -> None:
    done = wrap(tmp_path, "import sys; print('bad flag', file=sys.stderr); sys.exit(3)")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "server.exit").read_text() == "exited with status 3\n"
    assert (tmp_path / "server.log").read_text() == "bad flag\n"
