"""The fact vocabulary: every kind of enrichment fact, defined once.

A kind is its name, its label (what a prompt or report says the fact is),
its fields (the branch of ``schemas/enrichment-index-v1.schema.json`` under
``$defs/<name>``: the schema file is the one source of the fields, read here,
never restated), its one-line summary (``vba case build``), its compact view
(the model's: a few lines, no hashes, starting with the fact's label) and its
report view. Every reader of facts dispatches through ``fact_kind``: a kind
outside the vocabulary is an ``UnknownFactKind`` error, never a guess.

The labels are the texts prompts of ``investigation_project_v1`` were built
with: a stored prompt rebuilds only while they stay word for word.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from viano_bug_analysis.errors import UnknownFactKind
from viano_bug_analysis.facts import client_text as client
from viano_bug_analysis.facts import text as t
from viano_bug_analysis.schemas import load_schema

INDEX_SCHEMA = "enrichment-index-v1"
# A cell of a row, a description or a reason is cut here in the compact view
# (marked with "…"); the whole value stays in the index and in facts_query's
# ``full`` view.
MAX_CELL = 80
MAX_COMPACT_TEXT = 300

Facts = Mapping[str, Mapping[str, Any]]
Summary = Callable[[Mapping[str, Any], Facts], "str | None"]
Compact = Callable[[Mapping[str, Any]], str]
# The report's table rows of one fact: (cells by column, JSON Pointer of the row or None).
ReportRows = Callable[[Mapping[str, Any]], "tuple[str, list[tuple[dict[str, str], str | None]]]"]
# How many hex digits of a capture's SHA-256 the report shows (its file name holds all).
SHORT_SHA = 12


@dataclass(frozen=True)
class FactKind:
    name: str
    label: str
    _summary: Summary
    _compact: Compact | None = None
    # The statement is the finding (an empty result, a coverage note): views keep it.
    statement_is_finding: bool = False
    # Results that repeat an earlier one word for word are left out of prompts.
    deduplicated: bool = False
    # The report shows the statement above the fact's fields (the finding is worded there).
    report_statement: bool = False
    # Came after investigation_project_v1, whose prompts list the labels as they were:
    # left out of ``labels(stored=True)`` so those prompts keep their bytes.
    later: bool = False
    # The report's table of this kind: its title and the cells of each row
    # (None: one row, the fact's summary line, and its statement when report_statement).
    _report_rows: ReportRows | None = None

    @property
    def schema(self) -> dict[str, Any]:
        """This kind's branch of the enrichment-index schema (its fields)."""
        return _branches()[self.name]

    def summary(self, fact: Mapping[str, Any], facts: Facts | None = None) -> str:
        """One line for the build summary (``facts``: the index by fact ID, for the
        kinds that word a relation to another fact)."""
        return self._summary(fact, facts or {}) or ""

    def compact(self, fact: Mapping[str, Any]) -> str:
        """The prompt view: ``P12 ...``, a few lines, no hashes."""
        body = self._compact(fact) if self._compact else self._summary(fact, {})
        return f"{fact['fact_id']} {body or self.name}"

    def report(self, fact: Mapping[str, Any], facts: Facts | None = None) -> dict[str, Any]:
        """The report's view: ID, kind, label, the statement, the fields, the provenance,
        and the rows of the table it is shown in (``table``: its title; ``rows``: cells by
        column and where each row is in the capture, ``source``: the capture's path, its
        SHA-256 cut to ``SHORT_SHA`` and the JSON Pointer; or what else it was read from)."""
        provenance = fact.get("provenance")
        statement = fact.get("statement")
        if self._report_rows is not None:
            table, rows = self._report_rows(fact)
        else:
            cells = {"finding": self.summary(fact, facts)}
            if self.report_statement and isinstance(statement, str):
                cells["statement"] = statement
            table, rows = self.label, [(cells, None)]
        read_from = _read_from(fact)
        return {
            "fact_id": str(fact["fact_id"]),
            "kind": self.name,
            "label": self.label,
            "statement": statement if isinstance(statement, str) else None,
            "report_statement": self.report_statement,
            "fields": {
                k: v
                for k, v in fact.items()
                if k not in {"fact_id", "kind", "statement", "provenance"}
            },
            "provenance": dict(provenance) if isinstance(provenance, dict) else None,
            "table": table,
            "rows": [
                {"cells": cells, "source": _source(read_from, pointer)} for cells, pointer in rows
            ],
        }


