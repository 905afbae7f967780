"""Fixtures for the end-to-end investigation: the CaseBuilder fixtures (real MariaDB,
real git repo) and a loopback TCP proxy in front of MariaDB that can go down and
come back, so a research outage is a real refused connection; and the
shared-prefix measure of prompts that the prompt-economy checks use."""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
from collections.abc import Iterator

import pytest

from tests.case.builder.conftest import mariadb, research_setup, source_repo
from tests.project_research.conftest import TestDatabase
from viano_bug_analysis.investigation.prompts import prompt_text

__all__ = [
    "TcpProxy",
    "mariadb",
    "prefix_ratios",
    "proxy",
    "research_setup",
    "shared_prefix",
    "source_repo",
]


class TcpProxy:
    """Forwards 127.0.0.1:<port> to the test MariaDB; ``down()`` refuses and cuts
    every connection, ``up()`` listens again on the same port."""

    def __init__(self, target_port: int) -> None:
        self._target = ("127.0.0.1", target_port)
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = int(probe.getsockname()[1])
        probe.close()
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        with self._lock:
            if self._listener is not None:
                # shutdown() wakes the blocked accept(); close() alone would not.
                with contextlib.suppress(OSError):
                    self._listener.shutdown(socket.SHUT_RDWR)
                self._listener.close()
                self._listener = None
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self._target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(src, dst), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


@pytest.fixture
def proxy(mariadb: TestDatabase) -> Iterator[TcpProxy]:
    forwarder = TcpProxy(mariadb.port)
    forwarder.up()
    yield forwarder
    forwarder.down()


def shared_prefix(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` have in common."""
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def prefix_ratios(sent: list[list[dict[str, str]]]) -> list[float]:
    """For each prompt after the first (as ``prompt_text`` joins its messages), the
    share of it that repeats the start of the one before (what prefix caching reuses)."""
    texts = [prompt_text(messages) for messages in sent]
    return [shared_prefix(before, now) / len(now) for before, now in itertools.pairwise(texts)]
