"""Issue 34 points 6 and 9 without a database: entity types as operators say them
(one alias table), a configuration file given to the wrong flag, and the source
lines of `vba references` saying plainly what was read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import error_of, vba
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.reference_search import check_request
from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.tools.references_command import text_lines
from viano_bug_analysis.vocabulary import ENTITY_TYPE_ALIASES, entity_type_named


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("npc", "creature"), ("NPC", "creature"), ("mob", "creature"), ("object", "gameobject"),
     ("go", "gameobject"), ("GameObject", "gameobject"), ("quest", "quest")],
)  # fmt: skip
def test_an_alias_names_the_profile_type(typed: str, meant: str) -> None:
    assert check_request(vcore_profile(), typed, 36440) == meant


def test_every_alias_names_a_type_of_the_bundled_profile() -> None:
    assert set(ENTITY_TYPE_ALIASES.values()) <= set(vcore_profile().entities)


def test_an_alias_is_no_type_where_the_profile_lacks_its_target() -> None:
    assert entity_type_named("npc", {"quest"}) == "npc"
    with pytest.raises(EnrichmentError) as caught:
        check_request(vcore_profile(), "monster", 1)
    assert caught.value.code == "entity_type_unknown"
    assert "npc = creature" in caught.value.message


def test_the_references_command_takes_npc_before_any_connection(tmp_path: Path) -> None:
    # The type is checked before the config is read: a missing config proves it passed.
    done = vba("references", "--project-config", tmp_path / "none.toml", "--type", "npc",
               "--id", "36440")  # fmt: skip
    assert error_of(done)["error"] == "config_unreadable"


PROJECT = (
    '[source]\nrepository = "r"\nurl = "https://x.invalid/r.git"\ncommit = "' + "a" * 40 + '"\n'
)


def test_a_project_file_given_as_config_names_project_config(tmp_path: Path) -> None:
    # It was "unknown property 'database'" with no hint.
    (tmp_path / "project.toml").write_text(PROJECT)
    (tmp_path / "issue.json").write_text(json.dumps({"number": 1, "title": "t", "body": "b"}))
    done = vba("triage", tmp_path / "issue.json", "--out", tmp_path / "out", "--config",
               tmp_path / "project.toml")  # fmt: skip
    assert done.returncode == 2
    error = error_of(done)
    assert error["error"] == "investigation_config_invalid"
    assert error["details"]["belongs_to"] == "--project-config"
    assert "give it with --project-config" in error["message"]


def test_an_investigation_file_given_as_project_config_names_config(tmp_path: Path) -> None:
    (tmp_path / "investigate.toml").write_text('[llm]\nbase_url = "http://127.0.0.1:1/v1"\n')
    done = vba("profile", "check", "--project-config", tmp_path / "investigate.toml")
    assert done.returncode == 2
    assert error_of(done)["details"]["belongs_to"] == "--config"


def _document(**literal: Any) -> dict[str, Any]:
    base = {"text": "36440", "count": 0, "count_exact": False, "files_unsearched": 0,
            "literal_lines": 6, "lines_read": 6, "lines": []}  # fmt: skip
    return {
        "entity_type": "creature",
        "id": 36440,
        "profile": "vcore",
        "database": {"available": False},
        "source": {
            "available": True,
            "origin": {"commit": "c" * 40},
            "literal": {**base, **literal},
            "constants": [],
            "constant_prefixes": [],
        },
    }


def test_every_line_read_but_some_cut_is_said_as_such() -> None:
    # It said "unknown line(s) name 36440 ... (read 6 of 6 lines holding the digits;
    # the rest was not checked)": there was no rest.
    lines = text_lines(_document())
    assert lines[2] == f"source at {'c' * 12}: no line read names 36440 as a whole word"
    assert lines[3].startswith("  (read all 6 lines holding the digits; some are longer")
    assert "the rest was not checked" not in "\n".join(lines)


def test_lines_not_read_are_counted() -> None:
    lines = text_lines(_document(count=2, literal_lines=300, lines_read=200))
    assert lines[2].endswith("at least 2 line(s) name 36440 as a whole word")
    assert "the other 100 were not read" in lines[3]


def test_an_exact_count_needs_no_gloss() -> None:
    lines = text_lines(_document(count=0, count_exact=True))
    assert lines[2].endswith(": 0 line(s) name 36440 as a whole word") and len(lines) == 3
