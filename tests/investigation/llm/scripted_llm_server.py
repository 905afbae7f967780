"""A scripted OpenAI-compatible chat-completions server on loopback, for tests.

Each POST to ``.../chat/completions`` consumes the next scripted step::

    with ScriptedLlmServer([
        reply('{"next": ...}', prompt_tokens=120, completion_tokens=30),
        status(503),                 # HTTP 503 with a body that must never leak
        drop(),                      # close the connection without answering
        hang(),                      # answer nothing until the client times out
        raw(b"not json"),            # a 200 with this exact body
        oversize(2_000_000),         # a 200 body of that many bytes
    ]) as server:
        config = LlmConfig(base_urls=(server.base_url,), model="m")
        ...
        server.requests[0].messages   # what the client sent
        server.requests[0].authorization

Plain strings in the script are shorthand for ``reply(text)``. ``add()``
appends steps while the server runs. A request beyond the script gets HTTP 500
and increments ``unscripted`` so a test can assert that nothing extra was sent.

``gate`` plays a server's own rules about the request (what response formats
it takes, see ``recipe_servers.py``): called with the parsed body, it returns
the step that answers instead (a refusal), or None to let the script answer.
A gated answer consumes no step.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SECRET_ERROR_BODY = b'{"error":{"message":"LEAK-CANARY-error-body"}}'
SECRET_ERROR_HEADER = "LEAK-CANARY-error-header"


@dataclass(frozen=True)
class Step:
    """One scripted answer. Build it with the helpers below."""

    kind: str  # "reply" | "status" | "drop" | "hang" | "raw"
    content: str = ""
    status: int = 200
    body: bytes = b""
    prompt_tokens: int = 11
    completion_tokens: int = 7
    model: str | None = "scripted-model"
    finish_reason: str = "stop"
    usage: bool = True
    content_length: bool = True
    reset: bool = False
    seconds: float = 30.0


def reply(
    content: str,
    *,
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    model: str | None = "scripted-model",
    finish_reason: str = "stop",
    usage: bool = True,
) -> Step:
    """A 200 chat completion whose first choice says ``content``."""
    return Step(
        "reply",
        content=content,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        model=model,
        finish_reason=finish_reason,
        usage=usage,
    )


def status(code: int, body: bytes = SECRET_ERROR_BODY) -> Step:
    """An HTTP error status with a body and a header the client must never keep."""
    return Step("status", status=code, body=body)


def drop(*, reset: bool = False) -> Step:
    """Close the connection without an answer (``reset=True``: send a TCP RST)."""
    return Step("drop", reset=reset)


def hang(seconds: float = 30.0) -> Step:
    """Send nothing for ``seconds`` (or until the server stops), then close."""
    return Step("hang", seconds=seconds)


def raw(body: bytes, *, code: int = 200, content_length: bool = True) -> Step:
    """Answer ``code`` with exactly ``body``; without Content-Length if asked."""
    return Step("raw", status=code, body=body, content_length=content_length)


def oversize(size: int, *, content_length: bool = True) -> Step:
    """A 200 whose body is ``size`` bytes of valid-looking JSON padding."""
    padding = b" " * max(0, size - 2)
    return raw(b"{" + padding + b"}", content_length=content_length)


@dataclass
class ReceivedRequest:
    """What the server saw of one request."""

    path: str
    body: dict[str, Any] | None
    authorization: str | None
    content_type: str | None

    @property
    def has_authorization(self) -> bool:
        return self.authorization is not None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages", []))

    @property
    def model(self) -> str | None:
        return (self.body or {}).get("model")


@dataclass
class _Script:
    steps: list[Step]
    requests: list[ReceivedRequest] = field(default_factory=list)
    unscripted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    gate: Callable[[dict[str, Any] | None], Step | None] | None = None

    def next_step(self, request: ReceivedRequest) -> Step | None:
        with self.lock:
            self.requests.append(request)
            refusal = self.gate(request.body) if self.gate is not None else None
            if refusal is not None:
                return refusal
            if self.steps:
                return self.steps.pop(0)
            self.unscripted += 1
            return None


class ScriptedLlmServer:
    """The server; use it as a context manager (starts on enter, stops on exit)."""

    def __init__(
        self,
        steps: Iterable[Step | str] = (),
        *,
        gate: Callable[[dict[str, Any] | None], Step | None] | None = None,
    ) -> None:
        self._script = _Script([_as_step(step) for step in steps], gate=gate)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self._script))
        self._server.daemon_threads = True
        # A short poll interval keeps stop() (and so each test) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._script.lock:
            return list(self._script.requests)

    @property
    def unscripted(self) -> int:
        return self._script.unscripted

    @property
    def remaining(self) -> int:
        with self._script.lock:
            return len(self._script.steps)

    def add(self, *steps: Step | str) -> None:
        with self._script.lock:
            self._script.steps.extend(_as_step(step) for step in steps)

    def start(self) -> ScriptedLlmServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._script.stopping.set()  # wakes hanging handlers
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLlmServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def refused_url() -> str:
    """A loopback base URL where nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _as_step(step: Step | str) -> Step:
    return reply(step) if isinstance(step, str) else step


def _completion(step: Step) -> bytes:
    document: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": step.content},
                "finish_reason": step.finish_reason,
            }
        ],
    }
    if step.model is not None:
        document["model"] = step.model
    if step.usage:
        document["usage"] = {
            "prompt_tokens": step.prompt_tokens,
            "completion_tokens": step.completion_tokens,
            "total_tokens": step.prompt_tokens + step.completion_tokens,
        }
    return json.dumps(document).encode()


def _handler_for(script: _Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length)
            try:
                body = json.loads(data)
            except ValueError:
                body = None
            step = script.next_step(
                ReceivedRequest(
                    path=self.path,
                    body=body if isinstance(body, dict) else None,
                    authorization=self.headers.get("Authorization"),
                    content_type=self.headers.get("Content-Type"),
                )
            )
            if step is None:
                self._send(500, b'{"error":"script exhausted"}')
            elif step.kind == "reply":
                self._send(200, _completion(step))
            elif step.kind == "status":
                self._send(step.status, step.body, secret_header=True)
            elif step.kind == "raw":
                self._send(step.status, step.body, content_length=step.content_length)
            elif step.kind == "drop":
                self._drop(step.reset)
            elif step.kind == "hang":
                script.stopping.wait(step.seconds)
                self.close_connection = True
            else:  # pragma: no cover - a typo in a test script
                raise AssertionError(step.kind)

        def _send(
            self,
            code: int,
            body: bytes,
            *,
            content_length: bool = True,
            secret_header: bool = False,
        ) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            if content_length:
                self.send_header("Content-Length", str(len(body)))
            if secret_header:
                self.send_header("X-Request-Secret", SECRET_ERROR_HEADER)
            self.send_header("Connection", "close")
            self.end_headers()
            # The client may stop reading early (size limit): that is fine.
            with contextlib.suppress(OSError):
                self.wfile.write(body)
            self.close_connection = True

        def _drop(self, reset: bool) -> None:
            if reset:
                # SO_LINGER with a zero timeout turns close() into a TCP RST.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
            else:
                self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True

    return Handler
