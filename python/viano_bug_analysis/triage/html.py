"""``DIR/index.html``: the triage index as one offline page, sortable and filterable.

Every text comes from reports, which are hostile input: each is escaped
(``html.escape`` with quotes) before it is placed. Links go only to the
report's tracker URL when it is ``http(s)`` and to files of the triage
folder by relative path. The one inline script sorts rows by a clicked
column and filters by text, status and "needs info" (a view can be linked:
``index.html#q=spider&status=failed&info=1&sort=4&dir=desc``); it reads the
table the page already holds and loads nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.2rem; color: #1b1f24; }
h1 { font-size: 1.5rem; margin: 0 0 .3rem; }
.meta { color: #57606a; }
.controls { margin: .8rem 0; display: flex; gap: .8rem; flex-wrap: wrap; align-items: center; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #d0d7de; padding: .3rem .45rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; cursor: pointer; user-select: none; white-space: nowrap; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
.tag { display: inline-block; padding: 0 .4rem; border-radius: .5rem; background: #eaeef2;
  font-size: .8rem; margin: 0 .15rem .15rem 0; }
.warn { background: #fff8c5; }
.bad { background: #ffebe9; }
.lead { font-size: .85rem; }
"""

_SCRIPT = """
(function () {
  var table = document.getElementById("backlog");
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function key(row, i) {
    return row.cells[i].getAttribute("data-sort") || row.cells[i].textContent;
  }
  for (var i = 0; i < heads.length; i++) {
    heads[i].addEventListener("click", (function (col) {
      return function () {
        var dir = heads[col].getAttribute("aria-sort") === "ascending" ? -1 : 1;
        for (var j = 0; j < heads.length; j++) heads[j].removeAttribute("aria-sort");
        heads[col].setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        var numeric = heads[col].getAttribute("data-type") === "number";
        rows.sort(function (a, b) {
          var x = key(a, col), y = key(b, col);
          if (numeric) { x = parseFloat(x) || 0; y = parseFloat(y) || 0; return (x - y) * dir; }
          return x.localeCompare(y) * dir;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      };
    })(i));
  }
  var text = document.getElementById("filter-text");
  var status = document.getElementById("filter-status");
  var info = document.getElementById("filter-info");
  function apply() {
    var needle = text.value.toLowerCase();
    var shown = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var ok = (!needle || row.textContent.toLowerCase().indexOf(needle) >= 0)
        && (!status.value || row.getAttribute("data-status") === status.value)
        && (!info.checked || row.getAttribute("data-needs-info") === "yes");
      row.hidden = !ok;
      if (ok) shown++;
    });
    document.getElementById("shown").textContent = String(shown);
  }
  text.addEventListener("input", apply);
  status.addEventListener("change", apply);
  info.addEventListener("change", apply);
  // A view can be linked: #q=spider&status=failed&info=1&sort=4&dir=desc
  var params = new URLSearchParams(location.hash.slice(1));
  if (params.get("q")) text.value = params.get("q");
  if (params.get("status")) status.value = params.get("status");
  if (params.get("info") === "1") info.checked = true;
  apply();
  var col = parseInt(params.get("sort"), 10);
  if (col >= 0 && col < heads.length) {
    heads[col].click();
    if (params.get("dir") === "desc") heads[col].click();
  }
})();
"""

_COLUMNS = (
    ("#", "number"),
    ("report", "text"),
    ("state", "text"),
    ("status", "text"),
    ("leads", "number"),
    ("first lead", "text"),
    ("maybe fixed", "text"),
    ("fixed?", "number"),
    ("verdict", "text"),
    ("tokens", "number"),
    ("duplicates", "text"),
    ("needs info", "text"),
)


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _link(href: str | None, text: str) -> str:
    if href is None:
        return _e(text)
    return f'<a href="{_e(href)}">{_e(text)}</a>'


def _tracker(url: Any) -> str | None:
    if isinstance(url, str) and url.startswith(("https://", "http://")):
        return url
    return None


def _repository(name: Any) -> str:
    # Which repository the number counts in: a list may hold issues of several.
    return f'<br><span class="meta">{_e(name)}</span>' if name else ""


