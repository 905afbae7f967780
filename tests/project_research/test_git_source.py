"""GitSource over the fixture repository: results, provenance, order, paging, skips."""

from __future__ import annotations

import hashlib
import json
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.project_research.git_fixtures import (
    BIG_FILE_BYTES,
    MANY_FILES,
    NEEDLE,
    SUBMODULE_PATH,
    URL,
    FixtureRepo,
    build_fixture_repo,
    git,
)
from viano_bug_analysis.project_research.errors import ResearchError
from viano_bug_analysis.project_research.git_source import (
    READ_LINE_LIMIT,
    REGISTRATION_NOTE,
    GitSource,
)
from viano_bug_analysis.snapshot.text_search import contains_word


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> FixtureRepo:
    return build_fixture_repo(tmp_path_factory.mktemp("git") / "fixture")


@pytest.fixture
def source(repo: FixtureRepo) -> GitSource:
    return GitSource(repo.path, repo.first, url=URL)


def search(source: GitSource, text: str = NEEDLE, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"case_sensitive": True, "path_prefix": None, "offset": 0, "limit": 100}
    args.update(kw)
    return source.search(text=text, **args)


def reference_hits(
    repo: FixtureRepo,
    text: str,
    prefix: str = "",
    matches: Callable[[str, str], bool] = operator.contains,
) -> list[tuple[str, int]]:
    """(path, line) of every line containing text (``matches(line, text)``), by a
    few lines of plain Python."""
    hits = []
    for path in sorted(repo.files, key=lambda p: p.encode()):
        data = repo.files[path]
        if not path.startswith(prefix) or b"\0" in data:
            continue
        try:
            decoded = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        decoded = decoded.removeprefix("\ufeff")
        lines = decoded.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        hits += [(path, n) for n, line in enumerate(lines, 1) if matches(line, text)]
    return hits


# --- origin and commit -------------------------------------------------------------


def test_origin_names_url_and_commit_never_the_local_path(
    source: GitSource, repo: FixtureRepo
) -> None:
    assert source.origin == {"kind": "git", "url": URL, "commit": repo.first}
    result = search(source)
    assert result["origin"] == source.origin
    assert str(repo.path) not in repr(result) and str(repo.path) not in repr(source)


@pytest.mark.parametrize(
    "commit",
    ["", "abc", "g" * 40, "0" * 39, "0" * 41, "0" * 64, " " + "0" * 39, "HEAD", "main", None, 7],
)
def test_commit_must_be_a_full_hex_id(repo: FixtureRepo, commit: Any) -> None:
    with pytest.raises(ResearchError) as err:
        GitSource(repo.path, commit, url=URL)
    assert err.value.code == "commit_invalid"


def test_upper_case_commit_is_normalized(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first.upper(), url=URL)
    assert source.origin["commit"] == repo.first
    assert search(source)["total"] > 0


def test_unknown_commit_is_missing(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, "0123456789" * 4, url=URL)
    with pytest.raises(ResearchError) as err:
        search(source)
    assert err.value.code == "commit_missing"
    assert err.value.details["found"] == "nothing"


@pytest.mark.parametrize(("spec", "kind"), [("{c}^{{tree}}", "tree"), ("{c}:README.md", "blob")])
def test_an_object_that_is_no_commit_is_missing(repo: FixtureRepo, spec: str, kind: str) -> None:
    oid = git(repo.path, "rev-parse", spec.format(c=repo.first))
    with pytest.raises(ResearchError) as err:
        GitSource(repo.path, oid, url=URL).check()
    assert err.value.code == "commit_missing"
    assert err.value.details["found"] == kind


def test_annotated_tag_id_is_no_commit(repo: FixtureRepo, tmp_path: Path) -> None:
    fresh = build_fixture_repo(tmp_path / "r")
    git(fresh.path, "tag", "-a", "v1", "-m", "tag", fresh.first)
    tag = git(fresh.path, "rev-parse", "v1")
    with pytest.raises(ResearchError) as err:
        GitSource(fresh.path, tag, url=URL).check()
    assert (err.value.code, err.value.details["found"]) == ("commit_missing", "tag")


# --- search results ------------------------------------------------------------------


def test_search_matches_a_plain_python_reference(source: GitSource, repo: FixtureRepo) -> None:
    result = search(source)
    got = [(m["path"], m["line"]) for m in result["matches"]]
    assert got == reference_hits(repo, NEEDLE)
    assert result["total"] == len(got)
    assert result["truncated"] is False and result["next_offset"] is None


