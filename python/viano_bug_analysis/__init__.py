"""VianoBugAnalysis: read-only, provenance-carrying investigation of bug reports."""

from viano_bug_analysis._native import __version__ as native_version

__version__ = "0.1.0"
__all__ = ["__version__", "native_version"]
