"""Command line for case packages.

    python -m viano_bug_analysis.case create SPEC.json OUT_DIR [--json]
    python -m viano_bug_analysis.case verify PACKAGE_DIR [--json]

``create`` builds a package from a case-spec-v1 file and prints its id and
path. ``verify`` loads a package and checks every attachment and every
declared member against the hashes recorded in the package; it writes
nothing. Errors print their stable code and exit with status 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from viano_bug_analysis.case.create import create_package
from viano_bug_analysis.case.package import load_package, verify_package
from viano_bug_analysis.errors import VbaError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m viano_bug_analysis.case", description="Create or verify case packages."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create", help="build a package from a case spec")
    create.add_argument("spec", type=Path, help="case-spec-v1 JSON file")
    create.add_argument("out_dir", type=Path, help="new package directory (must not exist)")
    create.add_argument("--json", action="store_true", help="print the result as JSON")
    verify = commands.add_parser("verify", help="check a package's hashes (read-only)")
    verify.add_argument("package", type=Path, help="package directory")
    verify.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "create":
            package = create_package(args.spec, args.out_dir)
        else:
            package = load_package(args.package)
            verify_package(package)
    except VbaError as err:
        if args.json:
            failure = {"error": err.code, "message": err.message, "details": err.details}
            sys.stdout.write(orjson.dumps(failure).decode() + "\n")
        else:
            print(f"error [{err.code}]: {err.message}", file=sys.stderr)
        return 1
    summary = {
        "package_id": package.package_id,
        "case_id": package.case_id,
        "path": str(package.path),
        "case_sha256": package.case_sha256,
    }
    if args.json:
        sys.stdout.write(orjson.dumps(summary).decode() + "\n")
    else:
        verb = "created" if args.command == "create" else "verified"
        print(f"{verb} package {package.package_id}")
        print(f"path: {package.path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