def test_hits_carry_blob_id_sha256_and_line(source: GitSource, repo: FixtureRepo) -> None:
    for match in search(source)["matches"]:
        assert match["blob"] == repo.blob_id(repo.first, match["path"])
        raw = repo.blob_bytes(match["blob"])
        assert match["sha256"] == hashlib.sha256(raw).hexdigest()
        assert re.fullmatch(r"[0-9a-f]{40}", match["blob"])
        assert set(match) == {"path", "blob", "sha256", "line", "text", "text_truncated"}


def test_order_is_path_bytes_then_line(source: GitSource) -> None:
    matches = search(source)["matches"]
    keys = [(m["path"].encode(), m["line"]) for m in matches]
    assert keys == sorted(keys)


def test_paging_is_stable_and_complete(source: GitSource) -> None:
    whole = search(source)["matches"]
    pages: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        page = search(source, offset=offset, limit=7)
        assert page["offset"] == offset and page["limit"] == 7
        assert page["returned"] == len(page["matches"]) <= 7
        pages += page["matches"]
        offset = page["next_offset"]
        assert page["truncated"] is (offset is not None)
    assert pages == whole
    beyond = search(source, offset=len(whole) + 5, limit=7)
    assert beyond["matches"] == [] and beyond["total"] == len(whole)
    assert beyond["truncated"] is False and beyond["next_offset"] is None


def test_line_model_crlf_cr_bom(source: GitSource) -> None:
    by_path = {m["path"]: m for m in search(source, path_prefix="docs/")["matches"]}
    assert by_path["docs/crlf.txt"]["line"] == 2
    assert by_path["docs/crlf.txt"]["text"] == f"second {NEEDLE}"
    assert by_path["docs/cr.txt"]["line"] == 2
    assert by_path["docs/cr.txt"]["text"] == f"two {NEEDLE}"
    assert by_path["docs/bom.txt"]["text"] == f"bom {NEEDLE}"


def test_case_insensitive_search_folds_unicode(source: GitSource) -> None:
    exact = search(source, "ärger", path_prefix="src/scripts/")
    folded = search(source, "ärger", case_sensitive=False, path_prefix="src/scripts/")
    assert exact["total"] == 0
    assert [m["text"] for m in folded["matches"]] == ["Ärger"]
    # Simple (not full) folding: "STRASSE" never matches "straße".
    assert search(source, "straße", case_sensitive=False)["total"] == 0


def test_paths_with_spaces_and_unicode(source: GitSource) -> None:
    path = f"src/scripts/dir with space/ünïcode {NEEDLE}.txt"
    result = search(source, "Grüße", path_prefix="src/scripts/dir with space/")
    assert [m["path"] for m in result["matches"]] == [path]
    assert source.read(path=path, start_line=1, end_line=1)["lines"][0]["text"] == (
        f"Grüße vom {NEEDLE}"
    )


def test_long_lines_are_cut_and_marked(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL, max_line_chars=50)
    [hit] = search(source, path_prefix="long_line.txt")["matches"]
    assert hit["text"] == "x" * 50 and hit["text_truncated"] is True
    read = source.read(path="long_line.txt", start_line=1, end_line=1)
    assert read["lines"] == [{"line": 1, "text": "x" * 50, "text_truncated": True}]


def test_patterns_are_literal(source: GitSource, repo: FixtureRepo) -> None:
    for text in (".*", "%", "'; DROP TABLE creature_template; --", "[a-z]", "\\d"):
        assert search(source, text)["total"] == 0
    assert search(source, "(")["total"] == len(reference_hits(repo, "("))


# --- skipped files ------------------------------------------------------------------


def test_skipped_files_are_reported_never_decoded(source: GitSource) -> None:
    result = search(source)
    skipped = result["skipped"]
    by_path = {item["path"]: item["reason"] for item in skipped["paths"]}
    assert by_path == {
        "data/binary.bin": "binary",
        "data/latin1.txt": "not_utf8",
        SUBMODULE_PATH: "submodule",
        "link-to-spell": "symlink",
        f"src/game/{NEEDLE}.link": "symlink",
    }
    assert skipped["by_reason"] == {"binary": 1, "not_utf8": 1, "submodule": 1, "symlink": 2}
    assert skipped["total"] == 5 and skipped["paths_truncated"] is False
    assert [item["path"] for item in skipped["paths"]] == sorted(by_path, key=str.encode)
    # not_utf8 could hide a hit: one file unsearched (version 1 said complete: false).
    assert result["files_unsearched"] == 1 and "complete" not in result
    assert all(m["path"] not in by_path for m in result["matches"])


