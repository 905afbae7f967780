"""Case packages v1: the canonical JSON rule, loading with integrity checks, creation.

    from viano_bug_analysis.case import create_package, load_package, verify_attachment

    package = create_package("samples/bug-20/case-spec.json", "/tmp/bug-20")
    package = load_package("/tmp/bug-20")        # manifest + case.json checked
    verify_attachment(package, "attachments/wowsrc.zip")

The format is described in docs/case-package-v1.md. Every failure is a
``viano_bug_analysis.errors.CaseError`` with a stable ``code``.
"""

from viano_bug_analysis.case.canonical import canonical_bytes, sha256_canonical, sha256_hex
from viano_bug_analysis.case.create import create_package
from viano_bug_analysis.case.package import (
    AttachmentRef,
    CasePackage,
    ContextEntry,
    load_package,
    verify_attachment,
    verify_package,
)

__all__ = [
    "AttachmentRef",
    "CasePackage",
    "ContextEntry",
    "canonical_bytes",
    "create_package",
    "load_package",
    "sha256_canonical",
    "sha256_hex",
    "verify_attachment",
    "verify_package",
]
