"""The investigation configuration (TOML), read by ``vba investigate``.

```toml
[llm]                                   # docs/llm-adapter.md
base_urls = ["http://127.0.0.1:8080/v1"]
model = "qwen2.5-coder"
api_key_env = "VBA_LLM_KEY"
max_tokens = 2048
context_tokens = 16384                  # optional: else what the server advertises, else 8192
response_format = "auto"                # json_schema, falling back per endpoint
price_per_million_prompt = 0.15         # optional, both or neither: cost in vba status
price_per_million_completion = 0.60     # and the report

[investigation]
max_steps = 8                           # model answers per hypothesis
max_hypotheses = 8                      # the most the interpreter proposes (1-8)
invalid_response_limit = 3              # then the case blocks (INVALID_LLM_RESPONSES)
response_recovery_version = 1           # 0: strict parse only (the default)
budget_per_hypothesis = 200000          # budget units (tokens) per hypothesis
dispatch_cost = 500                     # units reserved for each tool dispatch
max_response_bytes = 65536

[research]
config = "project.local.toml"           # optional; enables project.query
```

Relative paths resolve against this file's directory. Errors name the key.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from viano_bug_analysis.config_kinds import FLAGS, INVESTIGATION, PROJECT, misplaced
from viano_bug_analysis.errors import InvestigationConfigError
from viano_bug_analysis.files import (
    NOT_A_REGULAR_FILE,
    TOO_LARGE,
    UNREADABLE,
    check_config,
    load_toml_file,
)
from viano_bug_analysis.investigation.llm import LlmConfig, LlmError
from viano_bug_analysis.investigation.token_use import Prices


@dataclass(frozen=True, slots=True)
class InvestigationSettings:
    max_steps: int = 8
    # The most hypotheses one interpretation proposes: each is investigated
    # (steps, tokens), and a small model's answer must fit max_tokens.
    max_hypotheses: int = 8
    invalid_response_limit: int = 3
    response_recovery_version: int = 0
    budget_per_hypothesis: int = 200_000
    dispatch_cost: int = 500
    max_response_bytes: int = 65_536


@dataclass(frozen=True, slots=True)
class InvestigationConfig:
    path: Path
    llm: LlmConfig
    settings: InvestigationSettings
    research_config: Path | None
    # The operator's prices per million tokens ([llm] price_per_million_*), for
    # showing cost; not part of the adapter's configuration.
    prices: Prices | None = None
    # [llm] context_tokens: the server's context window, when the operator names it
    # (investigation/token_budget.py); not part of the adapter's configuration.
    context_tokens: int | None = None


MAX_CONFIG_BYTES = 1024 * 1024
CONFIG_SCHEMA = "investigation-config-v1"


def load_investigation_config(path: str | os.PathLike[str]) -> InvestigationConfig:
    """The checked configuration in the file at ``path``.

    Structure, types and ranges are the bundled ``investigation-config-v1``
    schema's; the URL rules are ``LlmConfig``'s. Every error is
    ``investigation_config_invalid`` whose ``details["key"]`` is the dotted key
    at fault (``""`` for the whole file), with ``line`` and ``column`` for a
    TOML syntax error and ``reason`` for a file that cannot be read.
    """
    file = Path(os.path.abspath(path))
    what = "the investigation configuration"
    document = load_toml_file(
        file, schema=None, max_bytes=MAX_CONFIG_BYTES, what=what, refuse=_refused
    )
    if (wrong := misplaced(document, INVESTIGATION)) is not None:
        raise InvestigationConfigError(
            "investigation_config_invalid", wrong, {"key": "", "belongs_to": FLAGS[PROJECT]}
        )
    check_config(document, schema=CONFIG_SCHEMA, what=what, refuse=_refused)
    llm_table = dict(document["llm"])
    prices = _prices(llm_table)
    context_tokens = llm_table.pop("context_tokens", None)
    if "api_key_file" in llm_table:
        llm_table["api_key_file"] = str(file.parent / llm_table["api_key_file"])
    try:
        llm = LlmConfig.from_mapping(llm_table)
    except LlmError as err:
        _invalid(f"llm.{err.details.get('field', '')}".rstrip("."), "is invalid")
    settings = InvestigationSettings(**document.get("investigation", {}))
    research = document.get("research", {})
    research_config = file.parent / research["config"] if "config" in research else None
    return InvestigationConfig(file, llm, settings, research_config, prices, context_tokens)


PRICE_KEYS = ("price_per_million_prompt", "price_per_million_completion")


def _prices(llm_table: dict[str, Any]) -> Prices | None:
    """Takes the price keys out of ``llm_table`` (the schema checked that both or
    neither are there, and their range; TOML's nan is refused here)."""
    values = [llm_table.pop(key, None) for key in PRICE_KEYS]
    for key, value in zip(PRICE_KEYS, values, strict=True):
        if value is not None and not math.isfinite(value):
            _invalid(f"llm.{key}", "must be a finite number")
    if values[0] is None or values[1] is None:
        return None
    return Prices(float(values[0]), float(values[1]))


def _refused(reason: str, message: str, details: dict[str, Any]) -> InvestigationConfigError:
    kept: dict[str, Any] = {"key": details.get("key", "")}
    if reason == "toml_syntax":
        kept.update((name, details[name]) for name in ("line", "column") if name in details)
    elif reason in (UNREADABLE, NOT_A_REGULAR_FILE, TOO_LARGE):
        # The OS error class, not_a_regular_file (a FIFO is refused, not waited on) or too_large.
        kept["reason"] = details.get("kind", reason)
    return InvestigationConfigError("investigation_config_invalid", message, kept)


def _invalid(key: str, problem: str) -> NoReturn:
    raise InvestigationConfigError(
        "investigation_config_invalid", f"{key or 'the configuration'}: {problem}", {"key": key}
    )


__all__ = [
    "InvestigationConfig",
    "InvestigationConfigError",
    "InvestigationSettings",
    "load_investigation_config",
]
