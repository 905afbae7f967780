"""project-result-v2: ``complete`` means one thing, and version 1 captures still read.

Version 1 said ``complete`` for the coverage meaning and for three provider
booleans of the git source; version 2 names those ``files_unsearched``,
``examined_in_full`` / ``examination_gaps`` and ``walk_finished`` /
``walk_stopped_by`` (docs/project-research-v1.md, "Result versions"). The
captures in ``tests/fixtures/project-captures-v1`` were stored by the code
before version 2: each must still read, verify and keep its SHA-256 byte for
byte, strictly against its own version's schemas, and read by the version 2
names through ``result_versions.current_body``.
"""

from __future__ import annotations

import copy
import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.project_research.research_fakes import FakeDatabase, FakeGit, make_config
from tests.project_research.test_service import VALID
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.project_research import Capture, CaptureError, CaptureStore, ProjectResearch
from viano_bug_analysis.project_research.captures import check_parts
from viano_bug_analysis.project_research.result_versions import SEARCH_KINDS, current_body
from viano_bug_analysis.schema_errors import check
from viano_bug_analysis.schemas import fast_validator, schema_validator

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "project-captures-v1"
STORED = sorted(FIXTURES.glob("*.json"))
GIT_KINDS = (*sorted(SEARCH_KINDS), "source.revision", "source.changes")


def stored(kind: str) -> list[Capture]:
    captures = [Capture.from_bytes(p.read_bytes(), p.stem) for p in STORED]
    return [c for c in captures if c.request["kind"] == kind]


class StoppedGit(FakeGit):
    """Walks cut by a bound (as the v1 fixtures' generator made them, version 2 names)."""

    def revision(self, *, revision: str) -> dict[str, Any]:
        answer = super().revision(revision=revision)
        return {
            **answer,
            "relation": "undetermined",
            "pinned_only": None,
            "reported_only": None,
            "merge_bases": [],
            "walk_finished": False,
            "walk_stopped_by": "walk_limit",
        }

    def changes(self, **kw: Any) -> dict[str, Any]:
        answer = super().changes(**kw)
        return {**answer, "examined_in_full": False, "examination_gaps": ["commit_limit"]}


@pytest.fixture
def research(tmp_path: Path) -> ProjectResearch:
    return ProjectResearch(make_config(tmp_path), git=FakeGit(), database=FakeDatabase())


# --- the old version, as stored ------------------------------------------------------------


def test_the_fixtures_cover_every_kind_and_both_answers_of_each_git_boolean() -> None:
    kinds = {Capture.from_bytes(p.read_bytes(), p.stem).request["kind"] for p in STORED}
    assert kinds == {k for k in VALID}  # references included
    for kind in GIT_KINDS:
        said = {c.result["result"]["complete"] for c in stored(kind)}
        assert said <= {True, False} and said, kind
    for kind in ("source.search", "source.revision", "source.changes"):
        assert {c.result["result"]["complete"] for c in stored(kind)} == {True, False}


@pytest.mark.parametrize("path", STORED, ids=[p.stem[:12] for p in STORED])
def test_a_stored_version_1_capture_reads_and_verifies_byte_for_byte(
    path: Path, tmp_path: Path
) -> None:
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == path.stem
    package = tmp_path / "pkg"
    directory = package / "analysis" / "evidence" / "captures"
    directory.mkdir(parents=True)
    shutil.copy(path, directory / path.name)
    store = CaptureStore(package)
    [listed] = store.list()
    capture = store.get(path.stem)
    assert capture.data == listed.data == data and capture.sha256 == path.stem
    assert capture.document["format_version"] == 1
    assert capture.document["schema"] == "project-result-v1"
    assert check("project-capture-v1", dict(capture.document)) is None
    assert check("project-result-v1", dict(capture.result)) is None
    # Storing it again is no new evidence and writes nothing.
    assert store.put(capture) == (path.stem, False)
    assert (directory / path.name).read_bytes() == data
    # Strict: the version 2 schemas refuse it.
    assert not fast_validator("project-capture-v2").is_valid(dict(capture.document))
    assert not fast_validator("project-result-v2").is_valid(dict(capture.result))


def test_a_version_1_result_wraps_into_the_version_1_capture_it_was() -> None:
    for path in STORED:
        capture = Capture.from_bytes(path.read_bytes(), path.stem)
        assert Capture.from_result(capture.result).data == capture.data


@pytest.mark.parametrize("path", STORED[:1])
def test_a_damaged_version_1_capture_is_still_refused(path: Path) -> None:
    data = path.read_bytes().replace(b'"format_version":1', b'"format_version":2', 1)
    with pytest.raises(CaptureError) as info:
        Capture.from_bytes(data, hashlib.sha256(data).hexdigest())
    assert info.value.code == "capture_corrupt"


