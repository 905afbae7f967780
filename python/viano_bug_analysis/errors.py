"""The exception hierarchy of VianoBugAnalysis.

Every error carries a stable ``code`` (part of the public contract: match on
it, never on the message) and ``details``, a dict of numbers and fixed
phrases. Messages and details never contain source text, row values, search
terms, LLM output or credentials, so they are safe to log.

The native extension raises these classes too: it looks them up here by name,
so this module is the one place that owns the hierarchy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class VbaError(Exception):
    """Base of every error this package raises on purpose."""

    code: str
    details: dict[str, Any]

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.details = dict(details or {})

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class ArchiveError(VbaError):
    """The ZIP archive or the named member cannot be trusted or read."""


class IntegrityError(VbaError):
    """A member's bytes do not match its declared SHA-256, size or CRC-32."""


class LimitError(VbaError):
    """Input or output would exceed a configured limit."""


class TextDecodeError(VbaError):
    """A member is not UTF-8 text (NUL byte or invalid sequence); details hold the offset."""


class RowSnapshotError(VbaError):
    """A JSON member is not a usable row snapshot."""


class InvalidArgumentError(VbaError):
    """A caller passed an argument outside the documented contract."""


class ReadError(VbaError):
    """The operating system refused a read or an allocation (missing file,
    permissions, out of memory); ``details["kind"]`` names the OS error kind."""


class CaseError(VbaError):
    """A case package (manifest, case.json, attachments) or a case spec is unusable."""


class EnrichmentError(VbaError):
    """Case enrichment could not run: a bad enrichment profile
    (``details["key"]`` names the key), or an unfinished build that does not
    match the inputs or journal it would resume."""


class PackageFileError(CaseError):
    """A package file could not be written or read back safely (``durable.PackageFiles``).

    ``details["path"]`` is the path relative to the package; an OS refusal adds
    ``details["errno"]`` (the errno name, such as ``ENOSPC``), never the OS message.
    """
