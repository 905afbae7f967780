"""``vba case leads PACKAGE [--json]``: the ranked leads of the current revision, read-only,
with a plain answer for a revision without leads or without enrichment, and a typed error
(no traceback) for anything that is not a package."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.case.leads_package import package_with_facts, ranked_facts
from tests.cli.helpers import error_of, vba
from tests.enrichment.lead_facts import RAW, mention, numbered
from viano_bug_analysis.exit_codes import ExitCode


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_the_leads_in_rank_order_with_what_they_rest_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = package_with_facts(tmp_path, monkeypatch, ranked_facts(max_leads=3))
    before = _tree(root)
    done = vba("case", "leads", root)
    assert done.returncode == ExitCode.OK, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("package pkg-bug-77-") and lines[0].endswith(": revision 1")
    assert lines[1] == "leads: 3, most telling first, 2 more left out by max_leads"
    heads = [
        "  [P7] 1. changed since the report at commit aaaaaaaaaaaa: commit aaaaaaaaaaaa, after",
        "  [P8] 2. engine check at creature_template entry=5: the engine's own load check",
        "  [P9] 3. missing reference at conditions SourceEntry=5 SourceTypeOrReferenceId=22: ",
    ]
    assert len(lines) == 5
    assert all(line.startswith(head) for line, head in zip(lines[2:], heads, strict=True))
    assert lines[2].endswith("maybe already fixed (rests on P6)")
    assert lines[4].endswith("(rests on P4, P1)")
    assert RAW not in done.stdout and "Bruni" not in done.stdout
    assert _tree(root) == before  # read-only


def test_json_is_the_stored_lead_facts_and_the_count_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = ranked_facts(max_leads=3)
    root = package_with_facts(tmp_path, monkeypatch, facts)
    done = vba("case", "leads", root, "--json")
    assert done.returncode == ExitCode.OK, done.stderr
    document = json.loads(done.stdout)
    assert document["analysis_revision"] == 1 and document["enriched"] is True
    assert document["left_out"] == 2
    assert document["leads"] == [f for f in facts if f["kind"] == "project_lead"]
    assert [lead["rank"] for lead in document["leads"]] == [1, 2, 3]


def test_a_revision_without_leads_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = package_with_facts(tmp_path, monkeypatch, numbered(mention("creature", 5)))
    done = vba("case", "leads", root)
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout.splitlines()[1].startswith("leads: none (no fact of this revision is a ")
    document = json.loads(vba("case", "leads", root, "--json").stdout)
    assert (document["enriched"], document["leads"], document["left_out"]) == (True, [], 0)


def test_a_revision_without_enrichment_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = package_with_facts(tmp_path, monkeypatch, None)
    done = vba("case", "leads", root)
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout.splitlines()[1] == (
        "leads: none, this revision was built without enrichment "
        "(`vba case build --project-config` enriches it)"
    )
    document = json.loads(vba("case", "leads", root, "--json").stdout)
    assert (document["enriched"], document["leads"]) == (False, [])


@pytest.mark.parametrize("what", ["missing", "file", "empty"])
def test_not_a_package_is_a_typed_error_and_no_traceback(tmp_path: Path, what: str) -> None:
    target = tmp_path / "target"
    if what == "file":
        target.write_text("not a package")
    elif what == "empty":
        target.mkdir()
    expected = vba("case", "verify", target)  # the other read-only package command
    for args in ((), ("--json",)):
        done = vba("case", "leads", target, *args)
        assert done.returncode == expected.returncode != ExitCode.OK
        assert done.stdout == ""
        assert error_of(done)["error"] == error_of(expected)["error"]


def test_a_damaged_index_is_refused_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = package_with_facts(tmp_path, monkeypatch, ranked_facts())
    (index,) = root.glob("research/*/*/index.json")
    index.write_bytes(index.read_bytes().replace(b'"rank":1', b'"rank":9'))
    done = vba("case", "leads", root)
    assert done.returncode == vba("case", "verify", root).returncode != ExitCode.OK
    assert done.stdout == ""
    assert error_of(done)["error"]
