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

``sigkill_after_commit`` (through ``CHILD``) does the same with a real
``SIGKILL`` in a child process running ``vba``.
"""

from __future__ import annotations

import os
import signal
import threading
from types import TracebackType
from typing import Any


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

__all__ = ["CHILD", "KillAtCommit", "Killed", "sigkill_after_commit"]
