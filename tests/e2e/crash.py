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
"""

from __future__ import annotations

import os
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


__all__ = ["KillAtCommit", "Killed"]
