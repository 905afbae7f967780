"""The demo counts the sources a search found hits in out of those it searched (point 23)."""

from __future__ import annotations

from tests.test_demo import _demo


def test_the_demo_says_how_many_searched_sources_had_hits() -> None:
    # The sample's find_text searches two sources and finds its line in one.
    assert b"1 matching line(s) in 1 of 2 source(s)" in _demo().stdout
