"""Which of the two configuration files a TOML document is, told by its top-level tables.

The project config (``[source]``, ``[database]``: what ProjectResearch reads)
goes with ``--project-config``; the investigation config (``[llm]``,
``[investigation]``: the model and the loop) with ``--config``. A file given
to the wrong flag would otherwise fail as "unknown property 'database'";
each loader asks ``misplaced`` first and says which flag the file belongs to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

PROJECT: Final = "project"
INVESTIGATION: Final = "investigation"
FLAGS: Final = {PROJECT: "--project-config", INVESTIGATION: "--config"}
_TABLES: Final = {PROJECT: ("source", "database"), INVESTIGATION: ("llm", "investigation")}


def kind_of(document: Mapping[str, Any]) -> str | None:
    """``PROJECT``, ``INVESTIGATION``, or None when its tables say neither (or both)."""
    kinds = [kind for kind, tables in _TABLES.items() if any(t in document for t in tables)]
    return kinds[0] if len(kinds) == 1 else None


def misplaced(document: Mapping[str, Any], expected: str) -> str | None:
    """The sentence refusing a document of the other kind; None when it may be ``expected``."""
    found = kind_of(document)
    if found is None or found == expected:
        return None
    tables = ", ".join(f"[{t}]" for t in _TABLES[found] if t in document)
    return (
        f"this is {'a project' if found == PROJECT else 'an investigation'} configuration "
        f"(it has {tables}): give it with {FLAGS[found]}, and the {expected} configuration "
        f"with {FLAGS[expected]}"
    )


__all__ = ["FLAGS", "INVESTIGATION", "PROJECT", "kind_of", "misplaced"]
