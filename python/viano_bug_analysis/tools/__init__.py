"""Read-only investigation tools over case packages.

``InvestigationToolRouter`` validates a whole batch of snapshot queries, reads
only the packaged snapshots the case declares (each against its SHA-256 and
size) and answers with provenance: member hashes, 1-based line numbers and
JSON Pointers to stored rows.
"""

from viano_bug_analysis.tools.errors import ToolError
from viano_bug_analysis.tools.limits import ToolLimits

__all__ = ["InvestigationToolRouter", "ToolError", "ToolLimits"]


def __getattr__(name: str) -> object:
    # The router pulls in jsonschema; import it only when asked for.
    if name == "InvestigationToolRouter":
        from viano_bug_analysis.tools.router import InvestigationToolRouter

        return InvestigationToolRouter
    raise AttributeError(name)
