"""The case report as Markdown, for a ticket.

Stored texts (the report, rows, source lines, the model's words) are hostile
input here too: inline they are escaped (the punctuation that opens
emphasis, code, a link, a cell or a quote gets a backslash, ``<`` and ``&``
become entities, line breaks become spaces), and
blocks go into a code fence longer than any run of backticks inside them, so
nothing in a value can end the fence, open a link or inject HTML.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from viano_bug_analysis.facts.text import count
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.report.versions import enriched, not_investigated

# What can open emphasis, code, a link, a table cell, a heading or a quote inline
# (text is never at the start of a line, so list markers need no escape).
_SPECIAL = re.compile(r"([\\`*_\[\]#|~>])")
_BACKTICKS = re.compile(r"`+")
_LINE_BREAK = re.compile(r"\r\n|[\r\n]")


def render_markdown(report: Mapping[str, Any], package_href: str | None = None) -> str:
    """The Markdown text for a ``case-report`` document of any version; with ``package_href``
    (the package root relative to where the text is written) each stored
    answer and capture is a relative link."""
    out: list[str] = [
        f"# Case {_i(report['case_id'])}: {_i(report['report']['title'])}",
        "",
        f"Package {_code(report['package_id'])}, analysis revision "
        f"{report['analysis_revision']}, state **{_i(report['state']['state'])}**"
        + _verdict_line(report),
        "",
    ]
    if report["state"]["notice"]:
        out += [f"> **{_i(report['state']['notice'])}**", ""]
        research = (report["state"]["blocked"] or {}).get("research")
        if research:
            out += [f"> {_i(research['fix'])}", ""]
    # What was concluded, then where to look, then what the report is about.
    out += _verdict(report)
    out += _leads(report)
    out += _already_fixed(report)
    out += _entities(report)
    out += ["## The report", "", *_block(report["report"]["text"]), ""]
    out += ["## Hypotheses", ""]
    for h in report["hypotheses"]:
        out += _hypothesis(h, package_href)
    out += _sources_and_facts(report, package_href)
    out += [
        "## Tokens and budget",
        "",
        f"- prompt tokens: {report['usage']['prompt_tokens']}",
        f"- completion tokens: {report['usage']['completion_tokens']}",
        f"- model answers: {report['usage']['model_answers']} "
        f"({report['usage']['answers_without_usage']} without usage)",
        f"- budget units: {report['usage']['budget_units_spent']} of "
        f"{report['usage']['budget_units_limit']} spent (tokens plus the fixed cost of each "
        "tool call)",
        "",
    ]
    out += _tokens(report["tokens"])
    return "\n".join(out)


def _tokens(tokens: Mapping[str, Any]) -> list[str]:
    """Tokens per hypothesis and step, each call's repeated prompt prefix, the cost."""
    if not tokens["calls"]:
        return []
    priced = tokens["prices"] is not None
    shares: dict[tuple[Any, Any], list[str]] = {}
    for call in tokens["calls"]:
        if call["prefix_share"] is not None:
            key = (call["hypothesis"] or "interpretation", call["step"])
            shares.setdefault(key, []).append(f"{call['prefix_share']:.0%}")
    header = "| Hypothesis | Step | Prompt | Completion | Cached prompt | Answers "
    header += "| Prefix repeated |"
    out = ["### Tokens per hypothesis and step", "", header + (" Cost |" if priced else "")]
    out.append("|---" * (8 if priced else 7) + "|")

    def row(owner: str, step: Any, sums: Mapping[str, Any]) -> str:
        cached = sums["cached_prompt_tokens"]
        cells = [
            owner,
            "" if step is None else str(step),
            str(sums["prompt_tokens"]),
            str(sums["completion_tokens"]),
            "not reported" if cached is None else str(cached),
            str(sums["answers"]),
            ", ".join(shares.get((owner, step), [])),
        ]
        if priced:
            cells.append("" if sums.get("cost") is None else f"{sums['cost']:.6f}")
        return "| " + " | ".join(cells) + " |"

    for group in tokens["by_hypothesis"]:
        owner = group["hypothesis"]
        out.append(row(owner, None, group))
        out += [row(owner, s["step"], s) for s in tokens["by_step"] if s["hypothesis"] == owner]
    out.append(row("all", None, tokens["total"]))
    out.append("")
    prefix = tokens["prompt_prefix"]
    if prefix["share"] is not None:
        out.append(
            f"{prefix['share']:.0%} of {prefix['prompt_bytes']} prompt bytes repeat the previous "
            "call's prompt prefix (what server-side prompt caching can reuse)."
        )
    if priced:
        out.append(
            f"Cost at {tokens['prices']['prompt']:g} per million prompt and "
            f"{tokens['prices']['completion']:g} per million completion tokens."
        )
    out.append("")
    return out


