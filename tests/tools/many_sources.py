"""A package with many small sources, as a real case selects them (issue 11, point 23).

Used by the search-result tests and by ``benches/result_size_sources.py``,
which prints the result size of a search over all of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tools.package_factory import BuiltPackage, build_package
from viano_bug_analysis.tools import ToolLimits

SOURCE_COUNT = 1522


def build_many_sources(root: Path, count: int = SOURCE_COUNT) -> BuiltPackage:
    """``count`` small C++ files; only ``src/f0007.cpp`` mentions ``Wolpertinger``."""
    sources = {
        f"src/f{i:04d}.cpp": (
            f"// file {i}\nint value_{i} = {i};\n"
            + ("void npc_wild_Wolpertinger();\n" if i == 7 else "")
        ).encode()
        for i in range(count)
    }
    return build_package(root, sources=sources)


def limits_for(package: BuiltPackage) -> ToolLimits:
    """Limits that let a batch of 16 searches name every source of ``package``.

    Only the selection and request size are raised; the result size limit
    stays at its default, which is what the searches must fit.
    """
    return ToolLimits(selected_files=len(package.refs), request_bytes=1024 * 1024)


def search_all(package: BuiltPackage, text: str, limit: int = 1) -> dict[str, Any]:
    refs = sorted(package.refs.values())
    return {
        "operation": "source.find_text",
        "arguments": {
            "source_refs": refs,
            "text": text,
            "case_sensitive": True,
            "offset": 0,
            "limit": limit,
        },
    }
