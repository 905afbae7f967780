"""Tokens per step and hypothesis, cost and the repeated prompt prefix, from the stored
records: `vba status`, its JSON and the report show the same numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.cli.helpers import vba
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer, raw
from tests.investigation.package_fixtures import (
    CONCLUDE,
    FIND,
    answer,
    built_package,
    investigate,
)
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import InvestigationConfigError
from viano_bug_analysis.investigation.commands import status_document
from viano_bug_analysis.investigation.config import load_investigation_config
from viano_bug_analysis.investigation.prompts import build_messages
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.token_use import Prices, token_use
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.report.build import build_report
from viano_bug_analysis.report.output import render


def _body(content: str, usage: dict[str, Any], **extra: Any) -> bytes:
    choice = {"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    return orjson.dumps({"choices": [choice], "usage": usage, "model": "m", **extra})


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = built_package(tmp_path)
    script = [
        raw(_body(answer(FIND), {"prompt_tokens": 900, "completion_tokens": 80})),
        # The second answer as llama-server reports its prompt cache.
        raw(
            _body(
                answer(CONCLUDE),
                {"prompt_tokens": 1000, "completion_tokens": 60},
                timings={"cache_n": 850},
            )
        ),
    ]
    with ScriptedLlmServer(script) as server:
        investigate(root, server)
    return root


def test_tokens_per_step_and_hypothesis_come_from_the_stored_replies(package: Path) -> None:
    tokens = token_use(package, Prices(prompt=1.0, completion=2.0))
    assert tokens["by_hypothesis"] == [
        {
            "hypothesis": "H1",
            "prompt_tokens": 1900,
            "completion_tokens": 140,
            "cached_prompt_tokens": 850,
            "answers": 2,
            "answers_without_usage": 0,
            "cost": (1900 * 1.0 + 140 * 2.0) / 1e6,
        }
    ]
    assert [
        (s["step"], s["prompt_tokens"], s["cached_prompt_tokens"]) for s in tokens["by_step"]
    ] == [
        (1, 900, None),
        (2, 1000, 850),
    ]
    assert tokens["total"]["cost"] == pytest.approx(0.00218)


def test_the_repeated_prefix_is_that_of_the_rebuilt_request_messages(package: Path) -> None:
    log = StepLog(PackageLayout(package))
    prompts = []
    for step in (1, 2):
        call = log.get("H1", step, 1, "call")
        assert call is not None
        prompts.append(canonical_bytes(build_messages(call["prompt_version"], call["context"])))
    shared = next(
        (i for i, (a, b) in enumerate(zip(*prompts, strict=False)) if a != b),
        min(map(len, prompts)),
    )
    first, second = token_use(package)["calls"]
    assert first["prefix_share"] is None and first["prompt_bytes"] == len(prompts[0])
    assert second["repeated_prefix_bytes"] == shared
    assert second["prefix_share"] == round(shared / len(prompts[1]), 4)
    # The system rules and the case come first: most of the second prompt repeats.
    assert 0.5 < second["prefix_share"] < 1


def test_status_shows_tokens_per_step_the_prefix_and_the_cost(
    package: Path, tmp_path: Path
) -> None:
    config = tmp_path / "priced.toml"
    config.write_text(
        '[llm]\nbase_urls = ["http://127.0.0.1:9/v1"]\nmodel = "m"\n'
        "price_per_million_prompt = 1.0\nprice_per_million_completion = 2.0\n"
    )
    done = vba("status", package, "--config", config)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index(
        "tokens per hypothesis and step (prompt + completion, cached where reported):"
    )
    assert lines[start + 1] == "  H1: 1900 + 140 (850 cached) in 2 answer(s), cost 0.002180"
    assert lines[start + 2] == "    step 1: 900 + 80 in 1 answer(s), cost 0.001060"
    assert lines[start + 3].startswith("    step 2: 1000 + 60 (850 cached) in 1 answer(s), cost ")
    assert "; prompt prefix repeated " in lines[start + 3]
    assert lines[start + 4].startswith("prompt prefix: ")
    assert lines[start + 5] == "cost: 0.002180 (per million tokens: 1 prompt, 2 completion)"
    # Without prices: the same tokens, no cost.
    plain = vba("status", package).stdout
    assert "cost:" not in plain and "\n  H1: 1900 + 140 (850 cached) in 2 answer(s)\n" in plain
    document = json.loads(vba("status", package, "--json").stdout)
    assert document["tokens"] == json.loads(json.dumps(token_use(package)))
    assert status_document(package)["tokens"]["prices"] is None


def test_the_report_shows_the_same_tokens_in_html_and_markdown(package: Path) -> None:
    report = build_report(package, Prices(prompt=1.0, completion=2.0))
    assert report["tokens"] == token_use(package, Prices(prompt=1.0, completion=2.0))
    markdown = render(report, "md").decode()
    assert "### Tokens per hypothesis and step" in markdown
    assert "| H1 | 2 | 1000 | 60 | 850 | 1 |" in markdown
    assert "| all |  | 1900 | 140 | 850 | 2 |  | 0.002180 |" in markdown
    html = render(report, "html").decode()
    assert "<h3>Tokens per hypothesis and step</h3>" in html
    assert "<td>not reported</td>" in html  # step 1's server said nothing about caching
    assert "Cost at 1 per million prompt and 2 per million completion tokens." in html
    # No prices: no cost column.
    assert "Cost" not in render(build_report(package), "md").decode()


def test_a_package_without_answers_shows_no_token_lines(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    tokens = token_use(root)
    assert tokens["calls"] == [] and tokens["total"]["answers"] == 0
    assert tokens["prompt_prefix"]["share"] is None


@pytest.mark.parametrize(
    ("lines", "key"),
    [
        ("price_per_million_prompt = 1.0\n", "llm"),
        ("price_per_million_prompt = -1.0\nprice_per_million_completion = 1.0\n", "llm"),
        ("price_per_million_prompt = nan\nprice_per_million_completion = 1.0\n", "llm"),
    ],
)
def test_prices_are_checked(tmp_path: Path, lines: str, key: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[llm]\nbase_urls = ["http://127.0.0.1:9/v1"]\nmodel = "m"\n' + lines)
    with pytest.raises(InvestigationConfigError) as caught:
        load_investigation_config(config)
    assert caught.value.details["key"].startswith(key)


def test_prices_are_read(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        '[llm]\nbase_urls = ["http://127.0.0.1:9/v1"]\nmodel = "m"\n'
        "price_per_million_prompt = 0.15\nprice_per_million_completion = 0.6\n"
    )
    assert load_investigation_config(config).prices == Prices(0.15, 0.6)