def _verdict(report: Mapping[str, Any]) -> list[str]:
    if not_investigated(report):
        return ["## Verdict", "", "Not investigated yet.", ""]
    out = ["## Verdict", "", "| Hypothesis | Result | Confidence | Summary |", "|---|---|---|---|"]
    for h in report["hypotheses"]:
        out.append(
            f"| {h['id']} {_i(h['statement'])} | {h['status']} | {_confidence(h['confidence'])} "
            f"| {_i(h['summary'] or '')} |"
        )
    return [*out, ""]


def _entities(report: Mapping[str, Any]) -> list[str]:
    """The entities the report names: one row each, with what exists of them."""
    entities = report.get("entities") or []
    if not entities:
        return []
    out = [
        "## Entities the report names",
        "",
        "| Type | ID | Name | What exists |",
        "|---|---|---|---|",
    ]
    for e in entities:
        name = _i(e["name"]) if e["name"] is not None else "*no name found*"
        exists = "; ".join(_i(x) for x in e["exists"]) or "nothing found"
        out.append(f"| {_i(e['entity_type'])} | {_i(e['entity_id'])} | {name} | {exists} |")
    return [*out, ""]


def _fact_tables(report: Mapping[str, Any], package_href: str | None) -> list[str]:
    """The facts as tables (one per kind, rows one per database table), each row with
    where it was read."""
    tables = report["fact_tables"]
    if not tables:
        return []
    out = ["## Facts", ""]
    for table in tables:
        columns = ["Fact", *(_i(c) for c in table["columns"]), "Read from"]
        out += [
            f"### {_i(table['title'])} ({len(table['rows'])})",
            "",
            "| " + " | ".join(columns) + " |",
            "|" + "---|" * len(columns),
        ]
        for row in table["rows"]:
            cells = [_i(row["fact_id"]), *(_i(c) for c in row["cells"])]
            cells.append(_read_from(row["source"], package_href))
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return out


def _read_from(source: Mapping[str, Any] | None, package_href: str | None) -> str:
    if source is None:
        return "the case inputs"
    if source["sha256"] is None:
        return _i(source["origin"] or "")
    pointer = f" {_code(source['pointer'])}" if source["pointer"] else ""
    link = _file_link("capture", source["capture_path"], package_href).removeprefix(", ")
    return f"{_code(source['sha256'])}{pointer}" + (f" {link}" if link else "")


def _leads(report: Mapping[str, Any]) -> list[str]:
    """Where to look first, before the hypotheses and the facts the leads rest on."""
    leads = report.get("leads") or []
    if not enriched(report):
        return []
    if not leads:
        return ["## Leads", "", "None: no fact of this revision points at a place to look.", ""]
    left_out = report.get("leads_left_out") or 0
    more = f" ({left_out} more left out by max\\_leads)" if left_out else ""
    out = ["## Leads", "", f"Where to look first, most telling first{more}:", ""]
    for lead in leads:
        # A bullet with the rank, not "1." (Markdown would renumber a list it continues).
        out.append(
            f"- **{lead['rank']}.** {_i(lead['lead'])} at {_code(lead['where'])}: "
            f"{_i(lead['why'])} (rests on {', '.join(_i(f) for f in lead['rests_on'])}; "
            f"the lead is {_i(lead['fact_id'])})"
        )
    out.append("")
    return out


def _already_fixed(report: Mapping[str, Any]) -> list[str]:
    """Already fixed? The verdict, then each candidate with its subject and reasons."""
    fixed = report.get("already_fixed")
    if not fixed:
        return []
    out = ["## Already fixed?", "", _i(fixed["statement"]), ""]
    for c in fixed["candidates"]:
        link = f" ({c['link']})" if c.get("link") else ""
        why = "; ".join(r["detail"] for r in c["reasons"])
        out.append(
            f"- **{c['rank']}.** {_i(c['verdict'])}: {_code(c['commit'][:12])} "
            f"{_i(c['subject'])} ({_i(c['date'][:10])}, {_i(c['author'])}, "
            f"{count(int(c['files_changed']), 'file')}){link}: {_i(why)} "
            f"(the candidate is {_i(c['fact_id'])})"
        )
    out.append("")
    return out


def _sources_and_facts(report: Mapping[str, Any], package_href: str | None) -> list[str]:
    out: list[str] = []
    if report["sources"]:
        out += ["## Sources", ""]
        for s in report["sources"]:
            out.append(
                f"- {_code(s['source_ref'])} ({_i(s['role'])}): {_i(s['attachment'])} / "
                f"{_i(s['member'])}, sha256 {_code(s['sha256'])}"
            )
        out.append("")
    if "fact_tables" in report:
        return out + _fact_tables(report, package_href)
    if report["facts"]:  # a document of version 1 or 2: one JSON excerpt per fact
        out += ["## Facts", ""]
        for fact in report["facts"]:
            origin = "the case inputs"
            if fact["provenance"]:
                origin = ", ".join(
                    f"{_i(k)} {_code(v)}"
                    for k, v in sorted(fact["provenance"].items())
                    if k != "capture_path"
                )
                origin += _file_link(
                    "capture", fact["provenance"].get("capture_path"), package_href
                )
            cut = " …" if fact["truncated"] else ""
            out.append(
                f"- **{_i(fact['fact_id'])}** {_i(fact['label'])}: "
                f"{_code(fact['excerpt'])}{cut} — {origin}"
            )
        out.append("")
    return out


