"""Demo: build the bundled sample case package and run one investigation batch.

    python -m viano_bug_analysis.demo samples/bug-20 [--json]

It does what a real run does, minus the model: creates the case package from
the sample's spec (ZIP attachments with declared SHA-256 and sizes, canonical
case.json, manifest), sends one batch of six read-only queries through the
``InvestigationToolRouter`` of the default (Vcore) profile, built as ``vba
query`` builds it, then shows that a bad batch is refused as a whole.
Everything is written to a temporary directory that is removed afterwards;
the sample folder is only read.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

from viano_bug_analysis import _native
from viano_bug_analysis.case.create import create_package
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.tools import ToolError
from viano_bug_analysis.tools.batch import request_batch

SOURCE = "src-001"
ROWS = "db-001"
SCHEMA = "db-002"


def _batch(manifest: dict[str, Any], requests: list[dict[str, Any]]) -> dict[str, Any]:
    return request_batch(
        manifest,
        [
            {
                "request_id": f"Q{i:04d}",
                "hypothesis_id": request["hypothesis_id"],
                "action_id": f"demo-{i:04d}",
                "operation": request["operation"],
                "arguments": request["arguments"],
            }
            for i, request in enumerate(requests, start=1)
        ],
    )


def _requests() -> list[dict[str, Any]]:
    page = {"offset": 0, "limit": 10}
    return [
        {
            "hypothesis_id": "H1",
            "operation": "source.find_symbol",
            "arguments": {"source_refs": [SOURCE], "symbol": "SpellHit", **page},
        },
        {
            "hypothesis_id": "H1",
            "operation": "source.find_text",
            "arguments": {
                "source_refs": [SOURCE, "src-002"],
                "text": "killedmonstercredit",
                "case_sensitive": False,
                **page,
            },
        },
        {
            "hypothesis_id": "H1",
            "operation": "source.read_context",
            "arguments": {"source_ref": SOURCE, "start_line": 37, "end_line": 39},
        },
        {
            "hypothesis_id": "H2",
            "operation": "database.describe",
            "arguments": {"source_ref": SCHEMA},
        },
        {
            "hypothesis_id": "H2",
            "operation": "database.lookup",
            "arguments": {
                "source_ref": ROWS,
                "filters": {"ID": 90001},
                "columns": ["ID", "LogTitle", "RequiredNpcOrGo1", "RequiredNpcOrGoCount1"],
                **page,
            },
        },
        {
            "hypothesis_id": "H2",
            "operation": "database.find_references",
            "arguments": {
                "source_ref": ROWS,
                "search_columns": ["RequiredNpcOrGo1", "StartItem"],
                "value": 90005,
                "columns": ["ID"],
                **page,
            },
        },
    ]


def run(sample: Path, workdir: Path) -> dict[str, Any]:
    package = create_package(sample / "case-spec.json", workdir / "package")
    router = load_profile().router()
    result = router.query(package.path, _batch(package.manifest, _requests()))
    bad = _batch(
        package.manifest,
        [
            _requests()[0],
            {
                "hypothesis_id": "H2",
                "operation": "database.lookup",
                "arguments": {
                    "source_ref": ROWS,
                    "filters": {"LogTitle LIKE": "%Wolp%"},
                    "offset": 0,
                    "limit": 5,
                },
            },
        ],
    )
    try:
        router.query(package.path, bad)
        refusal: dict[str, Any] = {"error": None}
    except ToolError as err:
        refusal = {"error": err.code, "message": err.message, "details": err.details}
    return {
        "sha256_implementation": _native.sha256_implementation(),
        "package": {
            "path": "(temporary)",
            "package_id": package.manifest["package_id"],
            "case_sha256": package.case_sha256,
            "hypotheses": sorted(package.hypothesis_ids),
        },
        "result": result,
        "rejected_batch": refusal,
    }


def print_summary(report: dict[str, Any]) -> None:
    package = report["package"]
    result = report["result"]
    print("VianoBugAnalysis demo — sample BUG-20, read-only, every fact with its origin")
    print(f"package {package['package_id']}, case.json sha256 {package['case_sha256'][:16]}…,")
    hypotheses = ", ".join(package["hypotheses"])
    print(f"hypotheses {hypotheses}; SHA-256 via {report['sha256_implementation']}")
    print(f"batch sha256 {result['batch_sha256'][:16]}…\n")
    for item in result["results"]:
        answer = item["result"]
        print(f"[{item['request_id']} {item['hypothesis_id']}] {item['operation']}")
        if "matches" in answer:
            hits, searched = len(answer["sources"]), answer["sources_searched"]
            print(f"    {answer['total']} matching line(s) in {hits} of {searched} source(s)")
            for match in answer["matches"]:
                origin = f"{match['source_ref']}@{match['sha256'][:12]}:{match['line']}"
                print(f"    {origin}  {match['text'].strip()}")
        elif "lines" in answer:
            print(f"    {answer['source_ref']}@{answer['sha256'][:12]}")
            for line in answer["lines"]:
                print(f"    {line['line']:>4} | {line['text']}")
        elif "rows" in answer:
            print(f"    {answer['total']} row(s), coverage {answer['coverage']}")
            for row in answer["rows"]:
                via = (
                    f" via {', '.join(row['matched_columns'])}" if "matched_columns" in row else ""
                )
                shown = orjson.dumps(row["row"]).decode()  # as stored, not a Python repr
                print(f"    {answer['source_ref']}#{row['pointer']}{via}  {shown}")
        else:
            names = ", ".join(c["name"] for c in answer["columns"])
            print(f"    table {answer['table']} ({answer['coverage']}): {names}")
        print()
    refusal = report["rejected_batch"]
    print("A batch with an unknown column is refused as a whole, nothing runs:")
    print(f"    {refusal['error']}: {refusal['message']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run one investigation batch on a sample.")
    parser.add_argument(
        "sample", type=Path, help="sample folder with case-spec.json, e.g. samples/bug-20"
    )
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