def test_files_searched_counts_text_files(source: GitSource, repo: FixtureRepo) -> None:
    texts = [p for p, d in repo.files.items() if b"\0" not in d and _is_utf8(d)]
    assert search(source)["files_searched"] == len(texts)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_complete_below_a_clean_prefix(source: GitSource) -> None:
    result = search(source, path_prefix="src/game/Spell")
    assert result["files_unsearched"] == 0
    assert result["skipped"]["total"] == 0
    assert {m["path"] for m in result["matches"]} == {"src/game/Spell.cpp", "src/game/Spell.h"}


def test_too_large_files_are_skipped_unread(repo: FixtureRepo) -> None:
    small = GitSource(repo.path, repo.first, url=URL, max_file_bytes=BIG_FILE_BYTES // 2)
    result = search(small, path_prefix="data/")
    assert {"path": "data/big.txt", "reason": "too_large"} in result["skipped"]["paths"]
    assert result["files_unsearched"] == 2  # data/big.txt and data/latin1.txt (not_utf8)
    assert small.cache_info()["blobs_read"] == 2  # binary.bin and latin1.txt only
    big = GitSource(repo.path, repo.first, url=URL)
    [hit] = search(big, path_prefix="data/")["matches"]
    assert hit["path"] == "data/big.txt" and hit["text"] == f"needle {NEEDLE} at the very end"


def test_skipped_path_list_is_bounded(repo: FixtureRepo, tmp_path: Path) -> None:
    fresh = build_fixture_repo(tmp_path / "r")
    for i in range(130):
        (fresh.path / "links").mkdir(exist_ok=True)
        (fresh.path / "links" / f"l{i:03d}").symlink_to("../README.md")
    git(fresh.path, "add", "-A")
    git(fresh.path, "commit", "-q", "-m", "links")
    source = GitSource(fresh.path, git(fresh.path, "rev-parse", "HEAD"), url=URL)
    skipped = search(source, path_prefix="links/")["skipped"]
    assert skipped["total"] == 130 and skipped["by_reason"] == {"symlink": 130}
    assert len(skipped["paths"]) == 100 and skipped["paths_truncated"] is True
    assert skipped["paths"][0]["path"] == "links/l000"


# --- symbol, registration, schema ----------------------------------------------------


def test_symbol_needs_token_boundaries(source: GitSource) -> None:
    result = source.symbol(symbol=f"Handle{NEEDLE}", path_prefix="src/game/", offset=0, limit=100)
    assert [(m["path"], m["line"]) for m in result["matches"]] == [
        ("src/game/Spell.cpp", 3),
        ("src/game/Spell.cpp", 7),
        ("src/game/Spell.h", 1),
    ]


@pytest.mark.parametrize("symbol", ["", "1abc", "a-b", "a b", "a.b", "ä", "x" * 257, None, 3])
def test_symbol_must_be_an_identifier(source: GitSource, symbol: Any) -> None:
    with pytest.raises(ResearchError) as err:
        source.symbol(symbol=symbol, path_prefix=None, offset=0, limit=10)
    assert err.value.code == "request_invalid"


def test_registration_is_the_symbol_search_labelled(source: GitSource) -> None:
    symbol = f"spell_{NEEDLE.lower()}_bite"
    plain = source.symbol(symbol=symbol, path_prefix=None, offset=0, limit=10)
    labelled = source.registration(symbol=symbol, path_prefix=None, offset=0, limit=10)
    assert labelled["purpose"] == "registration_check_start"
    assert labelled["note"] == REGISTRATION_NOTE and "proves no registration" in REGISTRATION_NOTE
    assert {k: v for k, v in labelled.items() if k not in ("purpose", "note")} == plain
    assert [m["path"] for m in plain["matches"]] == [
        "src/game/Spell.cpp",
        "src/game/Spells/Aura.cpp",
    ]


def test_schema_searches_sql_files_only(source: GitSource) -> None:
    result = source.schema(text=NEEDLE, case_sensitive=True, offset=0, limit=100)
    assert [m["path"] for m in result["matches"]] == ["sql/updates/2024_01_01.SQL", "sql/world.sql"]
    assert result["files_unsearched"] == 0 and result["skipped"]["total"] == 0
    folded = source.schema(text="create table", case_sensitive=False, offset=0, limit=100)
    assert [m["line"] for m in folded["matches"]] == [1]


# --- files -----------------------------------------------------------------------------


def test_files_finds_paths_by_literal_substring(source: GitSource, repo: FixtureRepo) -> None:
    result = source.files(text="Spell", path_prefix=None, offset=0, limit=100)
    assert [f["path"] for f in result["files"]] == [
        "src/game/Spell.cpp",
        "src/game/Spell.h",
        "src/game/Spells/Aura.cpp",
    ]
    for item in result["files"]:
        assert item["blob"] == repo.blob_id(repo.first, item["path"])
        assert item["size"] == len(repo.files[item["path"]])
    assert source.files(text="spell", path_prefix=None, offset=0, limit=100)["total"] == 0


def test_files_lists_large_files_and_reports_links(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL, max_file_bytes=1024)
    big = source.files(text="big", path_prefix="data/", offset=0, limit=10)
    assert big["files"] == [
        {
            "path": "data/big.txt",
            "blob": repo.blob_id(repo.first, "data/big.txt"),
            "size": len(repo.files["data/big.txt"]),
        }
    ]
    linked = source.files(text=NEEDLE, path_prefix="src/", offset=0, limit=10)
    assert [f["path"] for f in linked["files"]] == [
        f"src/scripts/dir with space/ünïcode {NEEDLE}.txt"
    ]
    assert linked["skipped"]["paths"] == [{"path": f"src/game/{NEEDLE}.link", "reason": "symlink"}]
    deps = source.files(text="deps", path_prefix=None, offset=0, limit=10)
    assert deps["files"] == [] and deps["skipped"]["by_reason"] == {"submodule": 1}


def test_files_paging(source: GitSource) -> None:
    first = source.files(text="many/", path_prefix=None, offset=0, limit=10)
    assert first["total"] == MANY_FILES and first["next_offset"] == 10
    rest = source.files(text="many/", path_prefix=None, offset=10, limit=100)
    names = [f["path"] for f in first["files"] + rest["files"]]
    assert names == [f"many/file_{i:03d}.txt" for i in range(MANY_FILES)]


def test_listing_order_equals_git_ls_tree(source: GitSource, repo: FixtureRepo) -> None:
    listed = git(repo.path, "ls-tree", "-r", "-z", "--name-only", repo.first).split("\0")
    ours = source.files(text=".", path_prefix=None, offset=0, limit=100)
    assert ours["total"] == len(repo.files)  # every regular fixture file has a "."
    assert [f["path"] for f in ours["files"]] == [p for p in listed if p in repo.files]


# --- read ------------------------------------------------------------------------------


def test_read_returns_lines_with_provenance(source: GitSource, repo: FixtureRepo) -> None:
    result = source.read(path="src/game/Spell.cpp", start_line=2, end_line=3)
    blob = repo.blob_id(repo.first, "src/game/Spell.cpp")
    assert result == {
        "origin": source.origin,
        "path": "src/game/Spell.cpp",
        "blob": blob,
        "sha256": hashlib.sha256(repo.files["src/game/Spell.cpp"]).hexdigest(),
        "size": len(repo.files["src/game/Spell.cpp"]),
        "executable": False,
        "line_count": 7,
        "start_line": 2,
        "end_line": 3,
        "lines": [
            {"line": 2, "text": '#include "Spell.h"', "text_truncated": False},
            {"line": 3, "text": f"void Handle{NEEDLE}() {{}}", "text_truncated": False},
        ],
    }
    assert source.read(path="tools/run.sh", start_line=1, end_line=1)["executable"] is True


def test_read_crlf_cr_and_bom(source: GitSource, repo: FixtureRepo) -> None:
    crlf = source.read(path="docs/crlf.txt", start_line=1, end_line=3)
    assert [line["text"] for line in crlf["lines"]] == ["first line", f"second {NEEDLE}", "third"]
    assert crlf["sha256"] == hashlib.sha256(repo.files["docs/crlf.txt"]).hexdigest()
    cr = source.read(path="docs/cr.txt", start_line=1, end_line=3)
    assert [line["text"] for line in cr["lines"]] == ["one", f"two {NEEDLE}", "three"]
    bom = source.read(path="docs/bom.txt", start_line=1, end_line=1)
    assert bom["lines"][0]["text"] == f"bom {NEEDLE}" and bom["line_count"] == 2


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("link-to-spell", "symlink"),
        (f"src/game/{NEEDLE}.link", "symlink"),
        (SUBMODULE_PATH, "submodule"),
        ("data/binary.bin", "binary"),
        ("data/latin1.txt", "not_utf8"),
    ],
)
def test_read_refuses_what_is_no_text_file(source: GitSource, path: str, reason: str) -> None:
    with pytest.raises(ResearchError) as err:
        source.read(path=path, start_line=1, end_line=1)
    assert err.value.code == "path_not_readable"
    assert err.value.details["reason"] == reason
    assert NEEDLE not in str(err.value) and NEEDLE not in repr(err.value.details)


