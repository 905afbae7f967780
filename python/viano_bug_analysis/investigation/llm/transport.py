"""One HTTP attempt against one endpoint, with http.client.

The attempt either returns the bytes of a 200 body, raises ``TransientFailure``
(worth retrying or failing over: the network failed or the server said it is
overloaded), or raises a final ``LlmError`` (the server refused the request
itself; asking again would give the same answer).

Of a non-200 reply no header is read, and of its body only the first few
KiB when the request asked for a response format, and only to tell whether
the server refuses that format (``llm_format_refused``, whatever the status:
llama-cpp-python and older llama-server builds answer 500). What is kept is a
fixed reason code; the bytes are dropped at once. The body of an error can
echo the prompt or the key, and a header can carry request IDs that identify
the account, so neither may reach an exception, a record or a log. The
connection is closed after every attempt (``Connection: close``), which
keeps each attempt independent and makes a half-read reply harmless.
"""

from __future__ import annotations

import http.client
import socket
import ssl

from viano_bug_analysis.investigation.llm.config import ApiKey, Endpoint
from viano_bug_analysis.investigation.llm.errors import (
    AUTH_FAILED,
    FORMAT_REFUSED,
    REPLY_TOO_LARGE,
    REQUEST_REJECTED,
    TLS_FAILED,
    UNEXPECTED_STATUS,
    LlmError,
)
from viano_bug_analysis.investigation.llm.response_format import (
    ERROR_BODY_PEEK_BYTES,
    refusal_reason,
)

# Statuses that say "not now" rather than "not this request".
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_READ_CHUNK = 64 * 1024
# Statuses whose answer is about the caller or the load, never the request's form.
_NOT_ABOUT_FORMAT = frozenset({200, 401, 403, 408, 429})


class TransientFailure(Exception):
    """A retryable failure; ``reason`` is a fixed phrase such as ``timeout``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def post_json(
    endpoint: Endpoint,
    body: bytes,
    key: ApiKey | None,
    *,
    connect_timeout: float,
    read_timeout: float,
    max_reply_bytes: int,
    classify_format_refusal: bool = False,
) -> bytes:
    """POSTs ``body`` and returns the 200 reply body (at most ``max_reply_bytes``)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "Connection": "close",
        "User-Agent": "viano-bug-analysis",
    }
    if key is not None:
        headers["Authorization"] = "Bearer " + key.reveal()
    connection: http.client.HTTPConnection
    if endpoint.scheme == "https":
        connection = http.client.HTTPSConnection(
            endpoint.host,
            endpoint.port,
            timeout=connect_timeout,
            context=ssl.create_default_context(),
        )
    else:
        connection = http.client.HTTPConnection(
            endpoint.host, endpoint.port, timeout=connect_timeout
        )
    try:
        try:
            connection.connect()
            # http.client has one timeout; switch it once the connection stands.
            if connection.sock is not None:
                connection.sock.settimeout(read_timeout)
            connection.request("POST", endpoint.path, body=body, headers=headers)
            response = connection.getresponse()
            # With "Connection: close" the response owns the socket; closing
            # the connection alone would leave it open.
            try:
                if classify_format_refusal and response.status not in _NOT_ABOUT_FORMAT:
                    _check_format_refusal(response)
                _check_status(response.status)
                return _read_limited(response, max_reply_bytes)
            finally:
                response.close()
        except ssl.SSLCertVerificationError:
            raise LlmError(
                TLS_FAILED, "the endpoint's TLS certificate was not accepted", {}
            ) from None
        except (OSError, http.client.HTTPException) as err:
            # Only the class is kept: the message can quote a status line or a path.
            raise TransientFailure(_transport_reason(err)) from None
    finally:
        connection.close()


def _check_format_refusal(response: http.client.HTTPResponse) -> None:
    reason = refusal_reason(response.read(ERROR_BODY_PEEK_BYTES))
    if reason is not None:
        status = response.status
        raise LlmError(
            FORMAT_REFUSED,
            f"the endpoint refused the response format (HTTP {status}); set [llm] "
            'response_format = "auto" (it falls back) or a format the server takes',
            {"status": status, "reason": reason},
        )


def _check_status(status: int) -> None:
    if status == 200:
        return
    if status in RETRYABLE_STATUSES:
        raise TransientFailure(f"http_{status}")
    if status in (401, 403):
        raise LlmError(
            AUTH_FAILED, f"the endpoint refused the credentials (HTTP {status})", {"status": status}
        )
    if 400 <= status < 500:
        raise LlmError(
            REQUEST_REJECTED,
            f"the endpoint rejected the request (HTTP {status})",
            {"status": status},
        )
    # Redirects are not followed: the operator configured this URL, and a
    # redirect would let the server pick another one.
    raise LlmError(UNEXPECTED_STATUS, f"the endpoint answered HTTP {status}", {"status": status})


def _read_limited(response: http.client.HTTPResponse, limit: int) -> bytes:
    declared = response.getheader("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        # read(n) also decodes chunked transfer encoding; checking after each
        # chunk keeps memory bounded by limit + one chunk.
        chunk = response.read(_READ_CHUNK)
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int) -> LlmError:
    return LlmError(REPLY_TOO_LARGE, "the reply is larger than max_reply_bytes", {"limit": limit})


def _transport_reason(err: OSError | http.client.HTTPException) -> str:
    # Order matters: several of these are subclasses of each other
    # (RemoteDisconnected is a ConnectionResetError and a BadStatusLine).
    if isinstance(err, (TimeoutError, socket.timeout)):
        return "timeout"
    if isinstance(err, ConnectionRefusedError):
        return "connection_refused"
    if isinstance(err, (ConnectionError, http.client.IncompleteRead)):
        return "connection_lost"
    if isinstance(err, socket.gaierror):
        return "name_resolution_failed"
    if isinstance(err, ssl.SSLError):
        return "tls_error"
    if isinstance(err, http.client.HTTPException):
        return "protocol_error"
    return "network_error"


__all__ = ["RETRYABLE_STATUSES", "TransientFailure", "post_json"]
