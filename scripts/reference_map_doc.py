"""Write docs/reference-map-vcore.md from the bundled Vcore profile's reference map, or check it.

    python scripts/reference_map_doc.py           # rewrite the page
    python scripts/reference_map_doc.py --check   # exit 1 if the page is not what the map says

The page lists every ``[[references]]`` entry, table by table, and what a
mentioned or reached entity costs in reverse queries. It is generated so it
cannot drift from the map (tests/enrichment/test_reference_map_doc.py).
Run it with the project's environment (`.venv/bin/python`): it imports the
installed package, as the tests do.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from viano_bug_analysis.durable import PackageFiles
from viano_bug_analysis.enrichment import references
from viano_bug_analysis.enrichment.profile import Reference, load_profile

ROOT = Path(__file__).resolve().parent.parent

PROFILE_FILE = ROOT / "python" / "viano_bug_analysis" / "profiles" / "vcore" / "enrichment.toml"
PAGE = ROOT / "docs" / "reference-map-vcore.md"
OPERATORS = {"eq": "=", "ne": "≠", "lt": "<", "le": "≤", "gt": ">", "ge": "≥"}

INTRO = """\
# The Vcore reference map

Generated from the bundled profile
(`python/viano_bug_analysis/profiles/vcore/enrichment.toml`, section "the reference
map") by `scripts/reference_map_doc.py`; do not edit by hand. How the build follows
the map, and how to add an entry: docs/case-enrichment.md. Every entry has a fixture
case in both directions (tests/enrichment/test_reference_map_vcore.py, rows in
tests/fixtures/world_db.sql), and the two directions are checked to agree for any row
and ID (tests/enrichment/test_reference_map_directions.py).

Semantics come from the loaders of the pinned lineage (FirelandsProject/firelands-cata:
`ConditionMgr`, `SmartScriptMgr`, `ObjectMgr`, `GameEventMgr`, `SpellMgr`,
`WaypointManager`); the *note* column says where. The columns:

- **holds**: the entity type of the ID in the column; *symbol*: a script name,
  searched in the source at the pinned commit.
- **when**: the column holds that type only in rows matching this. Codes that put the
  same type in the same column are one entry, so a lookup costs one query, not one
  per code.
- **negative**: a negative value is the magnitude of an ID of this type, and what the
  sign means.
- **part of**: the row belongs to the entity it holds; it is asked for every entity the
  build reaches, not only for the mentioned ones.
- **expected**: the engine skips the row, or clears the value, when the entity does not
  exist; an ID with no row in the entity's table is a `project_missing_reference` lead.
"""


def _when(ref: Reference) -> str:
    parts = []
    for f in ref.when:
        if f.operator == "in":
            parts.append(f"`{f.column}` in {', '.join(map(str, f.value))}")
        else:
            parts.append(f"`{f.column}` {OPERATORS.get(f.operator, f.operator)} {f.value}")
    return "; ".join(parts)


def _holds(ref: Reference) -> str:
    if ref.symbol:
        return "*symbol*"
    text = f"`{ref.holds}`"
    if ref.separated_by is not None:
        sep = "a space" if ref.separated_by == " " else f"`{ref.separated_by}`"
        text += f", a list separated by {sep}"
    return text


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(profile_file: Path = PROFILE_FILE) -> str:
    profile = load_profile(profile_file)
    with profile_file.open("rb") as handle:
        notes = {r["name"]: r.get("note", "") for r in tomllib.load(handle)["references"]}
    lines = [INTRO, "## What an entity costs", ""]
    lines.append(
        f"{len(profile.references)} entries. A mentioned entity is asked by every entry whose "
        "column can hold its type: one `database.rows` query each, up to "
        f"`limits.reverse_per_entity` ({profile.limits.reverse_per_entity} here). An entity "
        "only reached is asked by its *part of* entries. All of them count against "
        f"`limits.max_queries` ({profile.limits.max_queries} here), shared with the entity "
        "lookups, the forward references, the rules and the other phases of the build."
    )
    lines += [
        "",
        "| entity type | its own table | reverse queries when mentioned | when reached |",
        "|---|---|---:|---:|",
    ]
    for entity_type, entity in profile.entities.items():
        table = f"`{entity.table}`" if entity.table else "none"
        mentioned = len(references.holders(profile, entity_type))
        reached = len(references.holders(profile, entity_type, part_of_only=True))
        lines.append(f"| `{entity_type}` | {table} | {mentioned} | {reached} |")
    lines += ["", "## Entries by table"]
    tables = list(dict.fromkeys(ref.table for ref in profile.references))
    for table in tables:
        lines += [
            "",
            f"### `{table}`",
            "",
            "| entry | column | holds | when | negative | part of | expected | note |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for ref in profile.references:
            if ref.table != table:
                continue
            negative = ""
            if ref.negative is not None:
                negative = f"`{ref.negative}`"
                if ref.negative_means:
                    negative += f": {ref.negative_means}"
            cells = [
                f"`{ref.name}`",
                f"`{ref.column}`",
                _holds(ref),
                _when(ref),
                _cell(negative),
                "yes" if ref.part_of else "",
                "yes" if ref.expected else "",
                _cell(notes.get(ref.name, "")),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE.relative_to(ROOT)} is stale: run scripts/reference_map_doc.py")
            return 1
        return 0
    # Temporary file, fsync, rename: an interrupted run leaves the old page whole.
    PackageFiles(PAGE.parent).replace(PAGE.name, text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