def test_read_too_large(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL, max_file_bytes=100)
    with pytest.raises(ResearchError) as err:
        source.read(path="data/big.txt", start_line=1, end_line=1)
    assert err.value.code == "path_not_readable" and err.value.details["reason"] == "too_large"
    assert source.cache_info()["blobs_read"] == 0


@pytest.mark.parametrize("path", ["nope.txt", "src/game", "src", "README", "many/file_999.txt"])
def test_read_of_a_path_that_is_no_blob(source: GitSource, path: str) -> None:
    with pytest.raises(ResearchError) as err:
        source.read(path=path, start_line=1, end_line=1)
    assert err.value.code == "path_not_found"


def test_read_deleted_in_a_later_commit_is_still_there(
    source: GitSource, repo: FixtureRepo
) -> None:
    assert (
        source.read(path="README.md", start_line=1, end_line=1)["lines"][0]["text"] == "# Fixture"
    )
    later = GitSource(repo.path, repo.second, url=URL)
    with pytest.raises(ResearchError) as err:
        later.read(path="README.md", start_line=1, end_line=1)
    assert err.value.code == "path_not_found"


@pytest.mark.parametrize(
    ("start", "end", "code"),
    [
        (1, 8, "line_out_of_range"),
        (8, 8, "line_out_of_range"),
        (0, 1, "request_invalid"),
        (3, 2, "request_invalid"),
        (1, READ_LINE_LIMIT + 1, "limit_exceeded"),
        (True, 2, "request_invalid"),
        ("1", 2, "request_invalid"),
    ],
)
def test_read_line_range_rules(source: GitSource, start: Any, end: Any, code: str) -> None:
    with pytest.raises(ResearchError) as err:
        source.read(path="src/game/Spell.cpp", start_line=start, end_line=end)
    assert err.value.code == code
    if code == "line_out_of_range":
        assert err.value.details["line_count"] == 7


