"""render_markdown: stored text cannot break out into Markdown or HTML."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.report.package_fixture import HOSTILE_LINE, REPORT_TEXT, reported_package
from viano_bug_analysis.report import build_report, render_markdown
from viano_bug_analysis.report.markdown import _block, _code, _i


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_report(reported_package(tmp_path_factory.mktemp("md")))


def test_the_ticket_text_has_the_verdict_citations_and_usage(report: dict[str, Any]) -> None:
    text = render_markdown(report)
    assert "| H1 The net's spell hit gives no quest credit. | supported | 0.80 |" in text
    for citation in (c for h in report["hypotheses"] for c in h["citations"]):
        assert citation["value_sha256"] in text
    assert "- prompt tokens: 44" in text and "- completion tokens: 28" in text
    assert "budget units: 272 of 400000" in text


def outside_fences(text: str) -> str:
    """The text with every fenced block (any fence length, any indent) left out."""
    kept, fence = [], None
    for line in text.splitlines():
        stripped = line.strip()
        if fence is None and re.fullmatch(r"`{3,}text", stripped):
            fence = stripped[:-4]
        elif fence is not None and stripped == fence:
            fence = None
        elif fence is None:
            kept.append(line)
    assert fence is None, "a fence was not closed"
    return "\n".join(kept)


def test_hostile_text_is_escaped_inline_and_fenced_in_blocks(report: dict[str, Any]) -> None:
    text = render_markdown(report)
    # Blocks keep the text exactly, inside a fence longer than its backtick runs.
    assert "`````text\n" + REPORT_TEXT + "\n`````" in text
    assert HOSTILE_LINE in text
    inline = outside_fences(text)
    assert "<script>" not in inline and "<img" not in inline and "[a](javascript" not in inline
    assert r"&lt;script\>alert" in inline  # the statement of H2, escaped


def test_inline_escaping() -> None:
    assert _i("a *b* [c](d) <e> & | `f`\nnext") == (r"a \*b\* \[c\](d) &lt;e\> &amp; \| \`f\` next")
    assert _block("x\n```` y") == ["`````text", "x", "```` y", "`````"]


def test_code_spans_keep_the_stored_text() -> None:
    # A constant line as the reference tree aligns it, and SQL with quoted
    # identifiers: the excerpt beside a SHA-256 must be the stored text.
    line = "    NPC_RYGA                    = 17123\t// `x`"
    assert _code(line) == "`` " + line + " ``"  # it ends in a backtick: padded
    sql = "CREATE TABLE `quest_template_addon` ("
    assert _code(sql) == "``" + sql + "``"
    assert _code("`a``") == "``` `a`` ```"
    assert _code(" both ") == "`  both  `"
    assert _code("a\r\nb\nc") == "`a b c`"
    # Not a Python repr: provenance values that are objects read as JSON.
    assert _code({"kind": "git", "n": True}) == '`{"kind":"git","n":true}`'
    assert _code(7) == "`7`"
