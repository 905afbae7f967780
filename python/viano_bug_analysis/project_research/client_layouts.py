"""Client data layouts derived from the engine's own source at the pinned commit.

Nothing here is a copied table. A profile's ``client_data.toml`` names, per
client file, the engine's format string (``SpellEntryfmt`` in ``DBCfmt.h``),
the struct the loader fills (``SpellEntry`` in ``DBCStructure.h``) and the
struct members it exposes, each with the file column the profile expects.
This module reads those headers (through a ``read_text(path)`` callable: the
git provider at the pinned commit) and derives each member's column: the
loader copies every format letter except ``x``, ``X`` and ``d`` into the
struct, in order, so the k-th struct slot is the k-th kept letter (an array
member ``T m[N]`` takes N slots, ``flag96`` three, ``DBCPosition2D/3D`` two
and three).

``check_layouts`` is the profile check: a member the struct no longer has,
a member whose derived column differs from the profile's (a shifted
member), or a member whose type does not fit its format letter is reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viano_bug_analysis.files import load_toml_file
from viano_bug_analysis.project_research.errors import ResearchError

ReadText = Callable[[str], str]

PROFILE_SCHEMA = "client-data-profile-v1"
MAX_PROFILE_BYTES = 1 << 20
# Letters the loader does not copy into the struct (DBCFileLoader::AutoProduceData).
NOT_IN_STRUCT = frozenset("xXd")
# Struct types of more than one slot.
_TYPE_SLOTS = {"flag96": 3, "DBCPosition2D": 2, "DBCPosition3D": 3, "DBCPosition4D": 4}
_FORMAT = re.compile(
    r"(?:char\s+const|const\s+char|const\s+std::string)\s+(\w+)(?:\[\])?\s*=\s*\"([^\"\n]*)\"\s*;"
)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+(\d+)\b", re.MULTILINE)
_MEMBER = re.compile(
    r"^(?:const\s+)?(?P<type>[A-Za-z_][\w:]*(?:\s+const)?\s*\**)\s*(?P<name>[A-Za-z_]\w*)"
    r"\s*(?P<dims>(?:\[\s*\w+\s*\]\s*)*)$"
)
_TYPE_LETTERS = {
    "s": ("char", "LocalizedString"),
    "f": ("float",),
    "i": ("uint32", "int32", "flag96", "DBCPosition"),
    "n": ("uint32", "int32"),
    "b": ("uint8", "int8", "bool"),
    "l": ("uint64", "int64", "bool"),
}


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    type: str
    slot: int  # the first struct slot it occupies
    slots: int | None  # None: its width is not resolvable from the source


@dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str  # the name the answers use
    member: str  # the engine's struct member
    column: int  # the file column the profile expects


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One client file as the profile declares it."""

    table: str
    file: str
    format_path: str
    format_symbol: str
    struct_path: str
    struct_symbol: str
    fields: tuple[FieldSpec, ...]
    name_field: str | None = None
    override_table: str | None = None
    override_format: str | None = None
    override_index: str | None = None


@dataclass(frozen=True, slots=True)
class EnumSpec:
    name: str  # "effect", "aura"
    path: str
    symbol: str


@dataclass(frozen=True, slots=True)
class ClientProfile:
    tables: Mapping[str, TableSpec]
    enums: Mapping[str, EnumSpec]
    field_enums: Mapping[tuple[str, str], str]  # (table, field) -> enum name


@dataclass(frozen=True, slots=True)
class Layout:
    """A table's layout at the pinned commit."""

    spec: TableSpec
    format: str
    columns: Mapping[str, int]  # field name -> file column
    signed: frozenset[str]  # fields whose member is a signed integer
    override_format: str | None


def _invalid(problem: str, key: str) -> ResearchError:
    return ResearchError(
        "config_invalid", f"client data profile key {key!r} {problem}", {"key": key}
    )


def _refused(reason: str, message: str, details: dict[str, Any]) -> ResearchError:
    return ResearchError(
        "config_invalid", message, {"key": details.get("key", ""), "reason": reason}
    )


def load_client_profile(path: Path) -> ClientProfile:
    """Reads a ``client_data.toml`` (schema ``client-data-profile-v1``, the one TOML loader)."""
    document = load_toml_file(
        path,
        schema=PROFILE_SCHEMA,
        max_bytes=MAX_PROFILE_BYTES,
        what="the client data profile",
        refuse=_refused,
    )
    tables: dict[str, TableSpec] = {}
    field_enums: dict[tuple[str, str], str] = {}
    enums = {
        name: EnumSpec(name, raw["path"], raw["enum"])
        for name, raw in document.get("enums", {}).items()
    }
    for name, raw in document["tables"].items():
        fields = []
        for field_name, field in raw["fields"].items():
            fields.append(FieldSpec(field_name, field["member"], field["column"]))
            if "enum" in field:
                if field["enum"] not in enums:
                    raise _invalid(
                        "names no enum of [enums]", f"tables.{name}.fields.{field_name}.enum"
                    )
                field_enums[(name, field_name)] = field["enum"]
        if raw.get("name_field") is not None and raw["name_field"] not in raw["fields"]:
            raise _invalid("must be one of the table's fields", f"tables.{name}.name_field")
        override = raw.get("override", {})
        tables[name] = TableSpec(
            table=name,
            file=raw["file"],
            format_path=raw["format_path"],
            format_symbol=raw["format"],
            struct_path=raw["struct_path"],
            struct_symbol=raw["struct"],
            fields=tuple(fields),
            name_field=raw.get("name_field"),
            override_table=override.get("table"),
            override_format=override.get("format"),
            override_index=override.get("index"),
        )
    return ClientProfile(tables, enums, field_enums)