def test_read_of_an_empty_file_has_no_lines(source: GitSource) -> None:
    with pytest.raises(ResearchError) as err:
        source.read(path="docs/empty.txt", start_line=1, end_line=1)
    assert err.value.code == "line_out_of_range" and err.value.details["line_count"] == 0


def test_read_limit_is_exactly_200_lines(source: GitSource) -> None:
    result = source.read(path="data/big.txt", start_line=1, end_line=READ_LINE_LIMIT)
    assert len(result["lines"]) == READ_LINE_LIMIT


# --- request validation ------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"text": ""}, "request_invalid"),
        ({"text": "a\nb"}, "request_invalid"),
        ({"text": "a\rb"}, "request_invalid"),
        ({"text": "a\0b"}, "request_invalid"),
        ({"text": "x" * 1025}, "request_invalid"),
        ({"text": "\ud800"}, "request_invalid"),
        ({"text": 5}, "request_invalid"),
        ({"case_sensitive": "yes"}, "request_invalid"),
        ({"offset": -1}, "request_invalid"),
        ({"offset": 2**31}, "request_invalid"),
        ({"offset": 1.0}, "request_invalid"),
        ({"limit": 0}, "request_invalid"),
        ({"limit": 101}, "limit_exceeded"),
        ({"path_prefix": "../src"}, "path_invalid"),
        ({"path_prefix": 3}, "request_invalid"),
    ],
)
def test_search_arguments_are_checked(
    source: GitSource, changes: dict[str, Any], code: str
) -> None:
    with pytest.raises(ResearchError) as err:
        search(source, **changes)
    assert err.value.code == code
    assert source.cache_info()["blobs_read"] == 0


