"""Demo: scan the bundled sample bug report through the public snapshot API.

    python -m viano_bug_analysis.demo samples/bug-20 [--json]

It plays both sides of a real run: first it packs the sample folders into
ZIP attachments and records each member's SHA-256 and size (what an
operator's snapshot tool declares), then it reads the members back only
against those declarations, searches the source and looks rows up by typed
equality. Nothing is written outside a temporary directory.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import orjson

from viano_bug_analysis import _native
from viano_bug_analysis.snapshot import (
    LineQuery,
    MemberRef,
    RowTable,
    SnapshotArchive,
    read_lines,
    search_lines,
)

MAX_MEMBER_BYTES = 8 * 1024 * 1024
FIXED_ZIP_TIME = (2026, 11, 1, 0, 0, 0)


def pack(folder: Path, zip_path: Path) -> list[MemberRef]:
    """Deterministic ZIP of a folder; returns the declared member inventory."""
    refs = []
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            name = path.relative_to(folder).as_posix()
            data = path.read_bytes()
            info = zipfile.ZipInfo(name, FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
            refs.append(MemberRef(name, hashlib.sha256(data).hexdigest(), len(data)))
    return refs


def run(sample: Path, workdir: Path) -> dict[str, Any]:
    source_zip, db_zip = workdir / "wowsrc.zip", workdir / "db.zip"
    source_refs = pack(sample / "wowsrc", source_zip)
    db_refs = {ref.name: ref for ref in pack(sample / "db", db_zip)}

    source = SnapshotArchive(source_zip)
    texts = source.read_texts(source_refs, max_bytes=MAX_MEMBER_BYTES)
    queries = [
        LineQuery("symbol", "npc_wild_wolpertinger"),
        LineQuery("literal", "KilledMonsterCredit"),
        LineQuery("literal_ignore_case", "quest_status_incomplete"),
        LineQuery("literal", "ID"),
    ]
    pages = search_lines(texts, queries)
    credit_hit = pages[1].hits[0]
    context = read_lines(
        texts[credit_hit.text_index],
        max(1, credit_hit.line_number - 1),
        min(texts[credit_hit.text_index].line_count, credit_hit.line_number + 1),
    )

    db = SnapshotArchive(db_zip)
    rows_ref = db_refs["quest_template.rows.json"]
    table = RowTable.parse(db.read_bytes(rows_ref, max_bytes=MAX_MEMBER_BYTES))
    by_int = table.lookup({"ID": 90001}, columns=["ID", "LogTitle", "RequiredNpcOrGo1"])
    by_str = table.lookup({"ID": "90001"}, columns=["ID", "LogTitle"])
    refs_to_npc = table.find_references(90005, ["RequiredNpcOrGo1", "StartItem"], columns=["ID"])

    return {
        "sha256_implementation": _native.sha256_implementation(),
        "source_members": [
            {"member": ref.name, "sha256": ref.sha256, "size": ref.size, "lines": text.line_count}
            for ref, text in zip(source_refs, texts, strict=True)
        ],
        "searches": [
            {
                "mode": query.mode,
                "pattern": query.pattern,
                "total": page.total,
                "hits": [
                    {
                        "member": source_refs[hit.text_index].name,
                        "sha256": source_refs[hit.text_index].sha256,
                        "line": hit.line_number,
                        "text": hit.text.strip(),
                    }
                    for hit in page.hits
                ],
            }
            for query, page in zip(queries, pages, strict=True)
        ],
        "context": [{"line": h.line_number, "text": h.text} for h in context],
        "rows": {
            "member": rows_ref.name,
            "sha256": rows_ref.sha256,
            "lookup ID == 90001 (integer)": [(h.pointer, h.row) for h in by_int.hits],
            'lookup ID == "90001" (string)': [(h.pointer, h.row) for h in by_str.hits],
            "references to 90005": [
                (h.pointer, h.matched_columns, h.row) for h in refs_to_npc.hits
            ],
        },
    }


def print_summary(report: dict[str, Any]) -> None:
    print("VianoBugAnalysis demo: sample BUG-20 (read-only, every fact with its origin)")
    print(f"SHA-256 implementation: {report['sha256_implementation']}\n")
    print("Verified source members:")
    for m in report["source_members"]:
        print(f"  {m['member']}  {m['size']} bytes, {m['lines']} lines, sha256 {m['sha256'][:12]}…")
    print("\nSearches:")
    for s in report["searches"]:
        print(f"  {s['mode']:<20} {s['pattern']!r}: {s['total']} matching line(s)")
        for hit in s["hits"][:3]:
            print(f"      {hit['member']}:{hit['line']}  {hit['text']}")
    print("\nContext around the quest credit:")
    for line in report["context"]:
        print(f"  {line['line']:>4} | {line['text']}")
    rows = report["rows"]
    print(f"\nRow snapshot {rows['member']} (sha256 {rows['sha256'][:12]}…):")
    for label in ("lookup ID == 90001 (integer)", 'lookup ID == "90001" (string)'):
        for pointer, row in rows[label]:
            print(f"  {label}: {pointer} {row}")
    for pointer, matched, row in rows["references to 90005"]:
        print(f"  references to 90005: {pointer} via {', '.join(matched)} {row}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("sample", type=Path, help="sample folder, e.g. samples/bug-20")
    parser.add_argument("--json", action="store_true", help="print the raw report as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vba-demo-") as tmp:
        report = run(args.sample, Path(tmp))
    if args.json:
        sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print_summary(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
