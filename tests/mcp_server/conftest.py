"""Fixtures for the MCP server tests: a package, and the SDK's own stdio client.

The database tests reuse the throwaway MariaDB of tests/project_research
(``make test`` starts it); without it they skip, except under CI=true.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

# Re-exported fixtures: the test MariaDB, and the enriched-case setup of the builder tests.
from tests.case.builder.conftest import counting, research_setup, source_repo
from tests.project_research.conftest import mariadb
from tests.tools.package_factory import BuiltPackage, build_package

SOURCE = (
    b"// quest credit\n"
    b"void npc_wolpertinger::JustDied() { KilledMonsterCredit(91001); }\n"
    b"int MAX_THINGS = 3;\n"
)
ROWS = b'[{"entry": 91001, "name": "Wolpertinger"}, {"entry": 2, "name": "Boar"}]'


@pytest.fixture
def package(tmp_path: Path) -> BuiltPackage:
    return build_package(
        tmp_path, sources={"src/npc.cpp": SOURCE}, database={"db/creature_template.json": ROWS}
    )


def server_command(package: Path, *extra: str) -> list[str]:
    return ["-m", "viano_bug_analysis.cli", "mcp", "--package", str(package), *extra]


@asynccontextmanager
async def mcp_session(
    package: Path, *extra: str, env: Mapping[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """A real ``vba mcp`` subprocess, driven by the SDK's ClientSession over stdio."""
    # The stdio client hands the server only a few variables; PYTHONPATH goes too,
    # so a run against a source tree serves that tree's code, not an installed one.
    passed = {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}
    params = StdioServerParameters(
        command=sys.executable,
        args=server_command(package, *extra),
        env={**passed, **dict(env or {})},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def source_batch(package: BuiltPackage, *items: Mapping[str, object]) -> dict[str, object]:
    return package.request(*[dict(item) for item in items])


def find_text(package: BuiltPackage, text: str, **extra: object) -> dict[str, object]:
    return {
        "operation": "source.find_text",
        "arguments": {
            "source_refs": [package.refs["src/npc.cpp"]],
            "text": text,
            "case_sensitive": True,
            "offset": 0,
            "limit": 10,
            **extra,
        },
    }


def lookup(package: BuiltPackage, entry: int) -> dict[str, object]:
    return {
        "operation": "database.lookup",
        "arguments": {
            "source_ref": package.refs["db/creature_template.json"],
            "filters": {"entry": entry},
            "offset": 0,
            "limit": 10,
        },
    }


__all__: Sequence[str] = [
    "counting",
    "find_text",
    "lookup",
    "mariadb",
    "mcp_session",
    "package",
    "research_setup",
    "server_command",
    "source_batch",
    "source_repo",
]
