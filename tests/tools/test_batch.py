"""The one batch envelope: what the controller and the demo send is a valid request."""

from __future__ import annotations

from pathlib import Path

from viano_bug_analysis.case.create import create_package
from viano_bug_analysis.schemas import load_schema
from viano_bug_analysis.tools import InvestigationToolRouter
from viano_bug_analysis.tools.batch import REQUEST_FORMAT, request_batch

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "bug-20" / "case-spec.json"


def test_the_format_is_the_schemas() -> None:
    schema = load_schema("investigation-request-v1")
    assert schema["properties"]["format"]["const"] == REQUEST_FORMAT


def test_a_batch_for_the_manifest_passes_preflight(tmp_path: Path) -> None:
    package = create_package(SAMPLE, tmp_path / "package")
    request = {
        "request_id": "Q0001",
        "hypothesis_id": "H1",
        "action_id": "a-1",
        "operation": "source.find_text",
        "arguments": {
            "source_refs": ["src-001"],
            "text": "Wolpertinger",
            "case_sensitive": True,
            "offset": 0,
            "limit": 5,
        },
    }
    batch = request_batch(package.manifest, [request])
    InvestigationToolRouter().preflight(tmp_path / "package", batch)
    assert batch["requests"] == [request] and batch["requests"][0] is not request
