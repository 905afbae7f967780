"""An OpenAI-compatible chat-completions adapter (hosted APIs, vLLM,
llama.cpp server, Ollama), built on the standard library and orjson.

See docs/llm-adapter.md. In short::

    config = LlmConfig(base_urls=("http://127.0.0.1:8000/v1",), model="qwen2.5",
                       api_key_env="VBA_LLM_KEY")
    client = ChatClient(config)
    request = client.prepare([{"role": "user", "content": "..."}])
    # reserve budget under request.sha256, then:
    result = client.send(request)        # ChatResult: content, usage, attempts, ...
"""

from __future__ import annotations

from viano_bug_analysis.investigation.llm.client import ChatClient
from viano_bug_analysis.investigation.llm.config import (
    DEFAULT_MAX_REPLY_BYTES,
    ApiKey,
    Endpoint,
    LlmConfig,
    resolve_api_key,
)
from viano_bug_analysis.investigation.llm.errors import (
    AUTH_FAILED,
    CONFIG_INVALID,
    ERROR_CODES,
    INVALID_REPLY,
    KEY_MISSING,
    MESSAGES_INVALID,
    REPLY_TOO_LARGE,
    REQUEST_REJECTED,
    TLS_FAILED,
    UNAVAILABLE,
    UNEXPECTED_STATUS,
    LlmError,
)
from viano_bug_analysis.investigation.llm.invalid_responses import InvalidResponseCounter
from viano_bug_analysis.investigation.llm.messages import (
    ChatModel,
    ChatRequest,
    ChatResult,
    TokenUsage,
    build_request,
    parse_reply,
)
from viano_bug_analysis.investigation.llm.transport import RETRYABLE_STATUSES

__all__ = [
    "AUTH_FAILED",
    "CONFIG_INVALID",
    "DEFAULT_MAX_REPLY_BYTES",
    "ERROR_CODES",
    "INVALID_REPLY",
    "KEY_MISSING",
    "MESSAGES_INVALID",
    "REPLY_TOO_LARGE",
    "REQUEST_REJECTED",
    "RETRYABLE_STATUSES",
    "TLS_FAILED",
    "UNAVAILABLE",
    "UNEXPECTED_STATUS",
    "ApiKey",
    "ChatClient",
    "ChatModel",
    "ChatRequest",
    "ChatResult",
    "Endpoint",
    "InvalidResponseCounter",
    "LlmConfig",
    "LlmError",
    "TokenUsage",
    "build_request",
    "parse_reply",
    "resolve_api_key",
]
