"""Copy the source-of-truth schemas into the Python package, or check the copies.

    python scripts/sync_schemas.py           # regenerate derived parts, copy into the package
    python scripts/sync_schemas.py --check   # exit 1 if any copy or derived part drifted

Derived parts first: a schema that embeds another one under ``$defs/<name>``
(``investigation-response-v1`` embeds ``project-query-v1`` and
``investigation-request-v1``, ``-v2`` their second versions and
``case-facts-query-v1``, so the answer schema stands alone for a model's
grammar) gets the embedded copy regenerated from ``schemas/<name>.schema.json``;
only the embedded copy is rewritten, in the files' own form (two-space indent, UTF-8 as written).

``schemas/`` at the repository root is the source of truth; the package
ships byte-for-byte copies under ``python/viano_bug_analysis/schemas/`` so
that ``load_schema`` works from an installed wheel. A copy without a source
file is stale: sync removes it, check reports it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIR = ROOT / "schemas"
PACKAGE_DIR = ROOT / "python" / "viano_bug_analysis" / "schemas"
PATTERN = "*.schema.json"


# (embedding schema glob, embedded schema name): the copies kept in step with their source.
EMBEDDED = (
    ("investigation-response-v*.schema.json", "project-query-v1"),
    ("investigation-response-v*.schema.json", "project-query-v2"),
    ("investigation-response-v*.schema.json", "investigation-request-v1"),
    ("investigation-response-v*.schema.json", "investigation-request-v2"),
    ("investigation-response-v*.schema.json", "case-facts-query-v1"),
)


def _dumped(document: object) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def derived_drift(source_dir: Path = SOURCE_DIR) -> list[tuple[Path, str]]:
    """(file, its regenerated text) for every embedding schema whose embedded copies drifted
    (all of one file's embedded schemas regenerated together)."""
    regenerated: dict[Path, tuple[str, dict[str, object]]] = {}
    for pattern, name in EMBEDDED:
        source = source_dir / f"{name}{PATTERN[1:]}"
        if not source.is_file():
            continue  # drift() reports a missing source file
        embedded = json.loads(source.read_text(encoding="utf-8"))
        for path in sorted(source_dir.glob(pattern)):
            if path not in regenerated:
                text = path.read_text(encoding="utf-8")
                regenerated[path] = (text, json.loads(text))
            document = regenerated[path][1]
            defs = document.get("$defs", {})
            if isinstance(defs, dict) and name in defs:
                defs[name] = embedded
    return [
        (path, _dumped(document))
        for path, (text, document) in sorted(regenerated.items())
        if _dumped(document) != text
    ]


def drift(source_dir: Path = SOURCE_DIR, package_dir: Path = PACKAGE_DIR) -> list[str]:
    """One line per file that is missing, different or stale in ``package_dir``."""
    sources = {p.name: p for p in source_dir.glob(PATTERN)}
    copies = {p.name: p for p in package_dir.glob(PATTERN)}
    problems = []
    for name in sorted(sources.keys() | copies.keys()):
        if name not in copies:
            problems.append(f"missing copy: {name}")
        elif name not in sources:
            problems.append(f"stale copy without a source: {name}")
        elif sources[name].read_bytes() != copies[name].read_bytes():
            problems.append(f"copy differs: {name}")
    return problems


def sync(source_dir: Path = SOURCE_DIR, package_dir: Path = PACKAGE_DIR) -> list[str]:
    """Makes ``package_dir`` match ``source_dir``; returns what it changed."""
    changed = []
    sources = {p.name: p for p in source_dir.glob(PATTERN)}
    for name, source in sorted(sources.items()):
        target = package_dir / name
        data = source.read_bytes()
        if not target.is_file() or target.read_bytes() != data:
            target.write_bytes(data)
            changed.append(f"copied: {name}")
    for copy in sorted(package_dir.glob(PATTERN)):
        if copy.name not in sources:
            copy.unlink()
            changed.append(f"removed stale copy: {copy.name}")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report drift, change nothing")
    args = parser.parse_args(argv)
    if args.check:
        problems = [f"embedded copy differs: {p.name}" for p, _text in derived_drift()]
        problems += drift()
        for line in problems:
            print(line, file=sys.stderr)
        if problems:
            print("run: python scripts/sync_schemas.py", file=sys.stderr)
            return 1
        print(f"schemas in sync ({len(list(SOURCE_DIR.glob(PATTERN)))} files)")
        return 0
    for path, text in derived_drift():
        path.write_text(text, encoding="utf-8")
        print(f"regenerated embedded copies: {path.name}")
    for line in sync():
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
