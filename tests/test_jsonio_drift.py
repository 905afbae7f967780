"""Drift test: the bytes we hash and the strict parse exist once, in jsonio.py.

A second encoder drifts (one copy escaped non-ASCII, one wrote floats its own
way, one crashed on integers beyond 64 bits) and a second strict reader drifts
(one accepted lone surrogates). So outside jsonio.py no module sorts keys
itself, hashes bytes with its own call, defines ``sha256_hex`` or builds a
strict parser from ``json.loads`` hooks. An incremental ``hashlib.sha256()``
that streams a file is not JSON and stays where the file is read.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "viano_bug_analysis"

RULES = {
    "sorts keys itself": re.compile(r"OPT_SORT_KEYS|sort_keys\s*=\s*True"),
    "hashes bytes itself": re.compile(r"hashlib\.sha256\(\s*[^)\s]"),
    "defines sha256_hex": re.compile(r"def sha256_hex\b"),
    "builds a strict parser": re.compile(r"object_pairs_hook|parse_constant"),
}

# Each with the reason it is not the one encoding.
ALLOWED = {
    # Measures a result's size on the fast path and falls back to
    # canonical_bytes; it never stores or hashes the bytes.
    ("tools/router.py", "sorts keys itself"),
    # Reads call records written before the UTF-8 encoding (ASCII escapes)
    # so that their stored hashes still verify; nothing new is written so.
    ("investigation/recovery/audit.py", "sorts keys itself"),
}


def _offences() -> list[tuple[str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "jsonio.py":
            continue
        text = path.read_text(encoding="utf-8")
        found += [(rel, rule) for rule, pattern in RULES.items() if pattern.search(text)]
    return found


def test_only_jsonio_encodes_hashes_and_parses_strictly() -> None:
    assert [o for o in _offences() if o not in ALLOWED] == []


def test_every_allowance_is_still_needed() -> None:
    assert set(_offences()) >= ALLOWED


def test_the_rules_see_what_they_are_for() -> None:
    jsonio_text = (PACKAGE / "jsonio.py").read_text(encoding="utf-8")
    for rule in ("sorts keys itself", "hashes bytes itself", "defines sha256_hex"):
        assert RULES[rule].search(jsonio_text), rule
    assert not RULES["hashes bytes itself"].search("hasher = hashlib.sha256()")
