"""Which repository paths a query may name.

A query path (``path`` of ``source.read``, ``path_prefix`` of the searches) is
relative, ``/``-separated and plain: no leading ``/``, no backslash, no NUL or
line break, no empty, ``.`` or ``..`` component, and no ``.git`` component
(compared ASCII-case-insensitively: on case-insensitive file systems ``.GIT``
is the same directory); at most 1,024 characters. A ``path_prefix`` may end
with one ``/`` ("this directory"); it matches paths that start with it as
text, so ``src/Spell`` covers ``src/Spell.cpp`` and ``src/Spells/Aura.cpp``.

The rules are implemented once, in the native core (``core/git/paths.rs``),
and applied to the paths listed in a commit's tree too: a tree written by a
hostile tool can hold names git itself refuses to check out, and those are
never searched or read (reason ``path_invalid``).
"""

from __future__ import annotations

from typing import Any

from viano_bug_analysis._native import git_path_problem
from viano_bug_analysis.project_research.errors import ResearchError


def path_problem(path: str, *, allow_trailing_slash: bool = False) -> str | None:
    """The first rule ``path`` breaks as a fixed phrase, or None when it is plain."""
    return git_path_problem(path, allow_trailing_slash=allow_trailing_slash)


def check_query_path(value: Any, argument: str, *, prefix: bool = False) -> str:
    """Returns ``value`` when it is an acceptable query path, else raises ``path_invalid``."""
    if not isinstance(value, str):
        raise ResearchError(
            "request_invalid",
            f"invalid request: {argument} (not_a_string)",
            {"argument": argument, "what": "not_a_string"},
        )
    # Lone surrogates cannot be encoded as UTF-8 and never name a tree path.
    if not value.isascii() and not _is_utf8_encodable(value):
        problem: str | None = "not_utf8"
    else:
        problem = path_problem(value, allow_trailing_slash=prefix)
    if problem is not None:
        raise ResearchError(
            "path_invalid",
            f"{argument} is not a plain repository-relative path ({problem})",
            {"argument": argument, "what": problem},
        )
    return value


def _is_utf8_encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