def test_page_limit_follows_max_page(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL, max_page=5)
    assert search(source, limit=5)["returned"] == 5
    with pytest.raises(ResearchError) as err:
        search(source, limit=6)
    assert err.value.code == "limit_exceeded" and err.value.details["limit"] == 5


# --- the result schema -------------------------------------------------------------

RESULT_SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "project-result-v2.schema.json"


def test_results_fit_the_result_schema(source: GitSource) -> None:
    schema = json.loads(RESULT_SCHEMA.read_text())

    def check(kind: str, result: dict[str, Any]) -> None:
        jsonschema.validate(result, {"$ref": f"#/$defs/result/{kind}", "$defs": schema["$defs"]})
        jsonschema.validate(
            result["origin"], {"$ref": "#/$defs/git_origin", "$defs": schema["$defs"]}
        )

    check("source.search", search(source))
    check("source.search", source.symbol(symbol="count", path_prefix=None, offset=0, limit=5))
    check(
        "source.search",
        source.registration(symbol="RegisterSpellScript", path_prefix=None, offset=0, limit=5),
    )
    check("source.search", source.schema(text="x", case_sensitive=False, offset=0, limit=5))
    check("source.files", source.files(text="Spell", path_prefix=None, offset=0, limit=5))
    check("source.read", source.read(path="docs/crlf.txt", start_line=1, end_line=2))


def test_a_prefix_no_path_starts_with_is_refused_not_an_empty_answer(source: GitSource) -> None:
    # "0 hits, complete" below a mistyped directory would read as an absence proof.
    for query in (
        lambda p: source.search(text=NEEDLE, case_sensitive=True, path_prefix=p, offset=0, limit=5),
        lambda p: source.symbol(symbol=NEEDLE, path_prefix=p, offset=0, limit=5),
        lambda p: source.registration(symbol=NEEDLE, path_prefix=p, offset=0, limit=5),
        lambda p: source.files(text="cpp", path_prefix=p, offset=0, limit=5),
    ):
        with pytest.raises(ResearchError) as err:
            query("src/no_such_dir/")
        assert (err.value.code, err.value.details) == (
            "path_not_found",
            {"argument": "path_prefix"},
        )
    # A prefix that names files answers as before, also when nothing below it matches.
    none = source.search(
        text="no such text anywhere", case_sensitive=True, path_prefix="src/", offset=0, limit=5
    )
    assert none["total"] == 0 and none["files_searched"] > 0 and none["files_unsearched"] == 0
    assert source.files(text="no such name", path_prefix="src/", offset=0, limit=5)["total"] == 0


# --- whole words ---------------------------------------------------------------------


@pytest.mark.parametrize("word", ["1", "12", NEEDLE, "hit", "HIT"])
@pytest.mark.parametrize("case_sensitive", [True, False])
def test_whole_word_search_is_the_literal_search_at_token_boundaries(
    source: GitSource, repo: FixtureRepo, word: str, case_sensitive: bool
) -> None:
    whole = search(source, word, case_sensitive=case_sensitive, limit=100, whole_word=True)
    fold = (lambda s: s) if case_sensitive else (lambda s: "".join(c.lower() for c in s))
    expected = reference_hits(
        repo, word, matches=lambda line, w: contains_word(fold(line), fold(w))
    )
    # Files the search skips (too large, binary) are not in its answer.
    skipped = {item["path"] for item in whole["skipped"]["paths"]}
    expected = [hit for hit in expected if hit[0] not in skipped]
    assert [(m["path"], m["line"]) for m in whole["matches"]] == expected
    assert whole["total"] == len(expected)


def test_a_whole_word_id_does_not_match_longer_numbers(source: GitSource) -> None:
    result = search(source, "1", path_prefix="many/", whole_word=True)
    assert [m["path"] for m in result["matches"]] == ["many/file_001.txt"]


@pytest.mark.parametrize("text", ["a-b", "two words", "Spell.cpp"])
def test_a_whole_word_is_letters_digits_and_underscores(source: GitSource, text: str) -> None:
    with pytest.raises(ResearchError) as info:
        search(source, text, whole_word=True)
    assert info.value.code == "request_invalid"
    assert info.value.details == {"argument": "text", "what": "not_a_whole_word"}
