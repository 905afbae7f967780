"""How much of the prompt a tool answer takes: today's raw JSON payload against
``tools.answer_view`` at 2,000 and 6,000 characters, for real answers of the
fixture world database and the fixture git repository.

Needs the test MariaDB (``scripts/test_services.sh start``, then export the
variables of its env file)::

    .venv/bin/python -m benches.answer_view_size

Prints one line per answer: characters of the payload as the v1 prompt shows
it (canonical JSON, before its 6,000-character cut), of the view at each
budget, and whether the view is complete.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from tests.case.builder.conftest import build_source_repo, write_config
from tests.project_research.conftest import TestDatabase
from tests.project_research.git_fixtures import URL, build_fixture_repo
from viano_bug_analysis.enrichment.reference_query import with_reference_map
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.project_research import ProjectResearch, load_config
from viano_bug_analysis.project_research.captures import model_view
from viano_bug_analysis.project_research.git_source import GitSource
from viano_bug_analysis.tools.answer_view import answer_view

BUDGETS = (2000, 6000)

QUERIES: list[dict[str, Any]] = [
    {"kind": "references", "entity_type": "quest", "id": 91001},
    {"kind": "references", "entity_type": "creature", "id": 90002},
    {"kind": "references", "entity_type": "quest", "id": 90001},
    {"kind": "source.search", "text": "Wolpertinger", "case_sensitive": False, "offset": 0,
     "limit": 100},
    {"kind": "source.search", "text": "9100", "case_sensitive": True, "offset": 0, "limit": 100},
    {"kind": "source.search", "text": "91001", "case_sensitive": True, "whole_word": True,
     "offset": 0, "limit": 100},
    {"kind": "source.read",
     "path": "src/server/scripts/EasternKingdoms/zone_wolpertinger_glade.cpp",
     "start_line": 1, "end_line": 54},
    {"kind": "database.rows", "table": "quest_template", "columns": ["ID", "LogTitle",
     "QuestDescription", "RewardNextQuest", "Flags"], "filters": [], "offset": 0, "limit": 50},
    {"kind": "database.schema", "table": "quest_template"},
]  # fmt: skip


# Searches over the larger repository of tests/project_research (hundreds of files).
GIT_QUERIES: list[dict[str, Any]] = [
    {"kind": "source.search", "text": "Wolpertinger", "case_sensitive": True, "offset": 0,
     "limit": 100},
    {"kind": "source.search", "text": "1", "case_sensitive": True, "offset": 0, "limit": 100},
    {"kind": "source.search", "text": "1", "case_sensitive": True, "whole_word": True,
     "offset": 0, "limit": 100},
]  # fmt: skip


def _database() -> TestDatabase:
    port = os.environ["VBA_TEST_DB_PORT"]
    password = Path(os.environ["VBA_TEST_DB_PASSWORD_FILE"]).read_text().strip()
    return TestDatabase(port=int(port), password=password, directory=None)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo, commit = build_source_repo(root / "repo")
        (root / "cfg").mkdir()
        config = write_config(root / "cfg", _database(), repo, commit)
        research = with_reference_map(ProjectResearch(load_config(config)), load_profile())
        with research:
            print("answer | raw JSON | " + " | ".join(f"view@{b}" for b in BUDGETS))
            for query in QUERIES:
                result = research.query(query)
                payload = model_view(result)
                raw = len(canonical_bytes(payload).decode())
                views = [answer_view("project.query", query, payload, max_chars=b) for b in BUDGETS]
                cells = [f"{len(v.text)}{'' if v.complete else ' (part)'}" for v in views]
                label = (
                    f"{query['kind']} {query.get('id', query.get('text', query.get('table', '')))}"
                )
                if query.get("whole_word"):
                    label += " whole_word"
                print(f"{label} | {raw} | " + " | ".join(cells))
        git_repo = build_fixture_repo(root / "git")
        source = GitSource(git_repo.path, git_repo.first, url=URL)
        for query in GIT_QUERIES:
            arguments = {"path_prefix": None, **{k: v for k, v in query.items() if k != "kind"}}
            body = {"origin": source.origin, **source.search(**arguments)}
            raw = len(canonical_bytes(body).decode())
            views = [answer_view("project.query", query, body, max_chars=b) for b in BUDGETS]
            cells = [f"{len(v.text)}{'' if v.complete else ' (part)'}" for v in views]
            label = f"git fixture source.search {query['text']!r}"
            label += " whole_word" if query.get("whole_word") else ""
            print(f"{label} (total {body['total']}) | {raw} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
