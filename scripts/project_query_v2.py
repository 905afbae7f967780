"""Write schemas/project-query-v2.schema.json (project-query-v1 plus source.search's optional
whole_word and the client.records kind)
and schemas/mcp-client-records-arguments-v1.schema.json (that kind's arguments as vba mcp's
client_records tool takes them).

    python scripts/project_query_v2.py           # (re)write the files
    python scripts/project_query_v2.py --check   # exit 1 if a file differs from what it would be

Version 1 stays as it is: stored interpretation prompts list its kinds and
must rebuild byte for byte. Version 2 is derived from it, never edited by
hand, so the two cannot drift apart (tests/schemas/test_project_query_v2.py
runs --check). Run scripts/sync_schemas.py afterwards.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
V1 = ROOT / "schemas" / "project-query-v1.schema.json"
V2 = ROOT / "schemas" / "project-query-v2.schema.json"
MCP = ROOT / "schemas" / "mcp-client-records-arguments-v1.schema.json"
KIND = "client.records"

_ID_LIST = {
    "type": "array",
    "minItems": 1,
    "maxItems": 100,
    "uniqueItems": True,
    "items": {"type": "integer", "minimum": -2147483648, "maximum": 4294967295},
}
CLIENT_RECORDS: dict[str, Any] = {
    "description": (
        "Records of the server's client data files (DBC/DB2; docs/client-data.md) of one "
        "table the profile names (spell, spell_effect, item, area, map, faction, ...): by ID "
        "(ids), by exact name ignoring case (name), or by an integer field (field + values, "
        "e.g. spell_effect by spell_id). A spell record carries its effects with the "
        "engine's effect and aura names. The world DB's override rows are merged the way "
        "the engine merges them."
    ),
    "type": "object",
    "additionalProperties": False,
    "required": ["kind", "table", "offset", "limit"],
    "properties": {
        "kind": {"const": KIND},
        "table": {"$ref": "#/$defs/identifier"},
        "ids": _ID_LIST,
        "name": {
            "type": "string",
            "minLength": 1,
            "maxLength": 256,
            "pattern": "^[^\\r\\n\\u0000]+$",
        },
        "field": {"$ref": "#/$defs/identifier"},
        "values": _ID_LIST,
        "offset": {"$ref": "#/$defs/offset"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "oneOf": [
        {"required": ["ids"], "not": {"anyOf": [{"required": ["name"]}, {"required": ["field"]}]}},
        {"required": ["name"], "not": {"anyOf": [{"required": ["ids"]}, {"required": ["field"]}]}},
        {
            "required": ["field", "values"],
            "not": {"anyOf": [{"required": ["ids"]}, {"required": ["name"]}]},
        },
    ],
}


_WHOLE_WORD_SEARCH = (
    "Lines containing text literally, optionally below a path prefix; with whole_word true "
    "only lines where text (then letters, digits and _ only) stands as a whole word: the "
    "characters on both sides are not letters, digits or _, so a numeric ID does not match "
    "inside a longer number."
)
_WHOLE_WORD = {
    "description": (
        "Match only at token boundaries (the source.symbol rule, digits first allowed); "
        "default false."
    ),
    "type": "boolean",
}
_SYMBOL_HINT = (
    " A symbol starts with a letter or _: for a word that starts with a digit (a numeric ID) "
    "use source.search with whole_word true."
)


def _with_whole_word(queries: dict[str, Any]) -> None:
    search = queries["source.search"]
    search["description"] = _WHOLE_WORD_SEARCH
    # After case_sensitive, so the properties read in the order a query is written.
    properties = list(search["properties"].items())
    at = [name for name, _ in properties].index("case_sensitive") + 1
    search["properties"] = dict([*properties[:at], ("whole_word", _WHOLE_WORD), *properties[at:]])
    search["allOf"] = [
        {
            "if": {"properties": {"whole_word": {"const": True}}, "required": ["whole_word"]},
            "then": {"properties": {"text": {"$ref": "#/$defs/term"}}},
        }
    ]
    queries["source.symbol"]["description"] += _SYMBOL_HINT


def build() -> str:
    schema = json.loads(V1.read_text(encoding="utf-8"))
    _with_whole_word(schema["$defs"]["query"])
    schema["$id"] = schema["$id"].replace("project-query-v1", "project-query-v2")
    schema["title"] = "project-query-v2"
    schema["description"] = (
        schema["description"]
        + " Version 2 is version 1 plus source.search's optional whole_word and the "
        "client.records kind (scripts/project_query_v2.py); every version 1 query is a "
        "version 2 query with the same answer."
    )
    schema["properties"]["kind"]["enum"].append(KIND)
    schema["allOf"].append(
        {
            "if": {"properties": {"kind": {"const": KIND}}, "required": ["kind"]},
            "then": {"$ref": f"#/$defs/query/{KIND}"},
        }
    )
    schema["$defs"]["query"][KIND] = CLIENT_RECORDS
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def build_mcp_arguments() -> str:
    v1 = json.loads(V1.read_text(encoding="utf-8"))
    arguments = json.loads(json.dumps(CLIENT_RECORDS))
    del arguments["properties"]["kind"]
    arguments["required"].remove("kind")
    schema = {
        "$schema": v1["$schema"],
        "$id": v1["$id"].replace("project-query-v1", "mcp-client-records-arguments-v1"),
        "title": "mcp-client-records-arguments-v1",
        **arguments,
        "description": "The arguments of the vba mcp tool client_records: a client.records "
        "query of project-query-v2 without its kind. " + arguments["description"],
        "$defs": {name: v1["$defs"][name] for name in ("identifier", "offset")},
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    outputs = {V2: build(), MCP: build_mcp_arguments()}
    if args.check:
        stale = [
            p.name
            for p, text in outputs.items()
            if not p.is_file() or p.read_text(encoding="utf-8") != text
        ]
        for name in stale:
            print(f"{name} is out of date: run scripts/project_query_v2.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