def test_versions_do_not_mix_in_one_capture(research: ProjectResearch) -> None:
    old = dict(stored("source.search")[0].document)
    new = dict(research.capture(VALID["source.search"][0]).document)
    for document in (
        {**old, "result": new["result"]},  # a v1 envelope around a v2 result
        {**new, "result": old["result"]},
        {**old, "format_version": 2, "schema": "project-result-v2"},
    ):
        with pytest.raises(CaptureError) as info:
            Capture.from_document(document)
        assert info.value.code == "capture_invalid"


def test_a_references_answer_holds_parts_of_its_own_version_only() -> None:
    [old] = stored("references")
    body = copy.deepcopy(dict(old.result["result"]))
    check_parts(body, version=1)
    with pytest.raises(CaptureError):
        check_parts(body, version=2)  # references-v1 is no references-v2 document
    upgraded = {**body, "format_version": 2}
    upgraded["source"] = {
        **body["source"],
        "literal": dict(current_body(old.result)["source"]["literal"]),
    }
    assert check("references-v2", upgraded) is None
    with pytest.raises(CaptureError) as info:
        check_parts(upgraded, version=2)  # its parts are version 1 captures
    assert info.value.details["path"] == "/result/result/captures/0"


# --- the old version, read by the new names --------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SEARCH_KINDS))
def test_a_version_1_search_reads_as_files_unsearched(kind: str) -> None:
    for capture in stored(kind):
        body = current_body(capture.result)
        assert "complete" not in body
        assert (body["files_unsearched"] == 0) is capture.result["result"]["complete"]
        assert body["files_unsearched"] == capture.result["coverage"]["files_unsearched"]
    gap = [c for c in stored("source.search") if not c.result["result"]["complete"]]
    assert [current_body(c.result)["files_unsearched"] for c in gap] in ([], [1])


def test_version_1_walks_read_by_their_new_names() -> None:
    for capture in stored("source.revision"):
        old, body = capture.result["result"], current_body(capture.result)
        assert (body["walk_finished"], body["walk_stopped_by"]) == (
            old["complete"],
            old["incomplete_reason"],
        )
        assert "complete" not in body and "incomplete_reason" not in body
    for capture in stored("source.changes"):
        old, body = capture.result["result"], current_body(capture.result)
        assert (body["examined_in_full"], body["examination_gaps"]) == (
            old["complete"],
            old["incomplete_reasons"],
        )
        assert "complete" not in body and "incomplete_reasons" not in body
    assert {current_body(c.result)["walk_stopped_by"] for c in stored("source.revision")} == {
        None,
        "walk_limit",
    }


def test_a_version_1_references_literal_counts_its_unsearched_files() -> None:
    [capture] = stored("references")
    literal = current_body(capture.result)["source"]["literal"]
    assert capture.result["result"]["source"]["literal"]["complete"] is False
    assert literal["files_unsearched"] == 1 and "complete" not in literal


def test_the_view_changes_nothing_stored() -> None:
    for path in STORED:
        capture = Capture.from_bytes(path.read_bytes(), path.stem)
        current_body(capture.result)
        assert canonical_bytes(capture.document) == path.read_bytes()


# --- the new version ---------------------------------------------------------------------


def _git_answers(research: ProjectResearch) -> list[dict[str, Any]]:
    return [research.query(q) for kind in GIT_KINDS for q in VALID[kind]]


def test_new_answers_are_version_2_and_only_coverage_says_complete(
    research: ProjectResearch,
) -> None:
    for answer in _git_answers(research):
        assert answer["format_version"] == 2
        assert check("project-result-v2", answer) is None
        assert "complete" in answer["coverage"] and "complete" not in answer["result"]
        assert current_body(answer) is answer["result"]  # nothing to rename


@pytest.mark.parametrize("kind", GIT_KINDS)
def test_version_2_refuses_the_old_name_in_a_git_result(
    research: ProjectResearch, kind: str
) -> None:
    answer = research.query(VALID[kind][0])
    with_old = {**answer, "result": {**answer["result"], "complete": True}}
    assert check("project-result-v2", with_old) is not None
    assert not fast_validator("project-result-v2").is_valid(with_old)


def test_a_second_page_is_not_complete_though_no_file_was_unsearched(tmp_path: Path) -> None:
    # The case version 1 wrote as result.complete: true beside coverage.complete: false.
    research = ProjectResearch(make_config(tmp_path), git=FakeGit(hits=3))
    answer = research.query({**VALID["source.search"][0], "limit": 2})
    assert answer["result"]["files_unsearched"] == 0 and answer["result"]["truncated"]
    assert answer["coverage"]["complete"] is False


def test_the_schemas_describe_the_migration() -> None:
    for name in ("project-result-v2", "references-v2", "project-capture-v2"):
        schema = schema_validator(name).schema
        assert "Version 2" in schema["description"] or "version 2" in schema["description"]
