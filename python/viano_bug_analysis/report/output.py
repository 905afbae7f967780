"""``vba report``: the report of a package in one format, to stdout or a file.

The package is only read. A file given with ``-o`` must lie outside the
package (a report written into it would change what it reports on), and it
is written whole or not at all: a temporary file beside it, fsynced, then
renamed over the name.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path
from typing import Any

from viano_bug_analysis.errors import ReportError
from viano_bug_analysis.investigation.token_use import Prices
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.report.build import build_report
from viano_bug_analysis.report.html import render_html
from viano_bug_analysis.report.markdown import render_markdown

FORMATS = ("html", "md", "json")


def render(report: dict[str, Any], fmt: str, package_href: str | None = None) -> bytes:
    """The report in ``fmt`` (``html``, ``md`` or ``json``) as UTF-8 bytes;
    ``package_href`` as ``render_html`` takes it."""
    if fmt == "html":
        return render_html(report, package_href).encode("utf-8")
    if fmt == "md":
        return render_markdown(report, package_href).encode("utf-8")
    if fmt == "json":
        return canonical_bytes(report) + b"\n"
    raise ReportError(
        "report_format_unknown", "unknown report format", {"allowed": ", ".join(FORMATS)}
    )


def report_bytes(
    package: str | os.PathLike[str],
    fmt: str,
    prices: Prices | None = None,
    *,
    written_to: str | os.PathLike[str] | None = None,
) -> bytes:
    """The report of ``package``; ``written_to`` is the file it goes to (the
    current directory's view for standard output), so that its links to the
    package's stored answers are relative to it."""
    where = Path(os.path.abspath(written_to)).parent if written_to is not None else Path.cwd()
    href = Path(os.path.relpath(os.path.abspath(package), where)).as_posix()
    return render(build_report(package, prices), fmt, "" if href == "." else href)


def write_report(
    data: bytes, output: str | os.PathLike[str], package: str | os.PathLike[str]
) -> None:
    """Writes ``data`` to ``output`` atomically; refuses a path inside the package."""
    target = Path(os.path.abspath(output))
    root = Path(os.path.realpath(package))
    parent = Path(os.path.realpath(target.parent))
    if parent == root or root in parent.parents:
        raise ReportError(
            "report_output_inside_package",
            "the report file must lie outside the case package (it is read-only here)",
            {"what": "the -o path is inside the package"},
        )
    temporary = parent / f".{target.name}.{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, parent / target.name)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise ReportError(
            "report_write_failed",
            "the report file could not be written",
            {"errno": errno.errorcode.get(err.errno or 0, "EIO")},
        ) from None


__all__ = ["FORMATS", "render", "report_bytes", "write_report"]
