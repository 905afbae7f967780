"""Lists derived from another are generated from it, and checked for drift."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# investigation-response-v1 as stored answers were checked against: it must not change.
RESPONSE_V1_SHA256 = "530dde8800b30e161977d99a8d595a8f80ec399c23e9c3e07923e3b3a512c210"


def _sync_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("sync_schemas", REPO / "scripts/sync_schemas.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_embedded_project_query_copies_are_in_step() -> None:
    assert _sync_module().derived_drift() == []


def test_investigation_response_v1_is_unchanged() -> None:
    data = (REPO / "schemas/investigation-response-v1.schema.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == RESPONSE_V1_SHA256


def test_a_drifted_embedded_copy_is_found_and_regenerated(tmp_path: Path) -> None:
    sync = _sync_module()
    for name in ("project-query-v1", "investigation-response-v1"):
        (tmp_path / f"{name}.schema.json").write_bytes(
            (REPO / f"schemas/{name}.schema.json").read_bytes()
        )
    query = json.loads((tmp_path / "project-query-v1.schema.json").read_text())
    query["properties"]["kind"]["enum"].append("source.new_kind")
    (tmp_path / "project-query-v1.schema.json").write_text(
        json.dumps(query, indent=2, ensure_ascii=False) + "\n"
    )
    stale = sync.derived_drift(tmp_path)
    assert [path.name for path, _text in stale] == ["investigation-response-v1.schema.json"]
    regenerated = json.loads(stale[0][1])
    assert regenerated["$defs"]["project-query-v1"] == query
