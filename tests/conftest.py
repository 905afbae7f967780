"""Suite-wide setup: no test writes into the real user's cache directory, and a
failed test of the real LLM server says how that server ended.

The router's digest cache falls back to ``$XDG_CACHE_HOME`` for a package it
may not write (case/digest_cache.py); the suite points it at a temporary
directory, which subprocesses (the CLI tests) inherit.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator

import pytest

from tests import real_llm_server


@pytest.fixture(scope="session", autouse=True)
def private_user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    # The test during which the server dies sees only the client's error (a
    # reset or refused connection); the cause is in the server's directory.
    report = yield
    if report.failed and _uses_real_llm_server(item):
        cause = real_llm_server.ended_server()
        # real_llm_server() itself fails with the cause: not twice.
        if cause is not None and cause not in str(report.longrepr):
            report.sections.append(("real LLM test server", cause))
    return report


def _uses_real_llm_server(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    return getattr(module, "real_llm_server", None) is real_llm_server.real_llm_server