# --- parsing the engine's headers ----------------------------------------------------------


def strip_comments(text: str) -> str:
    """``text`` without its ``//`` and ``/* */`` comments, in one pass (an unclosed
    ``/*`` ends the text). String literals are kept whole: a ``//`` inside one is text."""
    out: list[str] = []
    at = 0
    # The next position of each opener, found again only once passed: linear in the text.
    next_at = {opener: -1 for opener in ("//", "/*", '"')}
    while True:
        for opener, position in next_at.items():
            if 0 <= position < at or position == -1:
                found = text.find(opener, at)
                next_at[opener] = found if found >= 0 else len(text)
        start = min(next_at.values())
        out.append(text[at:start])
        if start >= len(text):
            return "".join(out)
        if text.startswith('"', start):
            end = text.find('"', start + 1)
            end = len(text) if end < 0 else end + 1
            out.append(text[start:end])
        elif text.startswith("//", start):
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
        else:
            end = text.find("*/", start + 2)
            end = len(text) if end < 0 else end + 2
            out.append(" ")
        at = end


def format_strings(text: str) -> dict[str, str]:
    """Every ``char const Xfmt[] = "..."`` / ``const std::string X = "..."`` of a header."""
    uncommented = strip_comments(text)
    return {m.group(1): m.group(2) for m in _FORMAT.finditer(uncommented)}


def _body(text: str, keyword: str, symbol: str) -> str | None:
    """The text between the braces of ``<keyword> <symbol> ... { ... }``."""
    match = re.search(rf"\b{keyword}\s+{re.escape(symbol)}\b[^;{{]*\{{", text)
    if match is None:
        return None
    depth, start = 1, match.end()
    for index in range(start, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start:index]
    return None


def struct_members(text: str, symbol: str) -> list[Member] | None:
    """The data members of ``struct symbol`` in order with their slots (None: no such struct)."""
    body = _body(strip_comments(text), "struct", symbol)
    if body is None:
        return None
    constants = {name: int(value) for name, value in _DEFINE.findall(text)}
    members: list[Member] = []
    slot: int | None = 0
    statement: list[str] = []
    depth = 0
    for char in body:
        if char == "{":
            depth += 1
            statement = []  # a function body: what came before was its signature
        elif char == "}":
            depth -= 1
        elif depth == 0 and char == ";":
            member = _member(" ".join("".join(statement).split()), constants)
            statement = []
            if member is not None:
                name, type_, slots = member
                members.append(Member(name, type_, slot if slot is not None else -1, slots))
                slot = None if slot is None or slots is None else slot + slots
        elif depth == 0:
            statement.append(char)
    return members


def _member(statement: str, constants: Mapping[str, int]) -> tuple[str, str, int | None] | None:
    if not statement or "(" in statement or statement.startswith(("static ", "typedef ", "using ")):
        return None
    match = _MEMBER.match(statement)
    if match is None:
        return None
    type_ = match.group("type").replace(" ", "")
    base = type_.rstrip("*").removesuffix("const")
    slots: int | None = 1 if "*" in type_ else _TYPE_SLOTS.get(base, 1)
    for dim in re.findall(r"\[\s*(\w+)\s*\]", match.group("dims")):
        count = int(dim) if dim.isdigit() else constants.get(dim)
        slots = None if count is None or slots is None else slots * count
    return match.group("name"), type_, slots


def enum_values(text: str, symbol: str) -> dict[int, str] | None:
    """``value -> name`` of ``enum symbol`` (implicit values counted like the compiler)."""
    body = _body(strip_comments(text), "enum", symbol)
    if body is None:
        return None
    names: dict[int, str] = {}
    next_value = 0
    for item in body.split(","):
        match = re.match(r"\s*([A-Za-z_]\w*)\s*(?:=\s*(-?(?:0x[0-9A-Fa-f]+|\d+))\s*)?$", item)
        if match is None:
            continue
        if match.group(2) is not None:
            next_value = int(match.group(2), 0)
        names.setdefault(next_value, match.group(1))
        next_value += 1
    return names


def struct_columns(format_string: str) -> list[int]:
    """The file column of each struct slot: the format's letters the loader keeps."""
    return [index for index, letter in enumerate(format_string) if letter not in NOT_IN_STRUCT]


