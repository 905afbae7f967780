"""A kill at a file commit, in process.

Every durable file of a package becomes visible in one system call: the
``link`` of a fsynced temporary file (write-once files, logs, call records,
captures) or the ``rename`` of the manifest (``os.replace``). ``KillAtCommit``
lets that call succeed and then stops the process's work with ``Killed``, a
``BaseException`` that no store catches, so what is on disk is exactly what a
``kill -9`` right after that commit would leave (the temporary files a real kill
leaves behind are skipped by every reader, so their absence changes nothing).

    with KillAtCommit(5) as kill:          # die right after the 5th commit
        with pytest.raises(Killed):
            controller.run()
    with KillAtCommit(None) as count:      # count the commits of a clean run
        controller.run()
    count.commits

``sigkill_after_commit`` (through ``CHILD``, or ``sigkill_vba``) does the same
with a real ``SIGKILL`` in a child process running ``vba``;
``rerun_after_each_commit`` (in process) and ``sigkill_after_each_commit``
(``vba`` in a child) kill a scripted run after each of its commits in turn and
check that every rerun ends as the clean run.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer

REPO = Path(__file__).resolve().parents[2]


class Killed(BaseException):
    """The simulated kill -9 (not an ``Exception``: nothing may handle it)."""


class KillAtCommit:
    def __init__(self, kill_after: int | None) -> None:
        self.kill_after = kill_after
        self.commits = 0
        self.points: list[str] = []
        self._originals: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> KillAtCommit:
        for name in ("link", "replace"):
            original = getattr(os, name)
            self._originals[name] = original
            setattr(os, name, self._wrap(name, original))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for name, original in self._originals.items():
            setattr(os, name, original)

    def _wrap(self, name: str, original: Any) -> Any:
        def commit(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            with self._lock:
                self.commits += 1
                target = os.fspath(args[1]) if len(args) > 1 else "?"
                self.points.append(f"{name} {os.path.basename(target)}")
                if self.kill_after is not None and self.commits == self.kill_after:
                    raise Killed(self.points[-1])
            return result

        return commit


def sigkill_after_commit(kill_after: int) -> None:
    """In a child process: a real ``kill -9`` of this process right after its
    ``kill_after``-th file commit (nothing runs after it: no ``finally``, no
    clean-up of temporary files)."""
    commits = 0
    for name in ("link", "replace"):
        original = getattr(os, name)

        def commit(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            nonlocal commits
            result = _original(*args, **kwargs)
            commits += 1
            if commits == kill_after:
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        setattr(os, name, commit)


# `python -c CHILD N ARGS...`: `vba ARGS...`, killed with SIGKILL after commit N.
CHILD = (
    "import sys; from tests.e2e.crash import sigkill_after_commit; "
    "sigkill_after_commit(int(sys.argv[1])); from viano_bug_analysis.cli import main; "
    "raise SystemExit(main(sys.argv[2:]))"
)


def sigkill_vba(kill_after: int, *args: str) -> int:
    """``vba ARGS`` in a child process killed with SIGKILL right after its
    ``kill_after``-th file commit (0: never); its exit code. A traceback on
    stderr fails the test."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(kill_after), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode


def rerun_after_each_commit(
    template: Path,
    work: Path,
    script: list[str],
    clean: KillAtCommit,
    run: Callable[[Path, ScriptedLlmServer], str],
    *,
    state: str,
    end: Callable[[Path], Any],
    expected: Any,
) -> None:
    """For each commit N that ``clean`` counted in the clean run: a fresh copy of
    ``template`` is run in process by ``run(package, server)`` (which returns the
    end state), killed right after commit N, and run again. The rerun must end in
    ``state``, having asked the server exactly ``script`` (none lost, none
    repeated), with ``end(package) == expected``."""
    for stop in range(1, clean.commits + 1):
        package = work / f"k{stop:03d}"
        shutil.copytree(template, package)
        point = f"killed after commit {stop} ({clean.points[stop - 1]})"
        with ScriptedLlmServer(script) as server:
            with KillAtCommit(stop), pytest.raises(Killed):
                run(package, server)
            assert run(package, server) == state, point
            assert len(server.requests) == len(script), point  # none lost, none repeated
            assert server.unscripted == 0, point
        assert end(package) == expected, point
        shutil.rmtree(package)


VbaRun = Callable[[Path, ScriptedLlmServer, int], int]


def sigkill_after_each_commit(
    template: Path, work: Path, script: list[str], vba: VbaRun, end: Callable[[Path], Any]
) -> int:
    """Kill-and-rerun over every file commit of a scripted ``vba`` run.

    ``vba(package, server, kill_after)`` runs the command on ``package`` (through
    ``sigkill_vba``) and returns its exit code. A copy of ``template`` is run to
    the end first (the clean run); then for N = 1, 2, ... a fresh copy is killed
    after commit N and run again: that rerun must exit 0 having asked the server
    exactly ``script`` (none lost, none repeated), and ``end(package)`` must equal
    ``end`` of the clean run. Stops when a run has fewer than N commits; returns
    how many were killed after. The clean copy stays in ``work / "clean"``."""
    clean = work / "clean"
    shutil.copytree(template, clean)
    with ScriptedLlmServer(script) as server:
        assert vba(clean, server, 0) == 0
    expected = end(clean)
    stop = 1
    while True:
        package = work / f"s{stop:03d}"
        shutil.copytree(template, package)
        with ScriptedLlmServer(script) as server:
            code = vba(package, server, stop)
            if code == 0:  # the run had fewer commits than stop: all were killed after
                shutil.rmtree(package)
                return stop - 1
            assert code == -signal.SIGKILL, f"commit {stop}: exit {code}"
            assert vba(package, server, 0) == 0, f"commit {stop}"
            assert len(server.requests) == len(script), f"commit {stop}"
            assert server.unscripted == 0, f"commit {stop}"
        assert end(package) == expected, f"commit {stop}"
        shutil.rmtree(package)
        stop += 1


__all__ = [
    "CHILD",
    "KillAtCommit",
    "Killed",
    "rerun_after_each_commit",
    "sigkill_after_commit",
    "sigkill_after_each_commit",
    "sigkill_vba",
]
