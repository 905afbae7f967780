"""The enrichment index checked against ``enrichment-index-v1``, on write and on read.

A violation is ``package_corrupt`` (reason ``not an enrichment index``) with
the pointer, rule and property of the first violation: a builder that would
write a fact outside the vocabulary, or a stored index changed by hand, is
refused before anything reads a fact of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.facts.registry import INDEX_SCHEMA
from viano_bug_analysis.schema_errors import check

NOT_AN_INDEX = "not an enrichment index"


def check_index(index: Mapping[str, Any], path: str) -> None:
    """Raises ``package_corrupt`` when ``index`` (stored at ``path``) breaks the schema."""
    found = check(INDEX_SCHEMA, index)
    if found is None:
        return
    raise PackageFileError(
        "package_corrupt",
        f"a stored package file is damaged: {NOT_AN_INDEX} ({found.message})",
        {
            "path": path,
            "reason": NOT_AN_INDEX,
            "pointer": found.pointer,
            "rule": found.rule,
            "property": found.property,
        },
    )


__all__ = ["NOT_AN_INDEX", "check_index"]
