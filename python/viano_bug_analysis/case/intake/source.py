"""Reading a report file strictly: its bytes, whether they are text, and which form they take.

A report is read whole (at most ``MAX_FILE_BYTES``), must be UTF-8 without
NUL bytes, and is either JSON (a tracker's issue object or a list of them)
or Markdown / plain text. The file name decides when it says: ``.json`` is
JSON, ``.md``, ``.markdown`` and ``.txt`` are text (an issue title such as
``[Quest] ...`` starts with a bracket). Any other name, and standard input,
is JSON when its first non-blank character is ``{`` or ``[``. JSON that does
not parse is refused, never read as text.
"""

from __future__ import annotations

import codecs
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viano_bug_analysis import jsonio
from viano_bug_analysis.errors import ReportImportError
from viano_bug_analysis.files import read_regular_file

MAX_FILE_BYTES = 16 * 1024 * 1024
"""The largest report file read (a ``gh issue list`` of 1000 issues fits)."""

JSON_SUFFIXES = frozenset({".json"})
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt"})
STDIN = "-"
# Files that hold data, not a report; read as text each would become one case.
OTHER_SUFFIXES = {
    ".csv": "CSV",
    ".tsv": "TSV",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".xml": "XML",
    ".html": "HTML",
    ".htm": "HTML",
    ".xlsx": "a spreadsheet",
    ".ods": "a spreadsheet",
}
# A first line of comma-separated bare names, one of them an issue's column.
_CSV_HEADER = re.compile(r'"?[A-Za-z_][\w ]*"?(\s*,\s*"?[A-Za-z_][\w ]*"?)+')
ISSUE_COLUMNS = frozenset({"number", "title", "body", "id", "summary", "state", "url"})
# A YAML list of issues ("- number: 1") or a YAML map of them ("issues:"); a
# report's own first line ("Description:") is not taken for one.
_YAML_START = re.compile(r"(?:issues|items):|- (?:number|title|id|iid|url): .*")
WRAPPER_KEYS = ("items", "issues")
EXPECTED = (
    "a GitHub issue (gh issue view/list --json, or the REST API) or a GitLab issue, as JSON: "
    'one object, a list of them, or a search result {"items": [...]} / {"issues": [...]}; '
    "or one report as Markdown or plain text (.md, .txt)"
)


@dataclass(frozen=True, slots=True)
class ReportSource:
    """A report's decoded text, the stem of its file name (None for stdin) and its JSON value.

    ``value`` is the parsed document for a JSON report, and ``None`` for text.
    """

    text: str
    stem: str | None
    is_json: bool
    value: Any = None


def invalid(field: str, reason: str, message: str, **details: Any) -> ReportImportError:
    """``report_invalid`` naming the field (a JSON Pointer) and a fixed reason."""
    return ReportImportError(
        "report_invalid", f"the report {message}", {"field": field, "reason": reason, **details}
    )


def too_large(field: str, limit: int, unit: str) -> ReportImportError:
    return ReportImportError(
        "report_too_large",
        f"the report's {field or 'file'} is longer than {limit} {unit}",
        {"field": field, "limit": limit, "unit": unit},
    )


def read_source(report: str | os.PathLike[str]) -> ReportSource:
    """The report at ``report`` (``-``: standard input), decoded and, if JSON, parsed."""
    stem: str | None = None
    if str(report) == STDIN:
        data = _read_stdin()
        suffix = ""
    else:
        path = Path(report)
        data = read_regular_file(path, max_bytes=MAX_FILE_BYTES, what="the report", refuse=_refused)
        stem, suffix = path.stem, path.suffix.lower()
    return parse_source(data, stem=stem, suffix=suffix)


def parse_source(data: bytes, *, stem: str | None = None, suffix: str = "") -> ReportSource:
    """The report held in ``data``: decoded, its form decided, JSON parsed."""
    if len(data) > MAX_FILE_BYTES:
        raise too_large("", MAX_FILE_BYTES, "bytes")
    # An editor may add a byte order mark without being asked; it is no part of the text.
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    nul = data.find(b"\0")
    if nul >= 0:
        raise _not_text("nul_byte", "holds a NUL byte", nul)
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as err:
        raise _not_text("not_utf8", "is not UTF-8 text", bom + err.start) from None
    if not _is_json(text, suffix):
        _refuse_other_formats(text, suffix)
        return ReportSource(text=text, stem=stem, is_json=False)
    parsed = jsonio.strict_parse(text, max_bytes=MAX_FILE_BYTES)
    if isinstance(parsed, jsonio.JsonFailure):
        where = jsonio.line_column(text, parsed.offset)
        phrase = parsed.code.replace("_", " ")
        raise invalid(
            "",
            parsed.code,
            f"is not strict JSON: {phrase} at line {where['line']}, column {where['column']}",
            offset=parsed.offset,
            **where,
        )
    return ReportSource(text=text, stem=stem, is_json=True, value=unwrapped(parsed.value))


def _refuse_other_formats(text: str, suffix: str) -> None:
    """A spreadsheet or data file is no report: read as text it would become one
    case titled with its header line. Refused by its name, or by a first line
    that is a CSV header or a YAML key."""
    form = OTHER_SUFFIXES.get(suffix)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if form is None and suffix not in TEXT_SUFFIXES:
        if _CSV_HEADER.fullmatch(first) and ISSUE_COLUMNS & set(first.lower().split(",")):
            form = "CSV"
        elif _YAML_START.fullmatch(first):
            form = "YAML"
    if form is not None:
        raise not_a_tracker_export(f"is {form}, not a tracker export")


def not_a_tracker_export(what: str) -> ReportImportError:
    """``report_invalid`` (reason ``not_a_tracker_export``) saying what is read instead."""
    return invalid("", "not_a_tracker_export", f"{what}; expected: {EXPECTED}", expected=EXPECTED)


def unwrapped(value: Any) -> Any:
    """The issue list of a search result's wrapper (``{"items": [...]}`` of GitHub's
    REST search, ``{"issues": [...]}``), else ``value`` itself."""
    if isinstance(value, dict) and "title" not in value:
        for key in WRAPPER_KEYS:
            if isinstance(value.get(key), list):
                return value[key]
    return value


def _is_json(text: str, suffix: str) -> bool:
    if suffix in JSON_SUFFIXES:
        return True
    if suffix in TEXT_SUFFIXES:
        return False
    return text.lstrip()[:1] in ("{", "[")


def _read_stdin() -> bytes:
    try:
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    except (OSError, AttributeError, ValueError) as err:
        raise ReportImportError(
            "report_unreadable", "cannot read the report", {"reason": type(err).__name__}
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise too_large("", MAX_FILE_BYTES, "bytes")
    return data


def _refused(reason: str, message: str, details: dict[str, Any]) -> ReportImportError:
    if reason == "too_large":
        return too_large("", MAX_FILE_BYTES, "bytes")
    # The OS error class (FileNotFoundError ...) or not_a_regular_file: never the path.
    return ReportImportError("report_unreadable", message, {"reason": details.get("kind", reason)})


def _not_text(reason: str, phrase: str, offset: int) -> ReportImportError:
    return ReportImportError(
        "report_unreadable",
        f"the report {phrase} (byte {offset})",
        {"reason": reason, "offset": offset},
    )


__all__ = [
    "MAX_FILE_BYTES",
    "ReportSource",
    "invalid",
    "not_a_tracker_export",
    "parse_source",
    "read_source",
    "too_large",
    "unwrapped",
]
