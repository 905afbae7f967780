"""The bundled schema loader and its strict ``pattern`` keyword."""

from __future__ import annotations

import pytest

from viano_bug_analysis.errors import InvalidArgumentError
from viano_bug_analysis.schemas import available_schemas, load_schema, schema_validator

CASE_SCHEMAS = ("case-manifest-v1", "case-v1", "case-spec-v1")


def test_case_schemas_are_bundled() -> None:
    assert set(CASE_SCHEMAS) <= set(available_schemas())
    for name in CASE_SCHEMAS:
        schema = load_schema(name)
        assert schema["title"] == name
        assert schema["$id"].endswith(f"/{name}.schema.json")


def test_load_schema_returns_a_fresh_copy() -> None:
    first = load_schema("case-v1")
    first["title"] = "changed"
    assert load_schema("case-v1")["title"] == "case-v1"


def test_schema_validator_is_shared() -> None:
    assert schema_validator("case-v1") is schema_validator("case-v1")


@pytest.mark.parametrize("name", ["../case-v1", "case-v1.schema.json", "Case-V1", "nope", "", 3])
def test_bad_names_are_refused(name: object) -> None:
    with pytest.raises(InvalidArgumentError):
        load_schema(name)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        schema_validator(name)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "valid"),
    [("H1", True), ("H120", True), ("H1\n", False), ("\nH1", False), ("H0", False), ("xH1", False)],
)
def test_dollar_anchors_at_the_very_end(value: str, valid: bool) -> None:
    validator = schema_validator("case-v1")
    hypothesis = {"id": value, "statement": "s"}
    sub = {"$ref": "#/$defs/hypothesis", "$defs": load_schema("case-v1")["$defs"]}
    assert validator.evolve(schema=sub).is_valid(hypothesis) is valid


def test_pattern_errors_do_not_quote_the_instance() -> None:
    validator = schema_validator("case-manifest-v1")
    errors = list(validator.iter_errors({"package_id": "pkg-SECRET\n"}))
    assert errors
    assert all("SECRET" not in error.message for error in errors if error.validator == "pattern")
