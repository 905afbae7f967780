"""``vba llm check --config C [--json]``: the configured LLM endpoints, before a run.

Prints what ``llm.check.check_llm`` found (JSON with ``--json``) on stdout.
Exit 0 when every endpoint answered the plain text probe; 3 with one typed
JSON error on stderr when one cannot be reached, refuses the credentials or
refuses even plain text (the findings are still printed first); 2 for a bad
configuration.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from viano_bug_analysis.exit_codes import ExitCode
from viano_bug_analysis.investigation.config import load_investigation_config
from viano_bug_analysis.investigation.llm.check import PROBE_MAX_TOKENS, check_failure, check_llm

_OUTCOMES = {
    "honoured": "honoured",
    "ignored": "accepted but not honoured (the answer does not fit)",
    "answered": "answered",
    "refused": "refused",
    "failed": "no usable answer",
    "skipped": "not probed (a format before it is honoured: auto stops there)",
}


def run_llm_check(args: argparse.Namespace) -> int:
    config = load_investigation_config(args.config)
    document = check_llm(config.llm)
    if args.json:
        sys.stdout.write(orjson.dumps(document).decode() + "\n")
    else:
        for line in check_lines(document):
            print(line)
    sys.stdout.flush()
    failure = check_failure(document)
    if failure is not None:
        raise failure
    return ExitCode.OK


def check_lines(document: dict[str, Any]) -> list[str]:
    """The check as lines for a terminal (every value is a number, a fixed
    phrase, a configured name or a model name from the listing)."""
    lines = [f"model: {document['model']}"]
    for endpoint in document["endpoints"]:
        head = f"endpoint {endpoint['index']} ({endpoint['base_url']}): "
        failure = endpoint["failure"]
        if not endpoint["reachable"]:
            why = failure["details"].get("last_reason", failure["code"])
            lines.append(head + f"not reachable ({why})")
            continue
        models = endpoint["models"]
        if models is None:  # refused before anything was listed (credentials)
            lines.append(head + f"reachable; {failure['code']}: {failure['message']}")
            continue
        if models["status"] != 200:
            lines.append(head + f"reachable; GET /models answered HTTP {models['status']}")
        else:
            lines.append(head + f"reachable; GET /models in {models['latency_ms']} ms")
            shown = ", ".join(models["ids"]) or "none"
            if models.get("more"):
                shown += f" and {models['more']} more"
            lines.append(f"  models: {shown}")
            listed = models["listed"]
            if listed is not None:
                lines.append(
                    "  the configured model is listed"
                    if listed
                    else "  the configured model is NOT listed (the server may still answer it)"
                )
        if failure is not None and not endpoint["probes"]:
            lines.append(f"  {failure['code']}: {failure['message']}")
            continue
        window = endpoint["context_window"]
        lines.append(
            f"  context window: {window['tokens']} tokens ({window['source']})"
            if window
            else "  context window: not advertised"
        )
        for name, probe in endpoint["probes"].items():
            lines.append("  " + _probe_line(name, probe))
        honoured = ", ".join(endpoint["formats"]) or "none"
        lines.append(f"  structured formats honoured: {honoured}")
        if failure is not None:
            lines.append(f"  {failure['code']}: {failure['message']}")
    tokens = document["tokens"]
    spent = (
        f"tokens spent: {tokens['total_tokens']} ({tokens['prompt_tokens']} prompt + "
        f"{tokens['completion_tokens']} completion) in {tokens['probe_answers']} probe "
        f"answer(s) of at most {PROBE_MAX_TOKENS} tokens each"
    )
    if tokens["answers_without_usage"]:
        spent += f"; {tokens['answers_without_usage']} without reported usage"
    lines.append(spent)
    return lines


def _probe_line(name: str, probe: dict[str, Any]) -> str:
    line = f"{name}: {_OUTCOMES[probe['outcome']]}"
    if probe["status"] not in (None, 200):
        line += f" (HTTP {probe['status']})"
    elif probe.get("reason"):
        line += f" ({probe['reason']})"
    if probe["latency_ms"] is not None:
        line += f" in {probe['latency_ms']} ms"
    usage = probe.get("usage")
    if usage is not None:
        line += f"; {usage['prompt_tokens']}+{usage['completion_tokens']} tokens"
        if usage["cached_prompt_tokens"] is not None:
            line += f" ({usage['cached_prompt_tokens']} cached)"
    if probe.get("usage_fields"):
        line += f"; usage fields: {', '.join(probe['usage_fields'])}"
    return line


__all__ = ["check_lines", "run_llm_check"]
