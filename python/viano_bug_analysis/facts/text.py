"""The phrases every view of a fact is worded with: entities, places, origins, filters.

Pure functions of one fact (or one part of it), shared by the one-line
summary, the compact prompt view and the brief, so an entity or a filter
reads the same wherever a fact is shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from viano_bug_analysis.vocabulary import IDENTIFIER

LEAD_KIND = "project_lead"
# The kinds "already fixed?" states (the phase writes them, every renderer reads them).
FIX_CANDIDATE_KIND = "project_fix_candidate"
FIX_SEARCH_KIND = "project_fix_search"
# The coverage reason of the fact that counts the leads ``max_leads`` left out.
LIMIT_REASON = "leads_limit"
CLASS_NAMES = {
    "changed_since_report": "changed since the report",
    "engine_check": "engine check",
    "missing_reference": "missing reference",
    "heuristic": "heuristic",
    "script_file": "script file",
}
MAX_TEXT = 100
# What a name must look like to be echoed in an error (never a value of the document).
FIELD = IDENTIFIER  # a name shown back in an error only when it looks like one


def is_limit_fact(fact: Mapping[str, Any]) -> bool:
    return fact.get("kind") == "project_context_coverage" and fact.get("reason") == LIMIT_REASON


def lead_line(lead: Mapping[str, Any]) -> str:
    """``3. missing reference at conditions SourceEntry=5: <why> (rests on P7, P9)``."""
    return (
        f"{lead['rank']}. {CLASS_NAMES.get(lead['lead'], lead['lead'])} at "
        f"{location_text(lead['location'])}: {lead['why']} "
        f"(rests on {', '.join(lead['rests_on'])})"
    )


FIX_VERDICT_WORDS = {
    "fixed_by": "fixed by",
    "maybe": "maybe fixed by",
    "upstream_fixed_by": "fixed upstream (not in the pinned history) by",
    "upstream_maybe": "maybe fixed upstream (not in the pinned history) by",
}
FIX_SUBJECT_CHARS = 100


def fix_candidate_line(fact: Mapping[str, Any], *, link: bool = True) -> str:
    """``1. maybe fixed by 1a2b3c4d5e6f "subject" (2024-03-05, Dee, 1 file) <link>: why``
    of a ``project_fix_candidate`` fact, from its fields; ``link``: with its web link."""
    subject = str(fact.get("subject") or "")
    if len(subject) > FIX_SUBJECT_CHARS:
        subject = subject[: FIX_SUBJECT_CHARS - 1] + "…"
    files = int(fact.get("files_changed") or 0)
    address = f" {fact['link']}" if link and fact.get("link") else ""
    why = "; ".join(str(r["detail"]) for r in fact.get("reasons") or ())
    words = FIX_VERDICT_WORDS.get(str(fact.get("verdict")), str(fact.get("verdict")))
    return (
        f'{fact.get("rank")}. {words} {str(fact.get("commit"))[:12]} "{subject}" '
        f"({str(fact.get('date'))[:10]}, {fact.get('author')}, {count(files, 'file')})"
        f"{address}: {why}"
    )


def location_text(location: Mapping[str, Any]) -> str:
    if "commit" in location:
        return f"commit {str(location['commit'])[:12]}"
    if "path" in location:
        line = location.get("line")
        return f"{location['path']}:{line}" if line is not None else str(location["path"])
    return f"{location.get('table')} {key_text(location.get('key') or {})}".rstrip()


def key_text(key: Mapping[str, Any]) -> str:
    # Columns in name order: the index stores objects with sorted keys, so a line
    # reads the same at build time and from the stored package.
    return " ".join(f"{column}={key[column]}" for column in sorted(key))


def entity(fact: Mapping[str, Any]) -> str:
    return f"{fact['entity_type']} {fact['entity_id']}"


def named(fact: Mapping[str, Any]) -> str:
    return f'{entity(fact)} "{fact["name"]}"' if "name" in fact else entity(fact)


def place(where: Mapping[str, Any]) -> str:
    return str(where.get("pointer") or f"{where['source_ref']} line {where['line']}")


def origin_key(origin: Mapping[str, Any]) -> str:
    if "table" in origin:
        return f"{origin['table']} {origin['id_column']}={origin['id']} {origin['column']}"
    return entity(origin)


def origin(where: Mapping[str, Any], target: bool = True) -> str:
    """``quest 90001``, or the row and column a value came from (with the value)."""
    if "table" not in where:
        return entity(where)
    text = f"{where['table']} {where['id_column']}={where['id']}"
    if where["column"] != where["id_column"]:
        text += f" {where['column']}" + (f"={where['value']}" if target else "")
    return text


def filters(items: Iterable[Mapping[str, Any]]) -> str:
    return " and ".join(f"{f['column']} {f['operator']} {f['value']!r}" for f in items)


def cut(text: str, limit: int = MAX_TEXT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def count(number: int, one: str, many: str | None = None) -> str:
    return f"{number} {one if number == 1 else (many or one + 's')}"


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def number(label: str) -> int:
    return int(label[1:]) if label[1:].isdigit() else 0


def labels(ids: Iterable[str]) -> str:
    """``P56-P63,P70``: runs of consecutive labels joined."""
    numbers = sorted({number(label) for label in ids})
    runs: list[list[int]] = []
    for value in numbers:
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return ",".join(f"P{run[0]}" if len(run) == 1 else f"P{run[0]}-P{run[-1]}" for run in runs)


def ignored(value: Any) -> str:
    if value is None or value == "null":
        return "NULL"
    if value == "":
        return "empty"
    return str(value)
