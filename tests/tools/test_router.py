"""InvestigationToolRouter: whole-batch validation, provenance, limits, read-only."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from tests.case import case_file
from tests.tools.package_factory import BuiltPackage, build_package, tree_fingerprint
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.profiles.vcore.db_tools import normalize_schema_descriptor
from viano_bug_analysis.tools import InvestigationToolRouter, ToolError, ToolLimits
from viano_bug_analysis.tools.database_query import DatabaseQueryTool

MARKER = "ZZ_SECRET_MARKER_ZZ"
SOURCE = (
    '#include "ScriptMgr.h"\n'
    "// spell handler\n"
    "void SpellHit(Unit* caster)\n"
    "{\n"
    "    player->KilledMonsterCredit(90005);\n"
    f"    // {MARKER}\n"
    "}\n"
).encode()
ROWS = orjson.dumps(
    {
        "format": "viano-database-snapshot",
        "format_version": 1,
        "table": "quest_template",
        "columns": [{"name": "ID", "type": "integer"}, {"name": "LogTitle", "type": "string"}],
        "rows": [
            {"ID": 1, "LogTitle": "one"},
            {"ID": 90001, "LogTitle": MARKER},
            {"ID": "90001", "LogTitle": "decoy"},
            {"ID": 1.0, "LogTitle": "float"},
            {"ID": True, "LogTitle": "bool"},
        ],
        "coverage": "partial",
    }
)
DESCRIPTOR = orjson.dumps(
    {
        "table": "quest_template",
        "columns": [
            {
                "column_name": "ID",
                "column_type": "int(10) unsigned",
                "is_nullable": "NO",
                "column_key": "PRI",
            },
            {
                "column_name": "LogTitle",
                "column_type": "text",
                "is_nullable": "YES",
                "column_key": "",
            },
        ],
        "schema_table_matches": ["creature_template"],
    }
)


@pytest.fixture
def package(tmp_path: Path) -> BuiltPackage:
    return build_package(
        tmp_path,
        sources={"src/a.cpp": SOURCE, "src/b.cpp": b"int main() { return 0; }\n"},
        database={"quest_template.rows.json": ROWS, "quest_template.schema.json": DESCRIPTOR},
    )


@pytest.fixture
def router() -> InvestigationToolRouter:
    return InvestigationToolRouter(database_tool=DatabaseQueryTool(normalize_schema_descriptor))


def find_text(refs: list[str], text: str, **kw: Any) -> dict[str, Any]:
    args = {"source_refs": refs, "text": text, "case_sensitive": True, "offset": 0, "limit": 20}
    return {"operation": "source.find_text", "arguments": {**args, **kw}}


def read_context(ref: str, start: int, end: int) -> dict[str, Any]:
    return {
        "operation": "source.read_context",
        "arguments": {"source_ref": ref, "start_line": start, "end_line": end},
    }


def lookup(ref: str, filters: dict[str, Any], **kw: Any) -> dict[str, Any]:
    args = {"source_ref": ref, "filters": filters, "offset": 0, "limit": 10}
    return {"operation": "database.lookup", "arguments": {**args, **kw}}


def rejected(
    router: InvestigationToolRouter, pkg: BuiltPackage, request: dict[str, Any]
) -> ToolError:
    before = tree_fingerprint(pkg.path)
    with pytest.raises(ToolError) as caught:
        router.query(pkg.path, request)
    assert tree_fingerprint(pkg.path) == before
    text = str(caught.value) + repr(caught.value.details)
    assert MARKER not in text
    return caught.value


def test_mixed_batch_has_provenance_and_validates(router, package) -> None:
    src, db, schema = (
        package.refs[m]
        for m in ("src/a.cpp", "quest_template.rows.json", "quest_template.schema.json")
    )
    request = package.request(
        find_text([src, package.refs["src/b.cpp"]], "KilledMonsterCredit"),
        {
            "operation": "source.find_symbol",
            "arguments": {"source_refs": [src], "symbol": "SpellHit", "offset": 0, "limit": 5},
        },
        read_context(src, 3, 5),
        {"operation": "database.describe", "arguments": {"source_ref": schema}},
        lookup(db, {"ID": 90001}, columns=["LogTitle"]),
        {
            "operation": "database.find_references",
            "arguments": {
                "source_ref": db,
                "search_columns": ["ID"],
                "value": 1,
                "offset": 0,
                "limit": 10,
            },
        },
    )
    result = router.query(package.path, request)
    jsonschema.validate(result, InvestigationToolRouter.result_schema())
    assert result["case_ref"]["sha256"] == package.manifest["case"]["sha256"]
    found, symbol, context, described, looked_up, references = (
        r["result"] for r in result["results"]
    )
    assert [(m["source_ref"], m["line"]) for m in found["matches"]] == [(src, 5)]
    assert [(s["source_ref"], s["matching_lines"]) for s in found["sources"]] == [(src, 1)]
    assert found["sources_searched"] == 2
    assert len(found["matches"][0]["sha256"]) == 64
    assert [m["line"] for m in symbol["matches"]] == [3]
    assert [line["line"] for line in context["lines"]] == [3, 4, 5]
    assert described["coverage"] == "schema_only" and described["table"] == "quest_template"
    assert looked_up["rows"] == [{"pointer": "/rows/1", "row": {"LogTitle": MARKER}}]
    # typed equality: 1, 1.0 and True are different values
    assert [r["pointer"] for r in references["rows"]] == ["/rows/0"]
    assert len({r["request_sha256"] for r in result["results"]}) == 6


def test_retry_is_deterministic(router, package) -> None:
    request = package.request(find_text([package.refs["src/a.cpp"]], "Spell"))
    assert router.query(package.path, request) == router.query(package.path, request)


def test_bug20_regression_on_the_sample_shape(router, package) -> None:
    """Three packaged source lines, the quest table through the Vcore adapter,
    the stored quest row through an explicit ID filter. No fix is injected."""
    src = package.refs["src/a.cpp"]
    request = package.request(
        read_context(src, 4, 6),
        {
            "operation": "database.describe",
            "arguments": {"source_ref": package.refs["quest_template.schema.json"]},
        },
        lookup(package.refs["quest_template.rows.json"], {"ID": 90001}),
    )
    context, described, row = (r["result"] for r in router.query(package.path, request)["results"])
    assert [line["text"] for line in context["lines"]][
        1
    ].strip() == "player->KilledMonsterCredit(90005);"
    assert [c["name"] for c in described["columns"]] == ["ID", "LogTitle"]
    assert row["total"] == 1 and row["rows"][0]["pointer"] == "/rows/1"


def test_pagination_and_line_truncation(package) -> None:
    router = InvestigationToolRouter(limits=ToolLimits(line_chars=5))
    src = package.refs["src/a.cpp"]
    pages = []
    offset: int | None = 0
    while offset is not None:
        result = router.query(
            package.path, package.request(find_text([src], "e", offset=offset, limit=2))
        )
        page = result["results"][0]["result"]
        pages.append(page)
        offset = page["next_offset"]
    lines = [m["line"] for p in pages for m in p["matches"]]
    assert lines == sorted(lines) and len(lines) == pages[0]["total"]
    assert pages[-1]["truncated"] is False and pages[0]["truncated"] is True
    assert all(len(m["text"]) <= 5 for p in pages for m in p["matches"])
    assert any(m["text_truncated"] for p in pages for m in p["matches"])


# ---------------------------------------------------------------- rejections


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (lambda r: r["requests"][0].update(operation="source.regex"), "unknown_operation"),
        (lambda r: r["requests"][0].update(extra=1), "unknown_field"),
        (lambda r: r["requests"][0]["arguments"].update(shell="rm -rf /"), "unknown_field"),
        (lambda r: r.update(server="db.example"), "unknown_field"),
        (lambda r: r["requests"][0]["arguments"].update(offset=-1), "request_invalid"),
        (lambda r: r["requests"][0]["arguments"].update(offset=2**40), "request_invalid"),
        (lambda r: r["requests"][0]["arguments"].update(limit="10"), "request_invalid"),
        (lambda r: r["requests"][0]["arguments"].update(limit=101), "limit_exceeded"),
        (lambda r: r["requests"][0]["arguments"].update(case_sensitive="yes"), "request_invalid"),
        (lambda r: r["requests"][0]["arguments"].update(text="a\nb"), "request_invalid"),
        (lambda r: r["requests"][0].update(hypothesis_id="H9"), "unknown_hypothesis"),
        (lambda r: r["requests"][0].update(hypothesis_id="X1"), "request_invalid"),
        (lambda r: r.update(analysis_revision=2), "revision_mismatch"),
        (lambda r: r.update(case_id="BUG-OTHER"), "identity_mismatch"),
        (lambda r: r.update(package_id="pkg-other"), "identity_mismatch"),
        (
            lambda r: r["requests"][0]["arguments"].update(source_refs=["nope"]),
            "unknown_source_ref",
        ),
        (lambda r: r.update(requests=[]), "request_invalid"),
    ],
)
def test_bad_requests_are_rejected_whole(router, package, mutate, code) -> None:
    request = package.request(
        find_text([package.refs["src/a.cpp"]], "Spell"),
        lookup(package.refs["quest_template.rows.json"], {"ID": 1}),
    )
    mutate(request)
    assert rejected(router, package, request).code == code


def test_duplicate_ids_and_actions(router, package) -> None:
    src = package.refs["src/a.cpp"]
    request = package.request(find_text([src], "a"), find_text([src], "b"))
    request["requests"][1]["request_id"] = request["requests"][0]["request_id"]
    assert rejected(router, package, request).code == "duplicate_request_id"
    request = package.request(find_text([src], "a"), find_text([src], "b"))
    request["requests"][1]["action_id"] = request["requests"][0]["action_id"]
    assert rejected(router, package, request).code == "duplicate_action"
    request["requests"][1]["hypothesis_id"] = "H2"  # same action under another hypothesis is fine
    router.query(package.path, request)


def test_wrong_role_and_ranges(router, package) -> None:
    src, db = package.refs["src/a.cpp"], package.refs["quest_template.rows.json"]
    assert rejected(router, package, package.request(find_text([db], "x"))).code == "wrong_role"
    assert rejected(router, package, package.request(lookup(src, {"ID": 1}))).code == "wrong_role"
    assert (
        rejected(router, package, package.request(read_context(src, 5, 4))).code
        == "line_range_invalid"
    )
    assert (
        rejected(router, package, package.request(read_context(src, 7, 8))).code
        == "line_out_of_range"
    )
    assert (
        rejected(router, package, package.request(read_context(src, 0, 1))).code
        == "request_invalid"
    )


@pytest.mark.parametrize("symbol", ["9lives", "a-b", "a b", "ä", "", "x" * 300])
def test_identifier_invalid_symbol(router, package, symbol) -> None:
    request = package.request(
        {
            "operation": "source.find_symbol",
            "arguments": {
                "source_refs": [package.refs["src/a.cpp"]],
                "symbol": symbol,
                "offset": 0,
                "limit": 5,
            },
        }
    )
    assert rejected(router, package, request).code == "request_invalid"


def test_unknown_column_in_last_request_rejects_everything(router, package) -> None:
    db = package.refs["quest_template.rows.json"]
    request = package.request(
        find_text([package.refs["src/a.cpp"]], "Spell"), lookup(db, {"Nope": 1})
    )
    err = rejected(router, package, request)
    assert err.code == "unknown_column" and err.details["request_index"] == 1
    request = package.request(lookup(db, {"ID": 1}, columns=["ID", "Missing"]))
    assert rejected(router, package, request).code == "unknown_column"


def test_sql_looking_values_are_data(router, package) -> None:
    db = package.refs["quest_template.rows.json"]
    result = router.query(package.path, package.request(lookup(db, {"LogTitle": "x' OR '1'='1"})))
    assert result["results"][0]["result"]["total"] == 0


# ------------------------------------------------------------- package state


def _rewrite_manifest(pkg: BuiltPackage, **changes: Any) -> None:
    from viano_bug_analysis.case.canonical import canonical_bytes

    manifest = json.loads((pkg.path / "manifest.json").read_bytes())
    manifest.update(changes)
    (pkg.path / "manifest.json").write_bytes(canonical_bytes(manifest))


def test_blocked_case_cannot_query(router, package) -> None:
    request = package.request(find_text([package.refs["src/a.cpp"]], "Spell"))
    _rewrite_manifest(
        package,
        status={
            "state": "blocked",
            "code": "RESEARCH_UNAVAILABLE",
            "resume_state": "investigation",
        },
    )
    assert rejected(router, package, request).code == "case_blocked"


@pytest.mark.parametrize("phase", ["intake", "concluded"])
def test_phase_must_be_active(router, package, phase) -> None:
    request = package.request(find_text([package.refs["src/a.cpp"]], "Spell"))
    _rewrite_manifest(package, phase=phase)
    assert rejected(router, package, request).code == "phase_not_queryable"


def test_stale_case_is_rejected(router, package) -> None:
    request = package.request(find_text([package.refs["src/a.cpp"]], "Spell"))
    case_path = case_file(package.path)
    case_path.write_bytes(case_path.read_bytes().replace(b"test report", b"test rep0rt"))
    assert rejected(router, package, request).code == "case_stale"


def test_manifest_pointing_outside_the_package(router, package, tmp_path) -> None:
    request = package.request(find_text([package.refs["src/a.cpp"]], "Spell"))
    outside = tmp_path / "elsewhere.json"
    shutil.copy(case_file(package.path), outside)
    manifest = json.loads((package.path / "manifest.json").read_bytes())
    _rewrite_manifest(package, case={**manifest["case"], "path": "../elsewhere.json"})
    assert rejected(router, package, request).code == "manifest_path_outside_package"


def test_swapped_attachment_is_rejected(router, package, tmp_path) -> None:
    request = package.request(find_text([package.refs["src/a.cpp"]], "Spell"))
    attachment = package.path / "attachments" / "wowsrc.zip"
    with zipfile.ZipFile(attachment) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    members["src/b.cpp"] = b"int main() { return 1; }\n"
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    attachment.unlink()
    shutil.copy(other, attachment)
    assert rejected(router, package, request).code == "attachment_mismatch"


def test_member_bytes_no_longer_match(router, package) -> None:
    """case.json declares other bytes for a member than the (untouched) ZIP holds."""
    from viano_bug_analysis.case.canonical import canonical_bytes, sha256_hex

    request = package.request(find_text([package.refs["src/a.cpp"]], "Spell"))
    case = json.loads((case_file(package.path)).read_bytes())
    for entry in case["source_context"]:
        if entry["member"] == "src/a.cpp":
            entry["sha256"] = sha256_hex(b"other bytes")
    case_bytes = canonical_bytes(case)
    (case_file(package.path)).write_bytes(case_bytes)
    manifest = json.loads((package.path / "manifest.json").read_bytes())
    _rewrite_manifest(package, case={**manifest["case"], "sha256": sha256_hex(case_bytes)})
    err = rejected(router, package, request)
    assert err.code == "source_integrity_mismatch" and err.details["cause"] == "hash_mismatch"


@pytest.mark.parametrize("content", [b"binary\0data\n", b"latin1 \xe9t\xe9\n"])
def test_binary_or_non_utf8_source_rejects_the_batch(router, tmp_path, content) -> None:
    pkg = build_package(tmp_path, sources={"ok.cpp": b"fine\n", "bad.cpp": content})
    request = pkg.request(
        find_text([pkg.refs["ok.cpp"]], "fine"), find_text([pkg.refs["bad.cpp"]], "x")
    )
    err = rejected(router, pkg, request)
    assert err.code == "source_not_text" and err.details["source_ref"] == pkg.refs["bad.cpp"]


# -------------------------------------------------------------------- limits


def test_request_size_limit(package) -> None:
    src = package.refs["src/a.cpp"]
    request = package.request(find_text([src], "x"))
    size = len(orjson.dumps(request, option=orjson.OPT_SORT_KEYS))
    router = InvestigationToolRouter(limits=ToolLimits(request_bytes=size))
    router.query(package.path, request)
    request["requests"][0]["arguments"]["text"] = "xx"
    assert rejected(router, package, request).code == "request_too_large"
    big = package.request(*[find_text([src], "y" * 1000) for _ in range(16)])
    big["requests"][0]["arguments"]["text"] = "y" * 1024
    for item in big["requests"]:
        item["arguments"]["text"] = "z" * 1024
    big["requests"] = big["requests"] * 1
    assert len(orjson.dumps(big)) < 64 * 1024
    InvestigationToolRouter().query(package.path, big)


def test_batch_limit(router, package) -> None:
    src = package.refs["src/a.cpp"]
    router.query(package.path, package.request(*[find_text([src], f"t{i}") for i in range(16)]))
    request = package.request(*[find_text([src], f"t{i}") for i in range(17)])
    assert rejected(router, package, request).code == "batch_too_large"


def test_selected_files_limit(tmp_path) -> None:
    pkg = build_package(tmp_path, sources={f"f{i}.cpp": b"x\n" for i in range(5)})
    refs = [pkg.refs[f"f{i}.cpp"] for i in range(5)]
    InvestigationToolRouter(limits=ToolLimits(selected_files=5)).query(
        pkg.path, pkg.request(find_text(refs, "x"))
    )
    err = rejected(
        InvestigationToolRouter(limits=ToolLimits(selected_files=4)),
        pkg,
        pkg.request(find_text(refs, "x")),
    )
    assert err.code == "too_many_files"


def test_file_and_combined_size_limits(tmp_path) -> None:
    pkg = build_package(tmp_path, sources={"a.cpp": b"a" * 99 + b"\n", "b.cpp": b"b" * 99 + b"\n"})
    request = pkg.request(find_text([pkg.refs["a.cpp"], pkg.refs["b.cpp"]], "a"))
    InvestigationToolRouter(limits=ToolLimits(file_bytes=100, selected_bytes=200)).query(
        pkg.path, request
    )
    assert (
        rejected(InvestigationToolRouter(limits=ToolLimits(file_bytes=99)), pkg, request).code
        == "file_too_large"
    )
    assert (
        rejected(InvestigationToolRouter(limits=ToolLimits(selected_bytes=199)), pkg, request).code
        == "selection_too_large"
    )


def test_database_rows_limit(tmp_path) -> None:
    rows = orjson.dumps([{"id": i} for i in range(50)])
    pkg = build_package(tmp_path, database={"t.json": rows})
    request = pkg.request(lookup(pkg.refs["t.json"], {"id": 3}))
    InvestigationToolRouter(limits=ToolLimits(database_rows=50)).query(pkg.path, request)
    err = rejected(InvestigationToolRouter(limits=ToolLimits(database_rows=49)), pkg, request)
    assert err.code == "snapshot_too_many_rows"


def test_matches_per_query_limit(package) -> None:
    src = package.refs["src/a.cpp"]
    router = InvestigationToolRouter(limits=ToolLimits(matches_per_query=3))
    router.query(package.path, package.request(find_text([src], "e", limit=3)))
    assert (
        rejected(router, package, package.request(find_text([src], "e", limit=4))).code
        == "limit_exceeded"
    )


def test_context_lines_limit(package) -> None:
    src = package.refs["src/a.cpp"]
    router = InvestigationToolRouter(limits=ToolLimits(context_lines=3))
    router.query(package.path, package.request(read_context(src, 1, 3)))
    assert (
        rejected(router, package, package.request(read_context(src, 1, 4))).code
        == "context_too_large"
    )


def test_line_chars_limit_cuts_and_marks(package) -> None:
    src = package.refs["src/a.cpp"]
    line = "    player->KilledMonsterCredit(90005);"
    for limit, truncated in ((len(line), False), (len(line) - 1, True)):
        router = InvestigationToolRouter(limits=ToolLimits(line_chars=limit))
        got = router.query(package.path, package.request(read_context(src, 5, 5)))["results"][0][
            "result"
        ]["lines"][0]
        assert got["text_truncated"] is truncated and got["text"] == line[:limit]


def test_result_size_limit(package) -> None:
    request = package.request(find_text([package.refs["src/a.cpp"]], "e"))
    size = len(orjson.dumps(InvestigationToolRouter().query(package.path, request)))
    InvestigationToolRouter(limits=ToolLimits(result_bytes=size)).query(package.path, request)
    err = rejected(
        InvestigationToolRouter(limits=ToolLimits(result_bytes=size - 1)), package, request
    )
    assert err.code == "result_too_large"


def test_default_limits_match_the_contract() -> None:
    limits = ToolLimits()
    assert (
        limits.request_bytes,
        limits.batch_requests,
        limits.selected_files,
        limits.file_bytes,
        limits.selected_bytes,
        limits.database_rows,
        limits.matches_per_query,
        limits.context_lines,
        limits.line_chars,
        limits.result_bytes,
    ) == (65536, 16, 64, 8 << 20, 32 << 20, 100_000, 100, 200, 4096, 2 << 20)
    with pytest.raises(ValueError):
        ToolLimits(batch_requests=0)


# ------------------------------------------------------------ reading rules


def test_each_member_is_read_once_per_batch(router, package, monkeypatch) -> None:
    from viano_bug_analysis.snapshot import SnapshotArchive

    reads: list[str] = []
    original = SnapshotArchive.read_texts

    def counting(self, members, **kw):
        reads.extend(m.name for m in members)
        return original(self, members, **kw)

    monkeypatch.setattr(SnapshotArchive, "read_texts", counting)
    src = package.refs["src/a.cpp"]
    router.query(
        package.path,
        package.request(*[find_text([src], f"x{i}") for i in range(6)], read_context(src, 1, 2)),
    )
    assert reads == ["src/a.cpp"]


def test_parsed_snapshots_are_reused_across_batches(router, package, monkeypatch) -> None:
    from viano_bug_analysis.snapshot.rows import RowTable

    parses = []
    original = RowTable.parse.__func__

    def counting(cls, data):
        parses.append(len(data))
        return original(cls, data)

    monkeypatch.setattr(RowTable, "parse", classmethod(counting))
    request = package.request(lookup(package.refs["quest_template.rows.json"], {"ID": 1}))
    router.query(package.path, request)
    router.query(package.path, request)
    assert len(parses) == 1


def _without_digest_cache(tree: dict[str, Any]) -> dict[str, Any]:
    # The router's digest cache may appear in a writable package (once its
    # attachments are 2 s old); tests/tools/test_router_digest_cache.py checks
    # that a read-only package, or --no-digest-cache, leaves every byte alone.
    cache = PackageLayout.DIGEST_CACHE
    names = {cache.as_posix(), *(p.as_posix() for p in cache.parents if p.name)}
    return {rel: value for rel, value in tree.items() if rel not in names}


def test_read_only_byte_for_byte(router, package) -> None:
    before = _without_digest_cache(tree_fingerprint(package.path))
    src, db = package.refs["src/a.cpp"], package.refs["quest_template.rows.json"]
    big = package.request(
        *[find_text([src, package.refs["src/b.cpp"]], t) for t in ("a", "e", "i", "o")],
        read_context(src, 1, 7),
        lookup(db, {"ID": 1}),
        {
            "operation": "database.describe",
            "arguments": {"source_ref": package.refs["quest_template.schema.json"]},
        },
    )
    for _ in range(3):
        router.query(package.path, big)
    for bad in (
        package.request(lookup(db, {"Nope": 1})),
        package.request(find_text(["missing"], "x")),
    ):
        with pytest.raises(ToolError):
            router.query(package.path, bad)
    assert _without_digest_cache(tree_fingerprint(package.path)) == before


def test_request_schema_is_bundled_and_strict() -> None:
    schema = InvestigationToolRouter.request_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    assert set(schema["$defs"]["arguments"]) == {
        "source.find_text",
        "source.find_symbol",
        "source.read_context",
        "database.describe",
        "database.lookup",
        "database.find_references",
    }


def test_preflight_checks_everything_query_checks_but_runs_nothing(
    router, package, monkeypatch
) -> None:
    from viano_bug_analysis.tools import source_query

    db = package.refs["quest_template.rows.json"]
    good = package.request(find_text([package.refs["src/a.cpp"]], "Spell"), lookup(db, {"ID": 1}))
    bad = package.request(find_text([package.refs["src/a.cpp"]], "Spell"), lookup(db, {"Nope": 1}))

    def must_not_run(*args, **kwargs):
        raise AssertionError("a handler ran during preflight")

    monkeypatch.setattr(source_query, "search_lines", must_not_run)
    assert router.preflight(package.path, good) is None
    with pytest.raises(ToolError) as caught:
        router.preflight(package.path, bad)
    assert caught.value.code == "unknown_column"


def test_default_limits_reject_a_65_kib_request_and_a_2_mib_result(router, tmp_path) -> None:
    long_line = ("x" * 4000 + "\n").encode()
    pkg = build_package(tmp_path, sources={"wide.cpp": long_line * 120})
    ref = pkg.refs["wide.cpp"]
    big_request = pkg.request(*[find_text([ref], "y" * 1024) for _ in range(16)])
    for item in big_request["requests"]:
        item["arguments"]["source_refs"] = [f"ref-{i:05d}" for i in range(400)]
    assert len(orjson.dumps(big_request, option=orjson.OPT_SORT_KEYS)) > 64 * 1024
    assert rejected(router, pkg, big_request).code == "request_too_large"
    # 16 pages of 100 lines of 4,000 characters: about 6.4 MB of result.
    wide = pkg.request(*[find_text([ref], "x" * (i + 1), limit=100) for i in range(16)])
    assert rejected(router, pkg, wide).code == "result_too_large"


def test_find_text_whole_word_finds_an_id_and_not_longer_numbers(router, tmp_path) -> None:
    source = b"int a = 26290;\nint b = 126290;\nint c = 262901;\n// quest 26290 done\n"
    pkg = build_package(tmp_path, sources={"src/ids.cpp": source})
    ref = pkg.refs["src/ids.cpp"]
    whole = router.query(pkg.path, pkg.request(find_text([ref], "26290", whole_word=True)))
    literal = router.query(pkg.path, pkg.request(find_text([ref], "26290")))
    assert [m["line"] for m in whole["results"][0]["result"]["matches"]] == [1, 4]
    assert [m["line"] for m in literal["results"][0]["result"]["matches"]] == [1, 2, 3, 4]


def test_find_text_whole_word_refuses_a_text_that_is_no_word(router, package) -> None:
    ref = package.refs["src/a.cpp"]
    err = rejected(router, package, package.request(find_text([ref], "a-b", whole_word=True)))
    assert err.code == "request_invalid"
    assert err.details["path"] == "/requests/0/arguments/text"


def test_find_symbol_of_a_number_points_to_whole_word_find_text(router, package) -> None:
    ref = package.refs["src/a.cpp"]
    symbol = {"source_refs": [ref], "symbol": "26290", "offset": 0, "limit": 5}
    err = rejected(
        router, package, package.request({"operation": "source.find_symbol", "arguments": symbol})
    )
    assert err.code == "request_invalid"
    assert err.details["path"] == "/requests/0/arguments/symbol"
    assert "find_text with whole_word" in str(err)
