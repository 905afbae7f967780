"""The case report: a read-only view of one case package for people and tools.

``build_report(package_path)`` returns the report as data (``case-report-v3``);
``render_html`` makes one self-contained page of it, ``render_markdown`` a
text for a ticket. Nothing here writes to the package (docs/report.md).
"""

from __future__ import annotations

from viano_bug_analysis.report.build import build_report
from viano_bug_analysis.report.html import render_html
from viano_bug_analysis.report.markdown import render_markdown

__all__ = ["build_report", "render_html", "render_markdown"]
