"""A server's question: schema → fields → an answer checked before it is saved or sent."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mooring.core.elicitation import (
    FieldKind,
    InvalidAnswer,
    SchemaError,
    check_reply,
    fields_of,
    parse_text,
    validate,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "column": {
            "type": "string",
            "title": "Supplier id column",
            "enum": ["vendor_code", "supplier_ref"],
            "enumNames": ["Vendor code", "Supplier reference"],
        },
        "rows": {"type": "integer", "minimum": 1, "maximum": 100},
        "ratio": {"type": "number"},
        "confirm": {"type": "boolean", "default": False},
        "email": {"type": "string", "format": "email"},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1},
    },
    "required": ["column"],
}


def test_fields_follow_the_schema_in_order() -> None:
    fields = fields_of(SCHEMA)
    assert [(f.name, f.kind) for f in fields] == [
        ("column", FieldKind.CHOICE),
        ("rows", FieldKind.INTEGER),
        ("ratio", FieldKind.NUMBER),
        ("confirm", FieldKind.BOOLEAN),
        ("email", FieldKind.TEXT),
        ("tags", FieldKind.CHOICES),
    ]
    column = fields[0]
    assert column.required
    assert column.title == "Supplier id column"
    assert [o.label for o in column.options] == ["Vendor code", "Supplier reference"]
    assert fields[3].default is False


def test_an_answer_outside_the_choices_is_refused_with_every_problem() -> None:
    with pytest.raises(InvalidAnswer) as caught:
        validate(fields_of(SCHEMA), {"column": "nope", "rows": 0, "extra": 1})
    problems = {p.field: p.message for p in caught.value.problems}
    assert set(problems) == {"column", "rows", "extra"}
    assert "vendor_code" in problems["column"]


def test_a_missing_required_field_is_refused() -> None:
    with pytest.raises(InvalidAnswer, match="column: is required"):
        validate(fields_of(SCHEMA), {"rows": 5})


def test_a_good_answer_passes_unchanged() -> None:
    answer = {"column": "vendor_code", "rows": 5, "ratio": 2, "tags": ["a"]}
    assert validate(fields_of(SCHEMA), answer) == answer


def test_typed_text_becomes_the_schemas_type() -> None:
    fields = {f.name: f for f in fields_of(SCHEMA)}
    assert parse_text(fields["rows"], " 7 ") == 7
    assert parse_text(fields["confirm"], "yes") is True
    assert parse_text(fields["column"], "Vendor code") == "vendor_code"
    with pytest.raises(InvalidAnswer, match="whole number"):
        parse_text(fields["rows"], "seven")


def test_a_form_reply_is_checked_and_other_replies_pass() -> None:
    params = {"requestedSchema": SCHEMA}
    with pytest.raises(InvalidAnswer):
        check_reply("elicitation/create", params, {"action": "accept", "content": {}})
    assert check_reply("elicitation/create", params, {"action": "decline"}) == {"action": "decline"}
    ok = check_reply(
        "elicitation/create", params, {"action": "accept", "content": {"column": "supplier_ref"}}
    )
    assert ok == {"action": "accept", "content": {"column": "supplier_ref"}}
    assert check_reply("sampling/createMessage", {}, {"x": 1}) == {"x": 1}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array"},
        {"type": "object", "properties": {"x": {"type": "object"}}},
        {"type": "object", "properties": {"x": "not a field"}},
        {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(101)}},
    ],
)
def test_a_schema_that_is_not_a_flat_form_is_reported(schema: dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        fields_of(schema)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), st.lists, max_leaves=5))
def test_any_value_is_either_accepted_or_refused_in_words(value: object) -> None:
    fields = fields_of(SCHEMA)
    problems: list[str] = []
    try:
        validate(fields, {"column": value})
    except InvalidAnswer as exc:
        problems.append(str(exc))
    assert problems == [] if value in ("vendor_code", "supplier_ref") else problems[0]
