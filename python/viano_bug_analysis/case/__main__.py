"""Command line for case packages: the ``vba case`` commands under another name.

    python -m viano_bug_analysis.case create SPEC.json OUT_DIR [--json]
    python -m viano_bug_analysis.case verify PACKAGE_DIR [--json]
    python -m viano_bug_analysis.case build SPEC.json PACKAGE [...]

``create`` builds a package from a case-spec-v1 file and prints its id and
path. ``verify`` loads a package and checks every attachment and every
declared member against the hashes recorded in the package; it writes
nothing. Exit codes and error output are those of ``vba`` (the table is in
``viano_bug_analysis.exit_codes`` and docs/errors.md): a typed error is one
JSON line on stderr.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    import sys

    from viano_bug_analysis.cli import main as vba_main

    # One parser and one exit-code path for both spellings of the command.
    return vba_main(["case", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