# --- layouts and the check -----------------------------------------------------------------


def _problems_and_layout(
    spec: TableSpec, read_text: ReadText
) -> tuple[list[dict[str, Any]], Layout | None]:
    problems: list[dict[str, Any]] = []
    where = {"table": spec.table, "file": spec.file}
    texts = {}
    for path in (spec.format_path, spec.struct_path):
        try:
            texts[path] = read_text(path)
        except ResearchError as err:
            if err.code not in ("path_not_found", "path_not_readable"):
                raise
            return [{**where, "problem": "source_file_missing", "path": path}], None
    formats = format_strings(texts[spec.format_path])
    fmt = formats.get(spec.format_symbol)
    if fmt is None:
        return [{**where, "problem": "format_missing", "symbol": spec.format_symbol}], None
    members = struct_members(texts[spec.struct_path], spec.struct_symbol)
    if members is None:
        return [{**where, "problem": "struct_missing", "symbol": spec.struct_symbol}], None
    by_name = {m.name: m for m in members}
    slots = struct_columns(fmt)
    columns: dict[str, int] = {}
    signed = set()
    for field in spec.fields:
        at = {**where, "field": field.name, "member": f"{spec.struct_symbol}::{field.member}"}
        member = by_name.get(field.member)
        if member is None:
            problems.append({**at, "problem": "member_missing"})
            continue
        if member.slot < 0 or member.slot >= len(slots):
            problems.append({**at, "problem": "member_not_placeable"})
            continue
        column = slots[member.slot]
        letter = fmt[column]
        if column != field.column:
            problems.append(
                {**at, "problem": "member_shifted", "expected": field.column, "found": column}
            )
        if not any(
            member.type.startswith(t) or t in member.type for t in _TYPE_LETTERS.get(letter, ())
        ):
            problems.append(
                {**at, "problem": "type_mismatch", "letter": letter, "type": member.type}
            )
        columns[field.name] = column
        if member.type.startswith("int"):
            signed.add(field.name)
    override = formats.get(spec.override_format) if spec.override_format else None
    if spec.override_format and override is None:
        problems.append({**where, "problem": "format_missing", "symbol": spec.override_format})
    return problems, Layout(spec, fmt, columns, frozenset(signed), override)


def derive_layout(spec: TableSpec, read_text: ReadText) -> Layout:
    """The layout of ``spec`` at the pinned commit; refused where source and profile differ."""
    problems, layout = _problems_and_layout(spec, read_text)
    if problems or layout is None:
        first = problems[0]
        raise ResearchError(
            "provider_result_invalid",
            f"the engine source at the pinned commit does not match the profile's layout of "
            f"{spec.file} ({first['problem']}); run vba profile check",
            {k: v for k, v in first.items() if k != "file"},
        )
    return layout


def check_layouts(profile: ClientProfile, read_text: ReadText) -> dict[str, Any]:
    """``vba profile check``'s client data section: every table's members against the source."""
    problems: list[dict[str, Any]] = []
    tables = {}
    for spec in profile.tables.values():
        found, layout = _problems_and_layout(spec, read_text)
        problems += found
        tables[spec.table] = {
            "file": spec.file,
            "format": layout.format if layout else None,
            "columns": dict(layout.columns) if layout else {},
            "ok": not found,
        }
    for enum in profile.enums.values():
        try:
            text = read_text(enum.path)
        except ResearchError as err:
            if err.code not in ("path_not_found", "path_not_readable"):
                raise
            text = ""
        if enum_values(text, enum.symbol) is None:
            problems.append({"enum": enum.name, "problem": "enum_missing", "symbol": enum.symbol})
    return {"ok": not problems, "tables": tables, "problems": problems}


def check_lines(report: Mapping[str, Any]) -> list[str]:
    """The client data section of the check, for people."""
    lines = ["client data layouts (engine source at the pinned commit):"]
    for table, entry in report["tables"].items():
        state = "ok" if entry["ok"] else "MISMATCH"
        lines.append(f"  {table} ({entry['file']}): {state}")
    for problem in report["problems"]:
        detail = ", ".join(f"{k}={v}" for k, v in problem.items() if k != "problem")
        lines.append(f"  - {problem['problem']}: {detail}")
    return lines


def source_reader(git: Any, page: int = 200) -> ReadText:
    """``read_text`` over a git provider's ``read`` (whole files, ``page`` lines a call, cached)."""
    cache: dict[str, str] = {}

    def read_text(path: str) -> str:
        if path not in cache:
            first = git.read(path=path, start_line=1, end_line=1)
            total = int(first["line_count"])
            lines: list[str] = []
            for start in range(1, total + 1, page):
                answer = git.read(
                    path=path, start_line=start, end_line=min(total, start + page - 1)
                )
                lines += [line["text"] for line in answer["lines"]]
            cache[path] = "\n".join(lines)
        return cache[path]

    return read_text
