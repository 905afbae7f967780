"""The case report as one self-contained HTML page.

No script, no external resource (no font, image, stylesheet or link off the
page): it reads the same opened from disk, offline, in any browser. Every
text of the report is escaped (``html.escape`` with quotes) before it is
placed, including the report text, rows and source lines, which are hostile
input; attribute values are only the report's own anchors. Each citation is a
link to ``#<anchor>``, the element that shows the cited excerpt with its
hashes and origin; ``:target`` highlights it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from html import escape
from typing import Any
from urllib.parse import quote

from viano_bug_analysis.facts.registry import fact_kind
from viano_bug_analysis.facts.text import count
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.report.versions import enriched, not_investigated

_STYLE = """
:root { color-scheme: light; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  margin: 0 auto; max-width: 60rem; padding: 1.5rem; color: #1b1f24; background: #fff; }
h1 { font-size: 1.7rem; margin: 0 0 .25rem; }
h2 { font-size: 1.3rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; margin-top: 2rem; }
h3 { font-size: 1.1rem; margin: 1.2rem 0 .4rem; }
.meta { color: #57606a; font-size: .9rem; }
.notice { border: 2px solid #bf8700; background: #fff8c5; padding: .75rem 1rem;
  font-weight: 600; margin: 1rem 0; }
.notice.blocked { border-color: #cf222e; background: #ffebe9; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: .5rem .75rem; overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; font: 13px/1.45 ui-monospace, SFMono-Regular,
  Menlo, Consolas, monospace; margin: .3rem 0; }
code, .hash { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: .85rem; white-space: pre-wrap; }
.hash { word-break: break-all; }
.status { display: inline-block; padding: 0 .45rem; border-radius: .6rem; font-size: .85rem;
  font-weight: 600; border: 1px solid currentColor; }
.supported, .verified { color: #116329; }
.refuted, .mismatch, .unresolved, .blocked-status { color: #a40e26; }
.inconclusive, .unverified, .open { color: #7d4e00; }
.hypothesis { border: 1px solid #d0d7de; border-radius: .4rem; padding: .25rem 1rem 1rem;
  margin: 1rem 0; }
ol.steps > li { margin-bottom: .8rem; }
.excerpt { border-left: 4px solid #0969da; padding: .25rem .75rem; margin: .8rem 0; }
.excerpt:target { background: #ddf4ff; border-left-color: #bf3989; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .8rem; margin: .3rem 0; }
dt { font-weight: 600; color: #57606a; }
dd { margin: 0; }
a { color: #0969da; }
td code, .leads td { overflow-wrap: anywhere; }
.wide { overflow-x: auto; }
.wide table { width: auto; min-width: 100%; font-size: .85rem; }
.wide td.src, .wide td.src .hash { white-space: nowrap; word-break: normal; }
"""


class _Link:
    """A stored file of the package, linked relative to where the page is."""

    def __init__(self, path: str, href: str) -> None:
        self.path, self.href = path, href


def _file(path: Any, package_href: str | None) -> Any:
    """``path`` (package-relative) as a link when the page knows where the package is."""
    if package_href is None or not isinstance(path, str):
        return path
    return _Link(path, posixpath.join(package_href, path) if package_href else path)


def render_html(report: Mapping[str, Any], package_href: str | None = None) -> str:
    """The page for a ``case-report`` document of any version (1 and 2: facts as
    JSON). ``package_href`` is the package root relative to where the page is written
    (``vba report -o``): each stored answer and capture is then a relative link, which
    works offline from disk."""
    parts: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # The page may load nothing at all: a report opened from disk stays offline.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">",
        f"<title>Case report {_t(report['case_id'])}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Case {_t(report['case_id'])}: {_t(report['report']['title'])}</h1>",
        f'<p class="meta">package <code>{_t(report["package_id"])}</code> · analysis revision '
        f"{_t(report['analysis_revision'])} · state <strong>{_t(report['state']['state'])}"
        f"</strong>{_verdict_meta(report)}</p>",
    ]
    notice = report["state"]["notice"]
    if notice:
        kind = "notice blocked" if report["state"]["blocked"] else "notice"
        parts.append(f'<p class="{kind}" id="state-notice">{_t(notice)}</p>')
        research = (report["state"]["blocked"] or {}).get("research")
        if research:
            parts.append(f'<p class="notice blocked" id="research-fix">{_t(research["fix"])}</p>')
    # What was concluded, then where to look, then what the report is about.
    parts += _verdict_table(report)
    parts += _leads(report)
    parts += _already_fixed(report)
    parts += _entities(report)
    parts += ["<h2>The report</h2>", f"<pre>{_t(report['report']['text'])}</pre>"]
    parts.append("<h2>Hypotheses</h2>")
    for hypothesis in report["hypotheses"]:
        parts += _hypothesis(hypothesis, package_href)
    # What the case was built from, after what was concluded from it.
    parts += _sources(report)
    if "fact_tables" in report:
        parts += _fact_tables(report, package_href)
    else:  # a document of version 1 or 2: one JSON excerpt per fact
        parts += _facts(report, package_href)
    parts += _usage(report["usage"])
    parts += _tokens(report["tokens"])
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _t(value: Any) -> str:
    """Any value as escaped text."""
    return escape(value if isinstance(value, str) else str(value), quote=True)


def _json(value: Any) -> str:
    return _t(canonical_bytes(value).decode("utf-8"))


def _status(text: str, css: str | None = None) -> str:
    cls = css or text
    return f'<span class="status {escape(cls, quote=True)}">{_t(text)}</span>'


def _verdict_meta(report: Mapping[str, Any]) -> str:
    verdict = report["verdict"]
    if verdict is None:
        return " · no verdict issued"
    revision = verdict.get("analysis_revision")
    of = "" if revision is None else f" of revision {_t(revision)}"
    return f" · verdict version {_t(verdict['version'])}{of} issued {_t(verdict['issued_at'])}"


def _confidence(value: Any) -> str:
    return "–" if value is None else f"{float(value):.2f}"


def _verdict_table(report: Mapping[str, Any]) -> list[str]:
    if not_investigated(report):
        return ['<h2 id="verdict">Verdict</h2>', "<p>Not investigated yet.</p>"]
    rows = [
        '<h2 id="verdict">Verdict</h2>',
        "<table><tr><th>Hypothesis</th><th>Statement</th><th>Result</th>"
        "<th>Confidence</th><th>Summary</th></tr>",
    ]
    for h in report["hypotheses"]:
        css = "blocked-status" if h["status"] == "blocked" else h["status"]
        rows.append(
            f'<tr><td><a href="#hypothesis-{_t(h["id"])}">{_t(h["id"])}</a></td>'
            f"<td>{_t(h['statement'])}</td><td>{_status(h['status'], css)}</td>"
            f"<td>{_confidence(h['confidence'])}</td><td>{_t(h['summary'] or '')}</td></tr>"
        )
    rows.append("</table>")
    return rows


def _dl(items: Iterable[tuple[str, Any]]) -> str:
    cells = "".join(
        f'<dt>{_t(k)}</dt><dd class="{"hash" if _is_hash(v) else ""}">{_value(v)}</dd>'
        for k, v in items
    )
    return f"<dl>{cells}</dl>"


def _is_hash(value: Any) -> bool:
    return isinstance(value, str) and len(value) >= 40


def _value(value: Any) -> str:
    if isinstance(value, _Link):
        return f'<a href="{_t(quote(value.href))}">{_t(value.path)}</a>'
    return _t(value) if isinstance(value, str | int | float) else _json(value)


def _sources(report: Mapping[str, Any]) -> list[str]:
    parts = ["<h2>Sources</h2>"]
    if not report["sources"]:
        parts.append("<p>No sources in the case.</p>")
    else:
        parts.append(
            "<table><tr><th>Source</th><th>Role</th><th>Attachment / member</th>"
            "<th>SHA-256</th></tr>"
        )
        for s in report["sources"]:
            parts.append(
                f"<tr><td><code>{_t(s['source_ref'])}</code></td><td>{_t(s['role'])}</td>"
                f"<td>{_t(s['attachment'])} / {_t(s['member'])}</td>"
                f'<td class="hash">{_t(s["sha256"])}</td></tr>'
            )
        parts.append("</table>")
    return parts


def _leads(report: Mapping[str, Any]) -> list[str]:
    parts = ['<h2 id="leads">Leads</h2>']
    leads = report.get("leads") or []
    if not enriched(report):
        parts.append("<p>No leads (the case was built without project research).</p>")
        return parts
    if not leads:
        parts.append("<p>None: no fact of this revision points at a place to look.</p>")
        return parts
    left_out = report.get("leads_left_out") or 0
    more = f" ({_t(left_out)} more left out by max_leads)" if left_out else ""
    parts.append(
        f"<p>Where to look first, most telling first{more}.</p>"
        '<table class="leads"><tr><th>Rank</th><th>Lead</th><th>Where</th><th>Why</th>'
        "<th>Rests on</th></tr>"
    )
    for lead in leads:
        rests = ", ".join(f'<a href="#fact-{_t(f)}">{_t(f)}</a>' for f in lead["rests_on"])
        parts.append(
            f'<tr id="lead-{_t(lead["rank"])}"><td>{_t(lead["rank"])}</td>'
            f"<td>{_t(lead['lead'])}</td><td><code>{_t(lead['where'])}</code></td>"
            f"<td>{_t(lead['why'])}</td>"
            f'<td>{rests}<br>the lead is <a href="#fact-{_t(lead["fact_id"])}">'
            f"{_t(lead['fact_id'])}</a></td>"
            "</tr>"
        )
    parts.append("</table>")
    return parts


def _already_fixed(report: Mapping[str, Any]) -> list[str]:
    """Already fixed? The verdict, then each candidate with its subject, link and reasons."""
    fixed = report.get("already_fixed")
    if not fixed:
        return []
    parts = ['<h2 id="already-fixed">Already fixed?</h2>', f"<p>{_t(fixed['statement'])}</p>"]
    if not fixed["candidates"]:
        return parts
    parts.append(
        "<table><tr><th>Rank</th><th>Verdict</th><th>Commit</th><th>Subject</th>"
        "<th>Date, author, files</th><th>Why</th></tr>"
    )
    for c in fixed["candidates"]:
        link = c.get("link")
        short = _t(c["commit"][:12])
        commit = f'<a href="{_t(link)}">{short}</a>' if _web(link) else short
        why = "<br>".join(_t(r["detail"]) for r in c["reasons"])
        parts.append(
            f'<tr id="fix-{_t(c["fact_id"])}"><td>{_t(c["rank"])}</td><td>{_t(c["verdict"])}</td>'
            f"<td><code>{commit}</code></td><td>{_t(c['subject'])}</td>"
            f"<td>{_t(c['date'][:10])}, {_t(c['author'])}, "
            f"{_t(count(int(c['files_changed']), 'file'))}</td>"
            f"<td>{why}</td></tr>"
        )
    parts.append("</table>")
    return parts


def _web(link: Any) -> bool:
    return isinstance(link, str) and link.startswith(("https://", "http://"))


def _entities(report: Mapping[str, Any]) -> list[str]:
    """The entities the report names: one row each, with what exists of them."""
    entities = report.get("entities") or []
    if not entities:
        return []
    parts = [
        '<h2 id="entities">Entities the report names</h2>',
        "<table><tr><th>Type</th><th>ID</th><th>Name</th><th>What exists</th></tr>",
    ]
    for e in entities:
        name = _t(e["name"]) if e["name"] is not None else "<em>no name found</em>"
        exists = "; ".join(_t(x) for x in e["exists"]) or "nothing found"
        parts.append(
            f"<tr><td>{_t(e['entity_type'])}</td><td>{_t(e['entity_id'])}</td>"
            f"<td>{name}</td><td>{exists}</td></tr>"
        )
    parts.append("</table>")
    return parts


def _fact_tables(report: Mapping[str, Any], package_href: str | None) -> list[str]:
    """The facts as tables (one per kind, rows one per database table), each row with
    where it was read: the capture (a link), its SHA-256's first digits, the pointer."""
    parts = ['<h2 id="facts">Facts</h2>']
    tables = report["fact_tables"]
    if not tables:
        parts.append("<p>No enrichment facts (the case was built without project research).</p>")
        return parts
    count = len({row["fact_id"] for table in tables for row in table["rows"]})
    parts.append(
        f"<p>{count} facts from the enrichment of the case, grouped by kind; each row says "
        "where it was read (the capture, its SHA-256, the JSON Pointer inside it).</p>"
    )
    for table in tables:
        head = "".join(f"<th>{_t(c)}</th>" for c in table["columns"])
        parts.append(
            f"<h3>{_t(table['title'])} ({len(table['rows'])})</h3>"
            # A table of many columns scrolls in its box, not the whole page.
            f'<div class="wide"><table><tr><th>Fact</th>{head}<th>Read from</th></tr>'
        )
        shown: set[str] = set()
        for row in table["rows"]:
            fact_id = row["fact_id"]
            # The first row of a fact is its anchor (a lead's "rests on" links to it).
            anchor = f' id="fact-{_t(fact_id)}"' if fact_id not in shown else ""
            shown.add(fact_id)
            cells = "".join(f"<td>{_t(c)}</td>" for c in row["cells"])
            parts.append(
                f"<tr{anchor}><td>{_t(fact_id)}</td>{cells}"
                f'<td class="src">{_read_from(row["source"], package_href)}</td></tr>'
            )
        parts.append("</table></div>")
    return parts


def _read_from(source: Mapping[str, Any] | None, package_href: str | None) -> str:
    if source is None:
        return "the case inputs"
    if source["sha256"] is None:
        return _t(source["origin"] or "")
    sha = _t(source["sha256"])
    path = source["capture_path"]
    if package_href is not None and isinstance(path, str):
        link = _file(path, package_href)
        sha = f'<a href="{_t(quote(link.href))}">{sha}</a>'
    pointer = f" <code>{_t(source['pointer'])}</code>" if source["pointer"] else ""
    return f'<span class="hash">{sha}</span>{pointer}'


# Kinds whose statement is the finding itself; the others' statements repeat their label.
def _facts(report: Mapping[str, Any], package_href: str | None) -> list[str]:
    parts = ["<h2>Facts</h2>"]
    if not report["facts"]:
        parts.append("<p>No enrichment facts (the case was built without project research).</p>")
        return parts
    parts.append(
        f"<p>{len(report['facts'])} facts from the enrichment of the case, each with the "
        "capture it was read from and the JSON Pointer inside it.</p>"
        "<table><tr><th>Fact</th><th>Kind</th><th>Value</th><th>Origin</th></tr>"
    )
    for fact in report["facts"]:
        statement = ""
        if fact["statement"] and fact_kind(fact["kind"]).report_statement:
            statement = f"{_t(fact['statement'])}<br>"
        cut = " …" if fact["truncated"] else ""
        parts.append(
            f'<tr id="fact-{_t(fact["fact_id"])}"><td>{_t(fact["fact_id"])}</td>'
            f"<td>{_t(fact['label'])}</td>"
            f'<td>{statement}<code class="hash">{_t(fact["excerpt"])}{cut}</code></td>'
            f"<td>{_origin(fact['provenance'], package_href)}</td></tr>"
        )
    parts.append("</table>")
    return parts


def _origin(provenance: Mapping[str, Any] | None, package_href: str | None) -> str:
    if not provenance:
        return "the case inputs"
    shown: dict[str, Any] = {k: v for k, v in sorted(provenance.items()) if k != "capture_path"}
    if package_href is not None and isinstance(provenance.get("capture_path"), str):
        shown["capture"] = _file(provenance["capture_path"], package_href)
    return "<br>".join(f'{_t(k)} <span class="hash">{_value(v)}</span>' for k, v in shown.items())


def _hypothesis(h: Mapping[str, Any], package_href: str | None) -> list[str]:
    css = "blocked-status" if h["status"] == "blocked" else h["status"]
    parts = [
        f'<section class="hypothesis" id="hypothesis-{_t(h["id"])}">',
        f"<h3>{_t(h['id'])}: {_t(h['statement'])}</h3>",
        f"<p>{_status(h['status'], css)} confidence {_confidence(h['confidence'])}"
        + (f" · ended by {_t(h['reason'])}" if h["reason"] else "")
        + "</p>",
    ]
    if h["summary"]:
        parts.append(f"<p><strong>Conclusion:</strong> {_t(h['summary'])}</p>")
    if h["citations"]:
        parts.append("<p><strong>Cited evidence</strong> (each excerpt below):</p><ul>")
        for c in h["citations"]:
            parts.append(
                f'<li><a href="#{_t(c["anchor"])}">[{_t(c["number"])}] {_t(c["evidence_id"])} '
                f"<code>{_t(c['reference'])}</code></a> {_t(c['role'])} "
                f"{_status(c['verification'])}</li>"
            )
        parts.append("</ul>")
        parts += _excerpts(h, package_href)
    elif h["reason"]:
        parts.append("<p>No evidence cited.</p>")
    parts.append("<p><strong>Steps</strong></p>")
    if not h["steps"]:
        parts.append("<p>No step recorded yet.</p>")
    parts.append('<ol class="steps">')
    for s in h["steps"]:
        parts.append(f"<li><p>step {_t(s['step'])}, attempt {_t(s['attempt'])}: ")
        if s["status"] == "rejected":
            parts.append(f"answer rejected: {_t(s['rejection'] or '')}</p>")
        elif s["status"] == "pending":
            parts.append("waiting for the model's answer</p>")
        elif s["conclusion"]:
            parts.append("conclusion</p>")
        else:
            parts.append(f"query <code>{_t(s['query']['operation'])}</code></p>")
            parts.append(f"<pre>{_t(s['query']['arguments'])}</pre>")
            if s.get("rationale"):
                parts.append(f"<p>why: {_t(s['rationale'])}</p>")
        if s["assessment"] is not None:
            parts.append(
                f"<p>assessment so far: {_t(s['assessment'])}, confidence "
                f"{_confidence(s['confidence'])}</p>"
            )
        if s["reasoning"]:
            parts.append(f"<p>model: {_t(s['reasoning'])}</p>")
        if s["result"]:
            cut = " (excerpt)" if s["result"]["truncated"] else ""
            parts.append(
                f"<p>result {_t(s['result']['evidence_id'])}{cut}:</p>"
                f"<pre>{_t(s['result']['excerpt'])}</pre>"
            )
        if s["dispatch_rejected"]:
            parts.append(f"<p>the tool refused the request: {_t(s['dispatch_rejected'])}</p>")
        parts.append("</li>")
    parts += ["</ol>", "</section>"]
    return parts


def _excerpts(h: Mapping[str, Any], package_href: str | None) -> list[str]:
    """The cited excerpts of one hypothesis, each the target of its citation link."""
    parts = []
    for c in h["citations"]:
        cut = " …(excerpt)" if c["truncated"] else ""
        parts.append(
            f'<div class="excerpt" id="{_t(c["anchor"])}">'
            f"<p><strong>[{_t(c['number'])}] {_t(c['evidence_id'])} "
            f"<code>{_t(c['reference'])}</code></strong> {_status(c['verification'])}</p>"
            f'<pre class="cited-value">{_t(c["excerpt"])}{cut}</pre>'
        )
        items: list[tuple[str, Any]] = [
            ("role", c["role"]),
            ("stored SHA-256", c["value_sha256"] or "none (not verified at the conclusion)"),
            ("SHA-256 now", c["computed_sha256"] or "the reference does not resolve"),
        ]
        items += [
            (f"evidence {k}", _file(v, package_href) if k.endswith("_path") else v)
            for k, v in sorted(c["evidence"].items())
        ]
        if c["provenance"]:
            # What the evidence record already showed is not repeated.
            items += [
                (f"origin {k}", v)
                for k, v in sorted(c["provenance"].items())
                if c["evidence"].get(k) != v
            ]
        parts.append(_dl(items))
        parts.append("</div>")
    return parts


def _usage(usage: Mapping[str, Any]) -> list[str]:
    return [
        "<h2>Tokens and budget</h2>",
        "<table><tr><th>prompt tokens</th><th>completion tokens</th><th>total tokens</th>"
        "<th>model answers</th><th>budget units spent</th><th>budget units granted</th></tr>",
        f"<tr><td>{_t(usage['prompt_tokens'])}</td><td>{_t(usage['completion_tokens'])}</td>"
        f"<td>{_t(usage['total_tokens'])}</td><td>{_t(usage['model_answers'])}"
        + (
            f" ({_t(usage['answers_without_usage'])} without usage)"
            if usage["answers_without_usage"]
            else ""
        )
        + f"</td><td>{_t(usage['budget_units_spent'])}</td>"
        f"<td>{_t(usage['budget_units_limit'])}</td></tr></table>",
        '<p class="meta">Budget units are tokens plus the fixed cost of each tool call.</p>',
    ]


def _tokens(tokens: Mapping[str, Any]) -> list[str]:
    """Tokens per hypothesis and step, each call's repeated prompt prefix, the cost."""
    if not tokens["calls"]:
        return []
    priced = tokens["prices"] is not None
    head = "<tr><th>hypothesis</th><th>step</th><th>prompt</th><th>completion</th>"
    head += "<th>cached prompt</th><th>answers</th><th>prompt prefix repeated</th>"
    head += "<th>cost</th></tr>" if priced else "</tr>"
    shares: dict[tuple[Any, Any], list[str]] = {}
    for call in tokens["calls"]:
        if call["prefix_share"] is not None:
            key = (call["hypothesis"] or "interpretation", call["step"])
            shares.setdefault(key, []).append(f"{call['prefix_share']:.0%}")

    def row(owner: str, step: Any, sums: Mapping[str, Any], *, total: bool = False) -> str:
        cached = sums["cached_prompt_tokens"]
        cells = [
            owner,
            "" if step is None else str(step),
            str(sums["prompt_tokens"]),
            str(sums["completion_tokens"]),
            "not reported" if cached is None else str(cached),
            str(sums["answers"]),
            ", ".join(shares.get((owner, step), [])) if not total else "",
        ]
        if priced:
            cells.append("" if sums.get("cost") is None else f"{sums['cost']:.6f}")
        tag = "th" if total else "td"
        return "<tr>" + "".join(f"<{tag}>{_t(c)}</{tag}>" for c in cells) + "</tr>"

    rows = []
    for group in tokens["by_hypothesis"]:
        owner = group["hypothesis"]
        rows.append(row(owner, None, group))
        rows += [row(owner, s["step"], s) for s in tokens["by_step"] if s["hypothesis"] == owner]
    rows.append(row("all", None, tokens["total"], total=True))
    parts = [
        "<h3>Tokens per hypothesis and step</h3>",
        "<table>" + head + "".join(rows) + "</table>",
    ]
    prefix = tokens["prompt_prefix"]
    notes = []
    if prefix["share"] is not None:
        notes.append(
            f"{prefix['share']:.0%} of {prefix['prompt_bytes']} prompt bytes repeat the "
            "previous call's prompt prefix (what server-side prompt caching can reuse)."
        )
    if priced:
        notes.append(
            f"Cost at {tokens['prices']['prompt']:g} per million prompt and "
            f"{tokens['prices']['completion']:g} per million completion tokens."
        )
    parts += [f'<p class="meta">{_t(note)}</p>' for note in notes]
    return parts


__all__ = ["render_html"]