def _hypothesis(h: Mapping[str, Any], package_href: str | None) -> list[str]:
    out = [
        f"### {h['id']}: {_i(h['statement'])}",
        "",
        f"**{h['status']}**, confidence {_confidence(h['confidence'])}"
        + (f", ended by {_i(h['reason'])}" if h["reason"] else ""),
        "",
    ]
    if h["summary"]:
        out += [f"Conclusion: {_i(h['summary'])}", ""]
    if h["steps"]:
        out.append("Steps:")
        out.append("")
        for s in h["steps"]:
            # A bullet, not "3." (Markdown renumbers ordered lists): attempts share a step.
            head = f"- step {s['step']}, attempt {s['attempt']}: "
            if s["status"] == "rejected":
                out.append(head + f"answer rejected: {_i(s['rejection'] or '')}")
            elif s["status"] == "pending":
                out.append(head + "waiting for the model's answer")
            elif s["conclusion"]:
                out.append(head + "conclusion")
            else:
                out.append(head + f"query {_code(s['query']['operation'])}")
                out += _block(s["query"]["arguments"], indent="  ")
            if s.get("rationale"):
                out.append(f"  why: {_i(s['rationale'])}")
            if s["reasoning"]:
                out.append(f"  model: {_i(s['reasoning'])}")
            if s["result"]:
                out.append(f"  result {s['result']['evidence_id']}:")
                out += _block(s["result"]["excerpt"], indent="  ")
            if s["dispatch_rejected"]:
                out.append(f"  the tool refused the request: {_i(s['dispatch_rejected'])}")
        out.append("")
    if h["citations"]:
        out += ["Cited evidence:", ""]
        for c in h["citations"]:
            out.append(
                f"- [{c['number']}] {c['evidence_id']} {_code(c['reference'])} "
                f"({c['role']}), **{c['verification']}**, stored sha256 "
                f"`{c['value_sha256'] or 'none'}`, sha256 now `{c['computed_sha256'] or 'none'}`"
            )
            if c["provenance"]:
                out.append(
                    "  origin: "
                    + ", ".join(f"{_i(k)} {_code(v)}" for k, v in sorted(c["provenance"].items()))
                )
            stored = c["evidence"].get("capture_path") or c["evidence"].get("result_path")
            if (link := _file_link("stored answer", stored, package_href)) != "":
                out.append("  " + link.removeprefix(", "))
            out += ["", *_block(c["excerpt"], indent="  "), ""]
    return out


def _file_link(label: str, path: Any, package_href: str | None) -> str:
    """``, [label](relative path)`` of a stored package file, or nothing."""
    if package_href is None or not isinstance(path, str):
        return ""
    href = posixpath.join(package_href, path) if package_href else path
    return f", [{label}]({quote(href)})"


def _verdict_line(report: Mapping[str, Any]) -> str:
    verdict = report["verdict"]
    if verdict is None:
        return ", no verdict issued."
    return (
        f", verdict version {verdict['version']}{_of_revision(verdict)} "
        f"issued {_i(verdict['issued_at'])}."
    )


def _of_revision(verdict: Mapping[str, Any]) -> str:
    revision = verdict.get("analysis_revision")
    return "" if revision is None else f" of revision {int(revision)}"


def _confidence(value: Any) -> str:
    return "–" if value is None else f"{float(value):.2f}"


def _i(value: Any) -> str:
    """Inline text, escaped."""
    text = value if isinstance(value, str) else str(value)
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    text = " ".join(text.split())
    return _SPECIAL.sub(r"\\\1", text)


def _code(value: Any) -> str:
    """A whole code span showing the text as stored.

    Excerpts are evidence with a SHA-256 beside them, so spaces, tabs and
    backticks stay exactly (a line of aligned C++ or an SQL identifier in
    backticks); only line breaks, which no inline span can hold, become
    spaces. The delimiter is one backtick longer than any run inside, and
    one space of padding each side keeps a leading or trailing backtick or a
    space pair that CommonMark would otherwise eat. A value that is not text
    is shown as JSON, never as a Python repr.
    """
    text = value if isinstance(value, str) else canonical_bytes(value).decode()
    text = _LINE_BREAK.sub(" ", text)
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * (longest + 1)
    edges = text[:1] + text[-1:]
    if "`" in edges or (text.startswith(" ") and text.endswith(" ") and text.strip(" ")):
        text = f" {text} "
    return fence + text + fence


def _block(text: str, *, indent: str = "") -> list[str]:
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [indent + fence + "text", *(indent + line for line in text.splitlines()), indent + fence]


__all__ = ["render_markdown"]
