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
    FORMAT_REFUSED,
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
from viano_bug_analysis.investigation.llm.response_format import (
    AUTO,
    GRAMMAR,
    JSON_OBJECT,
    JSON_SCHEMA,
    LADDER,
    RESPONSE_FORMATS,
    TEXT,
    AnswerSchema,
    FormatMemory,
    InMemoryFormats,
    SentFormat,
    endpoint_key,
)
from viano_bug_analysis.investigation.llm.transport import RETRYABLE_STATUSES

__all__ = [
    "AUTH_FAILED",
    "AUTO",
    "CONFIG_INVALID",
    "DEFAULT_MAX_REPLY_BYTES",
    "ERROR_CODES",
    "FORMAT_REFUSED",
    "GRAMMAR",
    "INVALID_REPLY",
    "JSON_OBJECT",
    "JSON_SCHEMA",
    "KEY_MISSING",
    "LADDER",
    "MESSAGES_INVALID",
    "REPLY_TOO_LARGE",
    "REQUEST_REJECTED",
    "RESPONSE_FORMATS",
    "RETRYABLE_STATUSES",
    "TEXT",
    "TLS_FAILED",
    "UNAVAILABLE",
    "UNEXPECTED_STATUS",
    "AnswerSchema",
    "ApiKey",
    "ChatClient",
    "ChatModel",
    "ChatRequest",
    "ChatResult",
    "Endpoint",
    "FormatMemory",
    "InMemoryFormats",
    "InvalidResponseCounter",
    "LlmConfig",
    "LlmError",
    "SentFormat",
    "TokenUsage",
    "build_request",
    "endpoint_key",
    "parse_reply",
    "resolve_api_key",
]
