"""An answer schema as a GBNF grammar: the ``grammar`` request member of the
llama.cpp family (llama.cpp's ``llama-server`` and llama-cpp-python's server).

Why our own compiler: llama-cpp-python 0.3.36 compiles a ``json_object``
schema with a converter that ignores ``minimum`` / ``maximum`` (its own TODO
says so), so a constrained model still wrote ``"offset": 3147589667`` where
the contract allows at most 2147483647. The grammar this module writes bounds
every integer to its range exactly, digit by digit, and keeps each object's
properties in the schema's order (each variant's discriminating constant
first, see ``answer_schema``).

What it writes, for the schema subset ``answer_schema`` produces:

* objects with declared properties and ``additionalProperties: false``: the
  properties in their order, each optional one skippable; an open mapping
  (``additionalProperties`` a schema, no declared properties) as key/value
  pairs of that schema;
* ``anyOf``, a list of types, ``const`` and ``enum`` (the values' compact JSON
  as literals);
* strings with ``minLength`` / ``maxLength`` up to :data:`MAX_REPEAT`
  characters (a larger bound is left to the contract, as in the schema), and
  ``pattern`` where it is a simple anchored sequence of literals and
  character classes with quantifiers (:func:`_pattern`); any other pattern
  leaves a plain string;
* integers within ``minimum`` / ``maximum`` exactly; numbers within integral
  bounds of at least 0 (``confidence`` in [0, 1]); otherwise a plain number
  of at most 19 integral digits;
* arrays with ``minItems`` / ``maxItems`` (``uniqueItems`` is the contract's);
* booleans, null, and any JSON value for ``{}``.

Everything else a schema could say is not in the grammar and is checked by
the contract when the answer arrives: the grammar only narrows what the
model can write, it never admits what the schema refuses except where this
list says a bound is left out. Output is deterministic (rule names follow
the schema's paths), so a resumed run sends the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

from viano_bug_analysis.jsonio import ordered_bytes

MAX_REPEAT: Final = 256
"""The largest count bound written as ``{m,n}``: llama.cpp expands a bound of
n into n nested rules and refuses a nesting of about a thousand."""
_MAX_DEPTH: Final = 64
_INT_DIGITS: Final = 19
_MAX_DISTINCT: Final = 32
_WS: Final = "ws"
_NAME: Final = re.compile(r"[a-z][a-z0-9-]*")
_PRIMITIVES: Final = {
    # An empty alternative, written first: llama-cpp-python 0.3.36 took 20-30x
    # longer a token with ``" "?`` here (2.4 s against 51-69 s for 150 tokens
    # of a step answer), and llama.cpp's parser reads an empty alternative
    # written last (``x | `` at a line end) into the next line's rule, which
    # crashed the server (SIGSEGV). Every empty alternative goes first.
    "ws": '| " "',
    "char": r'[^"\\\x00-\x1F\x7F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "string": '"\\"" char* "\\""',
    "integer": f'"-"? ("0" | [1-9] [0-9]{{0,{_INT_DIGITS - 1}}})',
    "number": f'"-"? ("0" | [1-9] [0-9]{{0,{_INT_DIGITS - 1}}}) ("." [0-9]{{1,20}})? '
    "([eE] [-+]? [0-9]{1,3})?",
    "boolean": '"true" | "false"',
    "null": '"null"',
    "value": "object | array | string | number | boolean | null",
    "object": '"{" ws (string ":" ws value ("," ws string ":" ws value)*)? "}"',
    "array": '"[" ws (value ("," ws value)*)? "]"',
}
_PRIMITIVE_DEPS: Final = {
    "string": ("char",),
    "value": ("object", "array", "string", "number", "boolean", "null"),
    "object": ("ws", "string", "value"),
    "array": ("ws", "value"),
}


def schema_grammar(schema: Mapping[str, Any]) -> str:
    """The GBNF grammar of ``schema``, its start rule ``root``."""
    compiler = _Compiler()
    body = compiler.node(schema, "root", 0)
    compiler.rules["root"] = body
    lines = [f"root ::= {compiler.rules.pop('root')}"]
    lines += [f"{name} ::= {rule}" for name, rule in compiler.rules.items()]
    return "\n".join(lines) + "\n"


class _Compiler:
    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self._named: dict[str, str] = {}  # body -> the rule first named for it

    def primitive(self, name: str) -> str:
        if name not in self.rules:
            self.rules[name] = _PRIMITIVES[name]
            for dep in _PRIMITIVE_DEPS.get(name, ()):
                self.primitive(dep)
        return name

    def rule(self, name: str, body: str) -> str:
        """A named rule for ``body``: one rule per distinct body (the many
        ``offset`` ranges of a schema are one), named after the first path."""
        if body in self._named:
            return self._named[body]
        if _NAME.fullmatch(body):
            return body  # a rule of one other rule: use that one
        unique, n = name, 1
        while unique in self.rules:
            n += 1
            unique = f"{name}-{n}"
        self.rules[unique] = body
        self._named[body] = unique
        return unique

    def node(self, schema: Any, name: str, depth: int) -> str:
        """An expression for ``schema``."""
        if depth > _MAX_DEPTH or not isinstance(schema, Mapping) or not schema:
            # Deeper than answer_schema's inliner goes: any value, the contract decides.
            return self.primitive("value")
        if "const" in schema:
            return _literal(_json(schema["const"]))
        if "enum" in schema:
            return _group(_literal(_json(v)) for v in schema["enum"])
        if "anyOf" in schema:
            members = schema["anyOf"]
            return _group(
                self.rule(f"{name}-{i}", self.node(m, f"{name}-{i}", depth + 1))
                for i, m in enumerate(members)
            )
        kind = schema.get("type")
        if isinstance(kind, list):
            return _group(self.node({**schema, "type": t}, f"{name}-{t}", depth + 1) for t in kind)
        if kind == "object" or (kind is None and "properties" in schema):
            return self.object(schema, name, depth)
        if kind == "array":
            return self.array(schema, name, depth)
        if kind == "string":
            return self.string(schema, name)
        if kind == "integer":
            return self.integer(schema)
        if kind == "number":
            return self.number(schema)
        if kind in ("boolean", "null"):
            return self.primitive(kind)
        return self.primitive("value")

    def object(self, schema: Mapping[str, Any], name: str, depth: int) -> str:
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        if not properties and isinstance(extra, Mapping):
            value = self.rule(f"{name}-value", self.node(extra, f"{name}-value", depth + 1))
            pair = self.rule(f"{name}-kv", f'{self.primitive("string")} ":" ws {value}')
            self.primitive(_WS)
            return f'"{{" ws ({pair} ("," ws {pair})*)? "}}"'
        if extra is not False:
            return self.primitive("object")
        self.primitive(_WS)
        required = set(schema.get("required") or ())
        pairs = []
        for key, sub in properties.items():
            key_literal = _literal(_json(key))
            value = self.rule(
                f"{name}-{_slug(key)}", self.node(sub, f"{name}-{_slug(key)}", depth + 1)
            )
            pairs.append((key in required, f'{key_literal} ":" ws {value}'))
        # rest(i, first): the properties from i on; ``first`` when none was
        # written yet (no comma before the next one). Named per (i, first),
        # so optional properties cost 2n rules, not 2^n alternatives.
        names: dict[tuple[int, bool], str] = {}
        for i in range(len(pairs) - 1, -1, -1):
            is_required, pair = pairs[i]
            for first in (True, False):
                after = names.get((i + 1, False), "")
                written = (pair if first else f'"," ws {pair}') + (f" {after}" if after else "")
                if is_required:
                    body = written
                else:
                    skipped = names.get((i + 1, first), "")
                    body = f"{written} | {skipped}" if skipped else f"| {written}"
                names[(i, first)] = self.rule(f"{name}-rest{i}{'f' if first else ''}", body)
        inner = names.get((0, True), "")
        return f'"{{" ws {inner} "}}"' if inner else '"{" ws "}"'

    def array(self, schema: Mapping[str, Any], name: str, depth: int) -> str:
        self.primitive(_WS)
        distinct = self.distinct_values(schema, name)
        if distinct is not None:
            return distinct
        item = self.rule(
            f"{name}-item", self.node(schema.get("items", {}), f"{name}-item", depth + 1)
        )
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        high = int(high) if isinstance(high, int) and high <= MAX_REPEAT else None
        if high == 0:
            return '"[" "]"'
        more = _repeat(f'("," ws {item})', max(low - 1, 0), None if high is None else high - 1)
        items = f"{item} {more}".strip()
        return f'"[" ws {items} "]"' if low > 0 else f'"[" ws ({items})? "]"'

    def distinct_values(self, schema: Mapping[str, Any], name: str) -> str | None:
        """``uniqueItems`` over an enum of at most :data:`_MAX_DISTINCT` values,
        as the values in the enum's order, each at most once: every set the
        schema admits, in one order (a tiny model otherwise wrote
        ``["P1", "P1"]``). None where that form does not apply."""
        items = schema.get("items")
        if not schema.get("uniqueItems") or not isinstance(items, Mapping):
            return None
        values = items.get("enum")
        if not isinstance(values, list) or not 0 < len(values) <= _MAX_DISTINCT:
            return None
        low, high = int(schema.get("minItems", 0)), schema.get("maxItems")
        if low > 1 or (isinstance(high, int) and high < len(values)):
            return None
        literals = [_literal(_json(v)) for v in values]
        # chain(i, first): the values from i on, ``first`` while none was written.
        names: dict[tuple[int, bool], str] = {}
        for i in range(len(literals) - 1, -1, -1):
            for first in (True, False):
                after = names.get((i + 1, False))
                written = (literals[i] if first else f'"," ws {literals[i]}') + (
                    f" {after}" if after else ""
                )
                skipped = names.get((i + 1, first))
                if skipped is not None:
                    body = f"{written} | {skipped}"
                elif first and low > 0:
                    body = written
                else:
                    body = f"| {written}"
                names[(i, first)] = self.rule(f"{name}-set{i}{'f' if first else ''}", body)
        return f'"[" ws {names[(0, True)]} "]"'

    def string(self, schema: Mapping[str, Any], name: str) -> str:
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            compiled = _pattern(pattern)
            if compiled is not None:
                return self.rule(f"{name}-pattern", f'"\\"" {compiled} "\\""')
        char = self.primitive("char")
        low = int(schema.get("minLength", 0))
        high = schema.get("maxLength")
        high = int(high) if isinstance(high, int) and high <= MAX_REPEAT else None
        if low == 0 and high is None:
            return self.primitive("string")
        return f'"\\"" {_repeat(char, min(low, MAX_REPEAT), high)} "\\""'

    def integer(self, schema: Mapping[str, Any]) -> str:
        low, high = schema.get("minimum"), schema.get("maximum")
        low = low if isinstance(low, int) and not isinstance(low, bool) else None
        high = high if isinstance(high, int) and not isinstance(high, bool) else None
        bounded = _integer_range(low, high)
        if bounded is None:
            return self.primitive("integer")
        return self.rule(f"int-{low}-{high}".replace("None", "open").replace("--", "-m"), bounded)

    def number(self, schema: Mapping[str, Any]) -> str:
        low, high = schema.get("minimum"), schema.get("maximum")
        if not (_integral(low) and _integral(high)) or not 0 <= low < high:
            return self.primitive("number")
        below = _integer_range(int(low), int(high) - 1)
        return f'({below} ("." [0-9]{{1,20}})? | {_literal(str(int(high)))} ("." "0"{{1,20}})?)'


def _integer_range(low: int | None, high: int | None) -> str | None:
    """The decimal integers in [low, high], no leading zeros; None when a side
    is open and the other does not bound it (the plain integer then)."""
    if low is not None and high is not None and low > high:
        return '"0" "0"'  # nothing fits; a grammar that cannot complete
    if low is None or high is None:
        if low is not None and low >= 0:
            return _group(_range_parts(low, 10**_INT_DIGITS - 1))
        if high is not None and high < 0:
            return f'"-" {_group(_range_parts(-high, 10**_INT_DIGITS - 1))}'
        return None
    parts = []
    if low < 0:
        parts.append(f'"-" {_group(_range_parts(max(1, -high) if high < 0 else 1, -low))}')
    if high >= 0:
        parts += _range_parts(max(low, 0), high)
    return _group(parts)


def _range_parts(low: int, high: int) -> list[str]:
    """Alternatives for the non-negative integers in [low, high], split by digit count."""
    parts = []
    for digits in range(len(str(low)), len(str(high)) + 1):
        start = low if digits == len(str(low)) else 10 ** (digits - 1)
        end = high if digits == len(str(high)) else 10**digits - 1
        parts.append(_same_length(str(start), str(end)))
    return parts


def _same_length(low: str, high: str) -> str:
    """The digit strings s with low <= s <= high, all three the same length."""
    if not low:
        return '""'
    if low == high:
        return _literal(low)
    rest = len(low) - 1
    if low[1:] == "0" * rest and high[1:] == "9" * rest:
        return _seq(_digits(low[0], high[0]), _free(rest))
    if low[0] == high[0]:
        return _seq(_literal(low[0]), _same_length(low[1:], high[1:]))
    parts = [_seq(_literal(low[0]), _same_length(low[1:], "9" * rest))]
    if int(low[0]) + 1 <= int(high[0]) - 1:
        parts.append(_seq(_digits(str(int(low[0]) + 1), str(int(high[0]) - 1)), _free(rest)))
    parts.append(_seq(_literal(high[0]), _same_length("0" * rest, high[1:])))
    return _group(parts)


def _digits(low: str, high: str) -> str:
    return _literal(low) if low == high else f"[{low}-{high}]"


def _free(count: int) -> str:
    return "" if count == 0 else "[0-9]" if count == 1 else f"[0-9]{{{count}}}"


def _seq(*parts: str) -> str:
    return " ".join(p for p in parts if p and p != '""') or '""'


def _integral(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == int(value)


def _repeat(item: str, low: int, high: int | None) -> str:
    if high is None:
        return f"{item}{{{low},}}" if low else f"{item}*"
    if low == high:
        return "" if low == 0 else f"{item}{{{low}}}"
    return f"{item}{{{low},{high}}}"


def _group(parts: Any) -> str:
    items = [p for p in parts]
    return items[0] if len(items) == 1 else "(" + " | ".join(items) + ")"


def _literal(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _json(value: Any) -> str:
    return ordered_bytes(value).decode("utf-8")


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", key).strip("-") or "key"


# -- patterns --------------------------------------------------------------------------

# The subset: ^ (atom quantifier?)* $ with atoms a literal character other than
# a regex metacharacter, or a class [...] of single characters and ranges; the
# class's characters must not need a JSON escape (answer_schema's _wire_safe
# already dropped patterns that could match them, so this holds for what is sent).
_ATOM: Final = re.compile(
    r"(?P<cls>\[(?P<neg>\^)?(?P<body>(?:\\.|[^\]\\])+)\])"
    r"|(?P<lit>[A-Za-z0-9_\-:./@#,;=<>!%&'~ ])"
    r"|\\(?P<esc>[.$^*+?()\[\]{}|\\/-])"
)
_QUANT: Final = re.compile(r"\*|\+|\?|\{(\d{1,4})(,(\d{0,4}))?\}")


def _pattern(pattern: str) -> str | None:
    """A GBNF sequence for an anchored simple ``pattern``, or None outside the subset."""
    if not (pattern.startswith("^") and pattern.endswith("$")) or pattern.endswith("\\$"):
        return None
    text, position, parts = pattern[1:-1], 0, []
    while position < len(text):
        atom = _ATOM.match(text, position)
        if atom is None:
            return None
        position = atom.end()
        if atom.group("cls"):
            if atom.group("neg"):
                return None
            expression = _class(atom.group("body"))
            if expression is None:
                return None
        else:
            expression = _literal(atom.group("lit") or atom.group("esc"))
        quantifier = _QUANT.match(text, position)
        if quantifier:
            position = quantifier.end()
            q = quantifier.group(0)
            if q[0] == "{":
                low = int(quantifier.group(1))
                high = low if quantifier.group(2) is None else quantifier.group(3)
                high = int(high) if high not in ("", None) else None
                if low > MAX_REPEAT or (high is not None and high > MAX_REPEAT):
                    return None
                expression = _repeat(expression, low, high) or '""'
            else:
                expression += q
        parts.append(expression)
    return " ".join(parts) if parts else '""'


def _class(body: str) -> str | None:
    """A GBNF class for a regex class body of characters, ranges and escapes.

    llama.cpp's class syntax escapes only ``\\``, ``"``, ``[`` and ``]``: a
    literal ``-`` goes last and a ``^`` never first."""
    tokens: list[tuple[str, bool]] = []  # (character, written escaped)
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            if i + 1 >= len(body) or body[i + 1] not in ".$^*+?()[]{}|\\/-":
                return None  # \d, \w, \s and the like: outside the subset
            tokens.append((body[i + 1], True))
            i += 2
        else:
            tokens.append((ch, False))
            i += 1
    ranges, singles = [], []
    j = 0
    while j < len(tokens):
        if j + 2 < len(tokens) and tokens[j + 1] == ("-", False):
            ranges.append((tokens[j][0], tokens[j + 2][0]))
            j += 3
        else:
            singles.append(tokens[j][0])
            j += 1
    if any(c in '"' or ord(c) < 0x20 for pair in ranges for c in pair):
        return None
    if any(c == '"' or ord(c) < 0x20 for c in singles):
        return None
    text = "".join(f"{_class_char(a)}-{_class_char(b)}" for a, b in ranges)
    text += "".join(_class_char(c) for c in singles if c not in "-^")
    if "^" in singles:
        if not text:
            return None
        text += "^"
    if "-" in singles:
        text += "-"
    return f"[{text}]" if text else None


def _class_char(ch: str) -> str:
    return "\\" + ch if ch in "\\[]" else ch


__all__ = ["MAX_REPEAT", "schema_grammar"]