def _fixed_cell(cell: Mapping[str, Any] | None) -> str:
    """Already fixed? Sorted fixed by, maybe, none, then builds that read no history."""
    if cell is None:
        return '<td data-sort="3"></td>'
    words = {"fixed_by": "fixed by", "maybe": "maybe", "none": "none"}[cell["verdict"]]
    commit = cell.get("commit")
    if not commit:
        return f'<td data-sort="{cell["sort"]}">{_e(words)}</td>'
    link = _link(_tracker(cell.get("link")), str(commit)[:12])
    why = "; ".join(cell.get("why") or ())
    return (
        f'<td data-sort="{cell["sort"]}" title="{_e(why)}">{_e(words)} {link}'
        f'<br><span class="lead">{_e(cell.get("subject"))}</span></td>'
    )


def _row(row: Mapping[str, Any]) -> str:
    number = row.get("number")
    title = row.get("title") or row["case"]
    report = _link(_tracker(row.get("url")), title)
    links = []
    if row.get("report"):
        links.append(_link(row["report"], "case report"))
    if row.get("package"):
        links.append(_link(row["package"], "package"))
    labels = "".join(f'<span class="tag">{_e(label)}</span>' for label in row.get("labels", ()))
    status = row["status"]
    if row.get("error"):
        error = row["error"]
        reason = (error.get("details") or {}).get("reason")
        why = f", {reason}" if isinstance(reason, str) else ""
        status += f" ({error['stage']}: {error['code']}{why})"
    fixed = row.get("maybe_fixed")
    verdict = row.get("verdict") or {}
    usage = row.get("usage") or {}
    tokens = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0) if usage else None
    cost = f" (cost {usage['cost']})" if "cost" in usage else ""
    duplicates = row.get("duplicates")
    needs = row.get("needs_info") or []
    css = "bad" if row["status"] == "failed" else "warn" if needs else ""
    cells = [
        f'<td data-sort="{_e(number if number is not None else "")}">{_e(number)}'
        f"{_repository(row.get('repository'))}</td>",
        f"<td>{report}<br><code>{_e(row['case'])}</code> {' · '.join(links)}<br>{labels}</td>",
        f"<td>{_e(row.get('state'))}</td>",
        f"<td>{_e(status)}</td>",
        f'<td data-sort="{row.get("leads", 0)}">{_e(row.get("leads", 0))}</td>',
        f'<td class="lead">{_e(row.get("first_lead"))}</td>',
        f"<td>{_e((str(fixed['commit'])[:12]) if fixed else '')}</td>",
        _fixed_cell(row.get("fixed")),
        f"<td>{_e(', '.join(f'{h}: {a}' for h, a in sorted(verdict.items())))}</td>",
        f'<td data-sort="{tokens or 0}">{_e(tokens)}{_e(cost)}</td>',
        f"<td>{_e(', '.join(duplicates['with']) if duplicates else '')}</td>",
        f"<td>{_e(', '.join(needs))}</td>",
    ]
    return (
        f'<tr class="{css}" data-status="{_e(row["status"])}" '
        f'data-needs-info="{"yes" if needs else "no"}">' + "".join(cells) + "</tr>"
    )


def render_index(document: Mapping[str, Any]) -> str:
    statuses = "".join(
        f'<option value="{_e(s)}">{_e(s)} ({n})</option>' for s, n in document["by_status"].items()
    )
    heads = "".join(f'<th data-type="{t}">{_e(name)}</th>' for name, t in _COLUMNS)
    rows = "\n".join(_row(row) for row in document["rows"])
    summary = ", ".join(f"{n} {s}" for s, n in document["by_status"].items())
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Triage: {document['reports']} reports</title><style>{_STYLE}</style></head>"
        f"<body><h1>Triage: {document['reports']} reports</h1>"
        f'<p class="meta">profile {_e(document.get("profile"))}; {_e(summary)}</p>'
        '<div class="controls"><label>filter <input id="filter-text" type="search"></label>'
        f'<label>status <select id="filter-status"><option value="">all</option>{statuses}'
        "</select></label>"
        '<label><input id="filter-info" type="checkbox"> needs info only</label>'
        f'<span><span id="shown">{document["reports"]}</span> shown</span></div>'
        f'<table id="backlog"><thead><tr>{heads}</tr></thead><tbody>\n{rows}\n</tbody></table>'
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


__all__ = ["render_index"]
