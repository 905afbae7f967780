"""VianoBugAnalysis: read-only, provenance-carrying investigation of bug reports."""

from importlib import metadata

from viano_bug_analysis._native import __version__ as native_version

# The one version source is the installed distribution's metadata (from
# pyproject.toml), so `vba --version` and this attribute cannot disagree.
__version__ = metadata.version("viano-bug-analysis")
__all__ = ["__version__", "native_version"]
