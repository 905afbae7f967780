"""VianoBugAnalysis: read-only, provenance-carrying investigation of bug reports."""

from importlib import metadata

from viano_bug_analysis._native import __version__ as native_version

# The version is written once, in Cargo.toml: maturin puts it into the
# distribution's metadata (pyproject.toml declares it dynamic) and into the
# extension, so this attribute, `vba --version` and native_version agree.
__version__ = metadata.version("viano-bug-analysis")
__all__ = ["__version__", "native_version"]