def _read_from(fact: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The provenance the report shows: the fact's own, or (a relationship) the capture
    of the row it starts from."""
    for candidate in (fact.get("provenance"), fact.get("from")):
        if isinstance(candidate, Mapping) and (
            "capture_sha256" in candidate or "origin" in candidate
        ):
            return candidate
    return None


def _source(read_from: Mapping[str, Any] | None, pointer: str | None) -> dict[str, Any] | None:
    if read_from is None:
        return None  # the case inputs (a mention): no capture
    sha = read_from.get("capture_sha256")
    origin = read_from.get("origin")
    return {
        "capture_path": read_from.get("capture_path"),
        "sha256": sha[:SHORT_SHA] if isinstance(sha, str) else None,
        "pointer": pointer or read_from.get("pointer"),
        # Read from elsewhere than a capture (the history, for "already fixed?").
        "origin": None if sha else _origin_text(origin),
    }


def _origin_text(origin: Any) -> str | None:
    if not isinstance(origin, Mapping):
        return None
    commit = origin.get("commit")
    where = f" {str(commit)[:SHORT_SHA]}" if isinstance(commit, str) else ""
    return f"{origin.get('kind', 'source')}{where}"


def fact_kind(name: Any) -> FactKind:
    """The kind ``name``; ``unknown_fact_kind`` for a name outside the vocabulary."""
    kind = FACT_KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        shown = name if isinstance(name, str) and t.FIELD.fullmatch(name) else None
        raise UnknownFactKind(
            "unknown_fact_kind",
            f"{shown!r} is not a fact kind of the vocabulary"
            if shown
            else "the fact's kind is not a name of the vocabulary",
            {"kind": shown, "allowed": list(FACT_KINDS)},
        )
    return kind


def labels(*, stored: bool = False) -> dict[str, str]:
    """Kind name -> label, in vocabulary order; ``stored``: only the kinds
    ``investigation_project_v1`` prompts list as ``labels`` (fixed with their bytes)."""
    return {name: kind.label for name, kind in FACT_KINDS.items() if not (stored and kind.later)}


@cache
def _branches() -> dict[str, dict[str, Any]]:
    defs: dict[str, dict[str, Any]] = load_schema(INDEX_SCHEMA)["$defs"]
    return defs


# -- one-line summaries ------------------------------------------------------------------


def _fix_candidate(fact: Mapping[str, Any], _: Facts) -> str:
    # The statement words verdict, subject, date, author, timing and reasons.
    files = f"; {fact['files_changed']} file(s) changed" if "files_changed" in fact else ""
    link = f" <{fact['link']}>" if fact.get("link") else ""
    return f"{fact['rank']}. {fact['statement']}{files}{link}"


def _fix_candidate_compact(fact: Mapping[str, Any]) -> str:
    shown = ", ".join(str(f) for f in list(fact.get("files") or ())[:5])
    more = max(0, int(fact.get("files_changed") or 0) - len(list(fact.get("files") or ())[:5]))
    files = f" files: {shown}" + (f" (+{more} more)" if more else "") if shown else ""
    return _fix_candidate(fact, {}) + files


def _fix_search(fact: Mapping[str, Any], _: Facts) -> str:
    return str(fact["statement"])


def _report_revision(fact: Mapping[str, Any], _: Facts) -> str:
    # The statement words the relation (case/report_revision.py).
    commit = f" = {fact['commit'][:12]}…" if fact.get("commit") else ""
    return f"report revision {fact.get('reported') or '(no commit ID)'}{commit}: " + str(
        fact["statement"]
    )


def _mention(fact: Mapping[str, Any], _: Facts) -> str:
    return f"mentioned: {t.entity(fact)} ({t.place(fact['where'])})"


def _entity(fact: Mapping[str, Any], _: Facts) -> str:
    name = f'"{fact["name"]}"' if "name" in fact else "(no name in the table)"
    return f"{t.entity(fact)}: {name}"


def _name_match(fact: Mapping[str, Any], _: Facts) -> str:
    found = "; ".join(
        f"{m['entity_type']} {m['entity_id']} ({m['table']})" for m in fact["matches"]
    )
    how = ("ambiguous, " if fact["ambiguous"] else "") + (
        "followed" if fact["followed"] else "not followed (too many)"
    )
    return f'name "{fact["name"]}" ({t.place(fact["where"])}) is exactly {found}: {how}'


def _untyped(fact: Mapping[str, Any], _: Facts) -> str:
    found = ", ".join(fact["found_as"]) or "nothing asked (" + ", ".join(fact["asked_as"]) + ")"
    return f"ID {fact['entity_id']} without a type ({t.place(fact['where'])}): found as {found}"


def _unresolved(fact: Mapping[str, Any], _: Facts) -> str:
    return (
        f"link {fact['form']} {fact['entity_id']} ({t.place(fact['where'])}): a type this "
        "profile does not read, not looked up"
    )


def _name_candidates(fact: Mapping[str, Any], _: Facts) -> str:
    shown = fact["not_found"][:8]
    more = len(fact["not_found"]) - len(shown)
    line = f"{fact['asked']} phrase(s) asked as names; no entity is named " + ", ".join(
        f'"{name}"' for name in shown
    )
    if more:
        line += f" (and {more} more)"
    if fact["not_asked"]:
        line += f"; {len(fact['not_asked'])} name(s) of types without a name column not asked"
    return line


def _description(fact: Mapping[str, Any], _: Facts) -> str:
    return f"{fact['role']} ({fact['table']}.{fact['source_column']}): {t.cut(fact['text'])}"


def _rows(fact: Mapping[str, Any], _: Facts) -> str:
    return f"{len(fact['rows'])} row(s) of {fact['table']} where {t.filters(fact['filters'])}"


def _relationship(fact: Mapping[str, Any], by_id: Facts) -> str:
    source, target = fact["from"], fact["to"]
    if "query_sha256" not in target:  # an entity without a table of its own
        reached = f"{target['entity_type']} {target['value']}"
        return f"{fact['relation']}: {t.origin(source)} -> {reached}"
    where = target.get("table") or f"symbol {target.get('symbol')}"
    named = ""
    target_fact = by_id.get(target.get("fact", ""))
    if target_fact is not None and target_fact["kind"] == "project_empty_result":
        named = " (none in this table)" if "table" in target else " (no source line)"
    return f"{fact['relation']}: {t.origin(source)} -> {where}{named}"


def _relationship_summary(fact: Mapping[str, Any], by_id: Facts) -> str:
    """The build summary's line: a reverse lookup is worded as the rows it asked for
    (``quest_template.RequiredNpcOrGo1 = 36440``), a forward one as the prompt has it."""
    if reverse_lookup(fact) is None:
        return _relationship(fact, by_id)
    named = ""
    target_fact = by_id.get(fact["to"].get("fact", ""))
    if target_fact is not None and target_fact["kind"] == "project_empty_result":
        named = ": none in this table"
    return f"{fact['relation']}: {reverse_lookup(fact)} (names {t.origin(fact['from'])}){named}"


def reverse_lookup(fact: Mapping[str, Any]) -> str | None:
    """``table.column = value`` for a relationship that looked up the rows naming an
    entity (the reverse direction of a map entry); ``None`` for any other."""
    source, target = fact["from"], fact["to"]
    reverse = fact.get("direction", "forward" if "table" in source else "reverse") == "reverse"
    if not reverse or "table" not in target or "column" not in target:
        return None
    value = target.get("value")
    if isinstance(value, list):  # the ID and its negative form (an IN filter)
        return f"{target['table']}.{target['column']} in ({', '.join(map(str, value))})"
    return f"{target['table']}.{target['column']} = {value}"


def _source_hits(fact: Mapping[str, Any], _: Facts) -> str:
    first = fact["matches"][0]
    return (
        f"symbol {fact['symbol']}: {fact['total']} line(s) at the pinned commit, "
        f"first {first['path']}:{first['line']}"
    )


def _constant(fact: Mapping[str, Any], _: Facts) -> str:
    match = fact["match"]
    return f"constant {fact['constant']} = {t.entity(fact)} at {match['path']}:{match['line']}"


def _empty(fact: Mapping[str, Any], _: Facts) -> str:
    if "table" in fact:
        return f"none in this table: {fact['table']} where {t.filters(fact['filters'])}"
    return f"no source line names symbol {fact['symbol']}"


def _lead(fact: Mapping[str, Any], _: Facts) -> str:
    return "lead " + t.lead_line(fact)


def _rule_hit(fact: Mapping[str, Any], _: Facts) -> str:
    rows = fact["rows"]
    where = f"{rows[0]['table']} {t.key_text(rows[0]['key'])}" if rows else "no row"
    if len(rows) > 1:
        where += f" and {t.count(len(rows) - 1, 'more row')}"
    source = fact.get("engine_source")
    checked = f", checked at {source['path']}:{source['line']}" if source else ""
    return f"{fact['rule_kind']} rule {fact['rule']}: {t.entity(fact)} ({where}{checked})"


def _missing_reference(fact: Mapping[str, Any], _: Facts) -> str:
    source, looked = fact["from"], fact["looked_in"]
    return (
        f"missing reference {fact['reference']}: {source['table']}.{source['column']} of "
        f"{source['table']} {t.key_text(source['key'])} names {t.entity(fact)}, none in "
        f"{looked['table']}.{looked['column']}"
    )


def _script_file(fact: Mapping[str, Any], _: Facts) -> str:
    return (
        f"script file candidate for {t.entity(fact)}: {fact['path']} ({fact['reason']}, "
        f"{t.count(len(fact['evidence']), 'line')} of evidence)"
    )


def _change(fact: Mapping[str, Any], _: Facts) -> str:
    return (
        f"changed since the report: commit {fact['commit'][:12]} ({fact['author_time']}) "
        f'"{t.cut(fact["summary"])}": {t.count(len(fact["changes"]), "changed line")} naming '
        + ", ".join(str(term) for term in fact["terms"])
    )


def _coverage_line(fact: Mapping[str, Any], _: Facts) -> str:
    reason = fact["reason"]
    if t.is_limit_fact(fact):
        classes = ", ".join(
            f"{count} {t.CLASS_NAMES.get(lead, lead)}" for lead, count in fact["by_class"].items()
        )
        return (
            f"coverage: leads_limit: {t.count(int(fact['count']), 'more lead')} ranked past "
            f"max_leads ({fact['limit']}): {classes}"
        )
    if reason == "value_not_followed":
        return (
            f"no reference: {fact['table']}.{fact['column']} held a no-reference value "
            f"(ignore_values) in {t.count(int(fact['count']), 'row')}, nothing to follow "
            f"({fact['relation']})"
        )
    if reason == "candidates_dropped":
        return f"coverage: candidates_dropped: {fact['count']} {fact['what']} not looked up"
    if reason == "query_budget":
        stages = ", ".join(
            f"{sum(kinds.values())} of the {stage.replace('_', ' ')}"
            for stage, kinds in fact["not_asked"].items()
        )
        unchecked = fact.get("rules_not_checked") or []
        rules = f"; rules not fully checked: {', '.join(unchecked)}" if unchecked else ""
        return (
            f"coverage: query_budget: {t.count(int(fact['count']), 'query', 'queries')} not "
            f"asked ({stages}) of max_queries {fact['max_queries']}, "
            f"{fact['reserved_for_phases']} kept for the build phases{rules}"
        )
    if reason == "read_after_phases":
        return (
            f"coverage: read_after_phases: {t.count(int(fact['count']), 'lookup')} of the "
            "reference map asked on what the build phases left, after them: not checked "
            "by the rules or the script-file candidates"
        )
    if reason == "database_unreadable":
        codes = ", ".join(f"{code} {n}" for code, n in fact["codes"].items())
        return f"coverage: database_unreadable: every database query was refused ({codes})"
    return "coverage: " + coverage_target(fact)


def coverage_line(fact: Mapping[str, Any]) -> str:
    """The coverage line as prompts word it (facts/brief.py): fixed with their bytes."""
    return _coverage_line(fact, {})


# What a skipped file count means (project-research-v1, ``skipped.by_reason``).
_SKIPPED = {
    "missing": "missing from the clone",
    "binary": "binary",
    "not_utf8": "not UTF-8",
    "too_large": "too large",
    "path_invalid": "with an invalid path",
}


def _changes_detail(fact: Mapping[str, Any]) -> str:
    gaps = ", ".join(str(gap) for gap in fact.get("incomplete_reasons") or ()) or "no reason given"
    line = f"not every change was compared ({gaps})"
    skipped = fact.get("files_skipped") or {}
    if skipped:
        line += "; files not compared: " + ", ".join(
            f"{n} {_SKIPPED.get(reason, reason)}" for reason, n in skipped.items()
        )
    if "commits_examined" in fact and "range_commits" in fact:
        line += f"; {fact['commits_examined']} of {fact['range_commits']} commits examined"
    return line


def _reverse_limit_detail(fact: Mapping[str, Any]) -> str:
    return (
        f"{t.entity(fact)}: {t.count(int(fact['count']), 'map entry', 'map entries')} holding "
        f"its type not asked (reverse_per_entity): {', '.join(fact['not_asked'])}"
    )


def _refused_detail(fact: Mapping[str, Any]) -> str:
    return (
        f"{coverage_subject(fact)}: {t.count(int(fact.get('count', 1)), 'query', 'queries')} "
        f"refused ({fact.get('code') or 'no code'})"
    )


# Reasons whose target is not a table, symbol or text: the line names what they count.
_COVERAGE_DETAIL: Mapping[str, Callable[[Mapping[str, Any]], str]] = {
    "changes_incomplete": _changes_detail,
    "fix_changes_incomplete": _changes_detail,
    "reverse_references_limit": _reverse_limit_detail,
    "query_refused": _refused_detail,
}


def _coverage_summary(fact: Mapping[str, Any], by_id: Facts) -> str:
    detail = _COVERAGE_DETAIL.get(str(fact["reason"]))
    if detail is None:
        return _coverage_line(fact, by_id)
    return f"coverage: {fact['reason']}: {detail(fact)}"


def coverage_subject(fact: Mapping[str, Any]) -> str:
    """What a coverage fact concerns: the table (or symbol, text, source, entity)."""
    return coverage_target(fact).partition(": ")[2].split(" (")[0] or (
        t.entity(fact) if "entity_type" in fact else str(fact["reason"])
    )


def coverage_group(reason: str, facts: list[Mapping[str, Any]]) -> str:
    """One line for every coverage fact of one reason (the build summary's coverage
    block): how many, then what they concern, never a blank reason."""
    if len(facts) == 1:
        return _coverage_summary(facts[0], {}).removeprefix("coverage: ")
    if reason in _BOUNDS:
        relations = t.unique(str(f.get("relation")) for f in facts if f.get("relation"))
        return (
            f"{reason}: {t.count(len(facts), 'reference')} not followed ({_BOUNDS[reason]}): "
            + _listed(relations)
        )
    if reason == "query_refused":
        queries = sum(int(f.get("count", 1)) for f in facts)
        codes = t.unique(str(f.get("code")) for f in facts if f.get("code"))
        return (
            f"query_refused: {t.count(queries, 'query', 'queries')} refused "
            f"({', '.join(codes) or 'no code'}): " + _listed(t.unique(map(coverage_subject, facts)))
        )
    detail = _COVERAGE_DETAIL.get(reason)
    shown = [detail(f) for f in facts] if detail else t.unique(map(coverage_subject, facts))
    return f"{reason}: {t.count(len(facts), 'note')}: " + _listed(shown, "; ")


_BOUNDS = {"max_depth": "the depth bound", "max_relationships": "the relationship bound"}
_LISTED = 8


def _listed(items: list[str], separator: str = ", ") -> str:
    more = len(items) - _LISTED
    return separator.join(items[:_LISTED]) + (f" and {more} more" if more > 0 else "")


def coverage_target(fact: Mapping[str, Any]) -> str:
    """Reason, code, the table (or symbol, or relation) it concerns, and how many."""
    line = str(fact["reason"])
    if fact.get("code"):
        line += f" {fact['code']}"
    query = fact.get("query", {})
    table = fact.get("table") or query.get("table")
    if table and fact.get("column"):
        table = f"{table}.{fact['column']}"
    target = (
        table
        or (f"symbol {fact['symbol']}" if "symbol" in fact else None)
        or (f"symbol {query['symbol']}" if "symbol" in query else None)
        or (f"text {fact['text']!r}" if "text" in fact else None)
        or (f"text {query['text']!r}" if "text" in query else None)
        or fact.get("source")
    )
    relation = fact.get("relation") or fact.get("purpose", {}).get("relation")
    line += ": " + ", ".join(str(part) for part in (target, relation) if part)
    if "count" in fact:
        one = fact["count"] == 1
        if fact["reason"] == "query_refused":
            line += f" ({fact['count']} quer{'y' if one else 'ies'})"
        else:
            line += f" ({fact['count']} value{'' if one else 's'})"
    elif "returned" in fact:
        line += f" ({fact['returned']} returned)"
    return line


# -- compact views (the model's) ---------------------------------------------------------


def cell(value: Any) -> str:
    """One value of a row as a table cell: NULL, a number, or the text cut at MAX_CELL."""
    if value is None:
        return "NULL"
    if isinstance(value, dict) and isinstance(value.get("text_ref"), str):
        return f"(text {value['text_ref']})"  # the text is its own description fact
    text = value if isinstance(value, str) else str(value)
    return t.cut(text, MAX_CELL).replace("|", "¦")


def row_table(rows: list[Mapping[str, Any]], indent: str = "  ") -> list[str]:
    """Rows as a small table: a header of the columns, then one line per row (one row:
    ``column=value`` pairs, which read better for a wide row)."""
    if not rows:
        return []
    if len(rows) == 1:
        return [indent + " ".join(f"{c}={cell(v)}" for c, v in rows[0].items())]
    columns = t.unique(c for row in rows for c in row)
    lines = [indent + " | ".join(columns)]
    lines += [indent + " | ".join(cell(row.get(c)) for c in columns) for row in rows]
    return lines


def _rows_compact(fact: Mapping[str, Any]) -> str:
    head = (
        f"{fact['table']} where {t.filters(fact['filters'])}: "
        f"{t.count(len(fact['rows']), 'row')}"
        + ("" if fact.get("complete_filtered_rows", True) else " (the first page)")
    )
    return "\n".join([head, *row_table(fact["rows"])])


def _rows_report(fact: Mapping[str, Any]) -> tuple[str, list[tuple[dict[str, str], str | None]]]:
    """One table per database table; a row per row found, at its pointer in the capture."""
    pointer = (fact.get("provenance") or {}).get("pointer")
    return f"rows of {fact['table']}", [
        ({str(c): cell(v) for c, v in row.items()}, f"{pointer}/{i}" if pointer else None)
        for i, row in enumerate(fact["rows"])
    ]


def _description_compact(fact: Mapping[str, Any]) -> str:
    return (
        f"{fact['role']} ({fact['table']}.{fact['source_column']}): "
        f"{t.cut(fact['text'], MAX_COMPACT_TEXT)}"
    )


def _source_hits_compact(fact: Mapping[str, Any]) -> str:
    lines = [
        f"symbol {fact['symbol']}: {t.count(int(fact['total']), 'line')} at the pinned commit"
        + ("" if len(fact["matches"]) >= fact["total"] else f", {len(fact['matches'])} shown")
    ]
    lines += [
        f"  {m['path']}:{m['line']}: {t.cut(str(m.get('text', '')), MAX_COMPACT_TEXT)}"
        for m in fact["matches"]
    ]
    return "\n".join(lines)


def _rule_hit_compact(fact: Mapping[str, Any]) -> str:
    return f"{_rule_hit(fact, {})}: {t.cut(str(fact.get('statement', '')), MAX_COMPACT_TEXT)}"


def _coverage_compact(fact: Mapping[str, Any]) -> str:
    line = _coverage_line(fact, {})
    statement = fact.get("statement")
    if isinstance(statement, str) and fact["reason"] not in {"leads_limit", "query_budget"}:
        line += f" — {t.cut(statement, MAX_COMPACT_TEXT)}"
    return line


def _empty_compact(fact: Mapping[str, Any]) -> str:
    return _empty(fact, {})


def _relationship_compact(fact: Mapping[str, Any]) -> str:
    line = _relationship(fact, {})
    target = fact["to"].get("fact")
    return line + (f" ({target})" if target else "")


FACT_KINDS: Mapping[str, FactKind] = {
    kind.name: kind
    for kind in (
        FactKind("case_mention", "named in the case inputs", _mention),
        FactKind(
            "case_untyped_mention",
            "named in the case inputs without a type; project data says which types have this ID",
            _untyped,
        ),
        FactKind(
            "case_unresolved_mention",
            "named in the case inputs as a type this profile does not read",
            _unresolved,
        ),
        FactKind(
            "case_name_candidates",
            "phrases of the case inputs asked as names that no entity carries",
            _name_candidates,
        ),
        FactKind(
            "project_entity", "project data: an entity as the world database defines it", _entity
        ),
        FactKind(
            "project_name_match",
            "project data: entities carrying exactly a name the case gives "
            "without an ID (candidates when ambiguous)",
            _name_match,
        ),
        FactKind(
            "project_rows",
            "project data: rows of the world database",
            _rows,
            _rows_compact,
            deduplicated=True,
            _report_rows=_rows_report,
        ),
        FactKind(
            "project_description",
            "project data: text that describes intended mechanics, not an executed server action",
            _description,
            _description_compact,
        ),
        FactKind(
            "project_relationship",
            "project data: a configured reference, not a runtime observation and not a cause",
            _relationship_summary,
            _relationship_compact,
        ),
        FactKind(
            "project_source_hits",
            "project source: lines at the pinned commit",
            _source_hits,
            _source_hits_compact,
            deduplicated=True,
        ),
        FactKind(
            "project_source_constant",
            "project source: a typed C++ constant assigned this ID at the pinned commit",
            _constant,
        ),
        FactKind(
            "project_empty_result",
            "finding about one table or search only",
            _empty,
            _empty_compact,
            statement_is_finding=True,
            report_statement=True,
        ),
        FactKind(
            "project_context_coverage",
            "coverage: what the enrichment did not read",
            _coverage_summary,
            _coverage_compact,
            statement_is_finding=True,
            report_statement=True,
        ),
        FactKind(
            "report_revision",
            "the commit the report was filed against, related to the commit "
            "the project source was read at; not a cause",
            _report_revision,
            statement_is_finding=True,
        ),
        FactKind(
            "project_rule_hit",
            "project data: rows a consistency rule of the profile flags (an engine "
            "load check with its source line, or a heuristic the engine accepts); a place to look, "
            "not a proven cause",
            _rule_hit,
            _rule_hit_compact,
            statement_is_finding=True,
        ),
        FactKind(
            "project_missing_reference",
            "project data: a reference the reference map expects to "
            "resolve names an entity with no row",
            _missing_reference,
            statement_is_finding=True,
        ),
        FactKind(
            "project_script_file_candidate",
            "project source: the file where a missing script of this "
            "entity would most likely live, with the sibling lines that suggest it",
            _script_file,
            statement_is_finding=True,
        ),
        FactKind(
            "project_change_since_report",
            "project history: a commit between the report's revision "
            "and the pinned commit that changes lines naming the report's entities; maybe already "
            "fixed",
            _change,
            statement_is_finding=True,
        ),
        FactKind(
            "project_fix_candidate",
            "project history: a commit that may have fixed the report (fixed_by: its message "
            "names the report), ranked, with subject, date, author, files, link and the reasons "
            "for it; maybe is a lead to check, not proof of a fix",
            _fix_candidate,
            _fix_candidate_compact,
            statement_is_finding=True,
            later=True,
        ),
        FactKind(
            "project_fix_search",
            "project history: what the search for a fixing commit read and its verdict "
            "(fixed_by, maybe or none)",
            _fix_search,
            statement_is_finding=True,
            later=True,
        ),
        FactKind(
            "client_record",
            "client data: what a spell, item, area, map or faction is by the server's DBC/DB2 "
            "files (its name; a spell's effects by the engine's enum names); what the data "
            "defines, not what happened at runtime",
            client.record_line,
            later=True,
        ),
        FactKind(
            "client_record_absent",
            "client data: IDs the client files and their override table do not have",
            client.absent_line,
            statement_is_finding=True,
            later=True,
        ),
        FactKind(
            "client_name_match",
            "client data: a spell or item carrying exactly a name the case gives without an ID",
            client.name_match_line,
            later=True,
        ),
        FactKind(
            t.LEAD_KIND,
            "lead: where to look first, ranked (rank 1 first); why says what makes it "
            "a lead and rests_on the facts it comes from; a lead is not a finding",
            _lead,
        ),
    )
}

__all__ = [
    "FACT_KINDS",
    "INDEX_SCHEMA",
    "SHORT_SHA",
    "FactKind",
    "cell",
    "coverage_group",
    "coverage_line",
    "coverage_subject",
    "coverage_target",
    "fact_kind",
    "labels",
    "reverse_lookup",
    "row_table",
]
