"""A small GBNF recognizer for the tests: does a grammar admit a whole text?

Written from llama.cpp's grammar format (rules ``name ::= alternatives``;
string literals, character classes with ranges and ``^``, rule references,
groups, ``*`` ``+`` ``?`` ``{m}`` ``{m,}`` ``{m,n}``; one rule per line). The
recognizer computes, for every (node, position), the set of positions where a
match of the node can end, memoized, so ambiguity costs sets, not
backtracking. It parses strictly: anything it does not know is an error, so a
grammar llama.cpp would misread (an empty alternative at the end of a line,
which llama.cpp's parser runs into the next line) fails here too.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

_NAME = re.compile(r"[a-zA-Z0-9-]+")


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Cls:
    ranges: tuple[tuple[str, str], ...]
    negated: bool


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    node: Node
    low: int
    high: int | None


Node = Lit | Cls | Ref | Seq | Alt | Rep


class GrammarSyntaxError(ValueError):
    pass


def parse(text: str) -> dict[str, Node]:
    rules: dict[str, Node] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, sep, body = line.partition(" ::= ")
        if not sep or not _NAME.fullmatch(name):
            raise GrammarSyntaxError(f"line {number}: not a rule")
        if body.rstrip().endswith("|"):
            raise GrammarSyntaxError(f"line {number}: an empty alternative at the line end")
        if name in rules:
            raise GrammarSyntaxError(f"line {number}: {name} defined twice")
        parser = _Parser(body)
        rules[name] = parser.alternatives()
        if parser.pos != len(body):
            raise GrammarSyntaxError(f"line {number}: unexpected {body[parser.pos :][:20]!r}")
    for node in rules.values():
        _check_refs(node, rules)
    if "root" not in rules:
        raise GrammarSyntaxError("no root rule")
    return rules


def _check_refs(node: Node, rules: dict[str, Node]) -> None:
    if isinstance(node, Ref) and node.name not in rules:
        raise GrammarSyntaxError(f"undefined rule {node.name}")
    for child in _children(node):
        _check_refs(child, rules)


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Seq):
        return node.items
    if isinstance(node, Alt):
        return node.options
    if isinstance(node, Rep):
        return (node.node,)
    return ()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def alternatives(self) -> Node:
        options = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def peek(self) -> str:
        self.space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def sequence(self) -> Node:
        items: list[Node] = []
        while self.peek() not in ("", "|", ")"):
            items.append(self.quantified(self.atom()))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def atom(self) -> Node:
        ch = self.peek()
        if ch == '"':
            self.pos += 1
            chars = []
            while self.text[self.pos] != '"':
                chars.append(self.char())
            self.pos += 1
            return Lit("".join(chars))
        if ch == "[":
            self.pos += 1
            negated = self.text[self.pos] == "^"
            self.pos += negated
            ranges = []
            while self.text[self.pos] != "]":
                low = self.char()
                high = low
                if self.text[self.pos] == "-" and self.text[self.pos + 1] != "]":
                    self.pos += 1
                    high = self.char()
                ranges.append((low, high))
            self.pos += 1
            return Cls(tuple(ranges), negated)
        if ch == "(":
            self.pos += 1
            inner = self.alternatives()
            if self.peek() != ")":
                raise GrammarSyntaxError("unclosed group")
            self.pos += 1
            return inner
        match = _NAME.match(self.text, self.pos)
        if match is None:
            raise GrammarSyntaxError(f"unexpected {self.text[self.pos :][:20]!r}")
        self.pos = match.end()
        return Ref(match.group(0))

    def char(self) -> str:
        ch = self.text[self.pos]
        if ch != "\\":
            self.pos += 1
            return ch
        escape = self.text[self.pos + 1]
        self.pos += 2
        simple = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]"}
        if escape in simple:
            return simple[escape]
        width = {"x": 2, "u": 4}.get(escape)
        if width is None:
            raise GrammarSyntaxError(f"unknown escape \\{escape}")
        digits = self.text[self.pos : self.pos + width]
        self.pos += width
        return chr(int(digits, 16))

    def quantified(self, node: Node) -> Node:
        if self.pos >= len(self.text):
            return node
        ch = self.text[self.pos]
        if ch in "*+?":
            self.pos += 1
            return Rep(node, 1 if ch == "+" else 0, 1 if ch == "?" else None)
        match = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.text, self.pos)
        if match is None:
            return node
        self.pos = match.end()
        low = int(match.group(1))
        if match.group(2) is None:
            return Rep(node, low, low)
        return Rep(node, low, int(match.group(3)) if match.group(3) else None)


def admits(grammar: str | dict[str, Node], text: str) -> bool:
    """Whether the grammar's ``root`` matches all of ``text``."""
    rules = parse(grammar) if isinstance(grammar, str) else grammar
    memo: dict[tuple[int, int], frozenset[int]] = {}
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        return len(text) in _ends(rules["root"], text, 0, rules, memo)
    finally:
        sys.setrecursionlimit(limit)


def _ends(
    node: Node,
    text: str,
    pos: int,
    rules: dict[str, Node],
    memo: dict[tuple[int, int], frozenset[int]],
) -> frozenset[int]:
    key = (id(node), pos)
    if key in memo:
        return memo[key]
    memo[key] = frozenset()  # no left recursion in what we write; guards a cycle anyway
    result: set[int] = set()
    if isinstance(node, Lit):
        if text.startswith(node.text, pos):
            result.add(pos + len(node.text))
    elif isinstance(node, Cls):
        if pos < len(text):
            inside = any(low <= text[pos] <= high for low, high in node.ranges)
            if inside != node.negated:
                result.add(pos + 1)
    elif isinstance(node, Ref):
        result |= _ends(rules[node.name], text, pos, rules, memo)
    elif isinstance(node, Seq):
        here = {pos}
        for item in node.items:
            here = {end for p in here for end in _ends(item, text, p, rules, memo)}
            if not here:
                break
        result |= here
    elif isinstance(node, Alt):
        for option in node.options:
            result |= _ends(option, text, pos, rules, memo)
    else:
        frontier, seen, count = {pos}, {pos}, 0
        if node.low == 0:
            result.add(pos)
        while frontier and (node.high is None or count < node.high):
            count += 1
            frontier = {end for p in frontier for end in _ends(node.node, text, p, rules, memo)}
            if count >= node.low:
                result |= frontier
            if node.high is None:
                frontier -= seen
                seen |= frontier
    memo[key] = frozenset(result)
    return memo[key]
