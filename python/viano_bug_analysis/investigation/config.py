"""The investigation configuration (TOML), read by ``vba investigate``.

```toml
[llm]                                   # docs/llm-adapter.md
base_urls = ["http://127.0.0.1:8080/v1"]
model = "qwen2.5-coder"
api_key_env = "VBA_LLM_KEY"
max_tokens = 2048

[investigation]
max_steps = 8                           # model answers per hypothesis
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

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from viano_bug_analysis.errors import InvestigationConfigError
from viano_bug_analysis.files import read_regular_file
from viano_bug_analysis.investigation.llm import LlmConfig, LlmError


@dataclass(frozen=True, slots=True)
class InvestigationSettings:
    max_steps: int = 8
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


MAX_CONFIG_BYTES = 1024 * 1024

_LIMITS = {
    "max_steps": (1, 1000),
    "invalid_response_limit": (1, 1000),
    "response_recovery_version": (0, 1),
    "budget_per_hypothesis": (1, 10**12),
    "dispatch_cost": (1, 10**9),
    "max_response_bytes": (1024, 1 << 24),
}


def load_investigation_config(path: str | os.PathLike[str]) -> InvestigationConfig:
    file = Path(os.path.abspath(path))
    raw = read_regular_file(
        file, max_bytes=MAX_CONFIG_BYTES, what="the configuration file", error=_unreadable
    )
    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        _invalid("", "the configuration is not UTF-8 TOML")
    for key in document:
        if key not in {"llm", "investigation", "research"}:
            _invalid(key, "is not a known key")
    llm_table = document.get("llm")
    if not isinstance(llm_table, dict):
        _invalid("llm", "is required and must be a table")
    llm_table = dict(llm_table)
    if "api_key_file" in llm_table:
        llm_table["api_key_file"] = str(file.parent / llm_table["api_key_file"])
    try:
        llm = LlmConfig.from_mapping(llm_table)
    except LlmError as err:
        _invalid(f"llm.{err.details.get('key', '')}".rstrip("."), "is invalid")
    settings = _settings(document.get("investigation", {}))
    research = document.get("research", {})
    if not isinstance(research, dict) or set(research) - {"config"}:
        _invalid("research", "holds only config")
    research_config = None
    if "config" in research:
        if not isinstance(research["config"], str) or not research["config"]:
            _invalid("research.config", "must be a path")
        research_config = file.parent / research["config"]
    return InvestigationConfig(file, llm, settings, research_config)


def _settings(table: Any) -> InvestigationSettings:
    if not isinstance(table, dict):
        _invalid("investigation", "must be a table")
    values: dict[str, int] = {}
    for key, value in table.items():
        if key not in _LIMITS:
            _invalid(f"investigation.{key}", "is not a known key")
        low, high = _LIMITS[key]
        if type(value) is not int or not low <= value <= high:
            _invalid(f"investigation.{key}", f"must be an integer from {low} to {high}")
        values[key] = value
    return InvestigationSettings(**values)


def _unreadable(reason: str, message: str, details: dict[str, Any]) -> InvestigationConfigError:
    # The OS error class, not_a_regular_file (a FIFO is refused, not waited on) or too_large.
    why = details.get("kind", reason)
    return InvestigationConfigError(
        "investigation_config_invalid", message, {"key": "", "reason": why}
    )


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
