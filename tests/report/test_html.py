"""render_html: one self-contained page, every stored text escaped, citations linked."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest

from tests.report.package_fixture import HOSTILE, reported_package
from viano_bug_analysis.report import build_report, render_html


class Page(HTMLParser):
    """Elements with their attributes and the text inside each element with an id."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text_by_id: dict[str, str] = {}
        self._open: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag in {"meta", "br", "img", "input", "link"}:
            return
        self._open.append((tag, attributes.get("id")))
        if attributes.get("id"):
            self.text_by_id[str(attributes["id"])] = ""

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            name, _id = self._open.pop()
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        for _name, element_id in self._open:
            if element_id:
                self.text_by_id[element_id] += data


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_report(reported_package(tmp_path_factory.mktemp("html")))


def test_hostile_text_stays_text(report: dict[str, Any]) -> None:
    page = parse(render_html(report))
    names = [tag for tag, _attrs in page.tags]
    assert "script" not in names and "img" not in names
    # No element carries an event handler or a javascript: link.
    for _tag, attrs in page.tags:
        assert not any(k.startswith("on") for k in attrs)
        assert not any(v and "javascript:" in v for v in attrs.values())
    # The hostile text is shown as written, where it was written.
    assert HOSTILE in page.text_by_id["hypothesis-H2"]
    assert HOSTILE in page.text_by_id["cite-H1-2"]  # the cited log line


def test_the_page_needs_nothing_from_outside(report: dict[str, Any]) -> None:
    html = render_html(report)
    page = parse(html)
    for _tag, attrs in page.tags:
        for name in ("src", "href", "action", "data"):
            value = attrs.get(name)
            assert value is None or value.startswith("#"), (name, value)
    assert not re.search(r"url\(|@import", html)
    assert "default-src 'none'" in html


def test_every_citation_links_to_its_excerpt_with_hash_and_origin(report: dict[str, Any]) -> None:
    page = parse(render_html(report))
    links = [attrs["href"] for tag, attrs in page.tags if tag == "a" and attrs.get("href")]
    citations = [c for h in report["hypotheses"] for c in h["citations"]]
    assert len(citations) == 3
    for citation in citations:
        assert f"#{citation['anchor']}" in links
        shown = page.text_by_id[citation["anchor"]]
        assert citation["excerpt"] in shown
        assert citation["value_sha256"] in shown and "verified" in shown
        assert citation["provenance"]["member_sha256"] in shown
    for link in links:
        assert link is not None and link[1:] in page.text_by_id, link


def test_a_blocked_or_running_case_is_announced_first(report: dict[str, Any]) -> None:
    running = {**report, "state": {**report["state"], "state": "investigation", "notice": "N!"}}
    html = render_html(running)
    assert html.index('id="state-notice"') < html.index("<h2>")
    assert 'id="state-notice"' not in render_html(report)


def test_inline_code_keeps_runs_of_spaces(report: dict[str, Any]) -> None:
    # A fact excerpt quotes an aligned C++ line ('NPC_X      = 1') beside its
    # SHA-256; the browser's default white-space would show and copy it
    # with the runs of spaces collapsed.
    style = re.search(r"<style>(.*?)</style>", render_html(report), re.S)
    assert style is not None
    rules = dict(re.findall(r"([^{}]+)\{([^{}]*)\}", style.group(1)))
    code = next(
        body
        for selector, body in rules.items()
        if "code" in [s.strip() for s in selector.split(",")]
    )
    assert re.search(r"white-space:\s*pre-wrap", code)
