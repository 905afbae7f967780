"""A real small context: `vba interpret` and `vba investigate` of a case built on the
fixture world DB, through llama-cpp-python's server started with an 8,192-token
context (the test services' SmolLM2-135M), with ``[llm] context_tokens = 8192``.

The 135M model's answers are nonsense and may be rejected (the case may block on
INVALID_LLM_RESPONSES); what is tested is that every request fits: no
``context_budget_exceeded`` and no refusal of the server for the prompt's length.
Before the case brief, the first prompt of such a case was about 160,000 tokens;
with it the interpretation's prompt counts 5,839 (SmolLM2 reported 4,302) and the
run took 11 minutes on a loaded 2-core machine.
Needs the test services (MariaDB and the LLM server: scripts/with_test_services.sh).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.case.builder.conftest import (  # noqa: F401 (fixtures)
    ResearchSetup,
    case_spec,
    mariadb,
    research_setup,
    source_repo,
)
from tests.e2e.test_real_llm_server import _decisions, vba
from tests.investigation.package_fixtures import built_with_research
from tests.real_llm_server import real_llm_server
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.investigation import interpretation_prompt
from viano_bug_analysis.investigation.prompts import build_messages
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.token_budget import message_tokens

pytestmark = [pytest.mark.integration, pytest.mark.slow]
CONTEXT = 8192
MAX_TOKENS = 384


def test_a_fixture_world_case_runs_through_an_8k_context(
    tmp_path: Path,
    research_setup: ResearchSetup,  # noqa: F811 (the imported fixture)
) -> None:
    server = real_llm_server()
    spec_path = case_spec(tmp_path / "inputs")
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"] = []  # the model proposes them
    spec_path.write_bytes(orjson.dumps(spec))
    package = built_with_research(spec_path, tmp_path / "package", research_setup)
    config = tmp_path / "investigate.toml"
    config.write_text(
        "[llm]\n"
        f'base_urls = ["{server.base_url}"]\n'
        f'model = "{server.model}"\n'
        "temperature = 0.0\n"
        f"max_tokens = {MAX_TOKENS}\n"
        f"context_tokens = {CONTEXT}\n"
        "read_timeout = 600.0\n"
        "max_retries = 0\n"
        'response_format = "auto"\n'
        "[investigation]\n"
        "max_steps = 2\n"
        "max_hypotheses = 1\n"
        "invalid_response_limit = 2\n"
        "response_recovery_version = 1\n"
        "[research]\n"
        f'config = "{research_setup.config_path}"\n'
    )
    investigated = vba("investigate", package, "--config", config)
    assert investigated.returncode in (0, 4), investigated.stderr
    assert "Traceback" not in investigated.stderr
    assert "context_budget_exceeded" not in investigated.stderr
    assert "llm_" not in investigated.stderr  # no refusal of the server either
    assert _decisions(package), "the model was asked"
    # Every prompt sent, rebuilt from its record, fitted the window with the answer.
    for messages in _sent_prompts(package):
        assert message_tokens(messages) + MAX_TOKENS <= CONTEXT


def _sent_prompts(package: Path) -> list[list[dict[str, str]]]:
    layout = PackageLayout(package)
    prompts = []
    for revision in layout.files.list(PackageLayout.INTERPRETATION) or ():
        folder = PackageLayout.INTERPRETATION / revision
        for name in sorted(layout.files.list(folder) or ()):
            if name.endswith("-call.json"):
                call = layout.files.read_document(folder / name) or {}
                prompts.append(
                    interpretation_prompt.build_messages(call["context"], call["prompt_version"])
                )
    log = StepLog(layout)
    for hid, step, attempt, event in log.events():
        if event == "call":
            call = log.get(hid, step, attempt, event) or {}
            prompts.append(build_messages(call["prompt_version"], call["context"]))
    assert prompts
    return prompts
