"""Questions a server asks the user (elicitation): schema → fields → a checked reply.

A server's ``requestedSchema`` is a flat object of primitive properties (string, number,
integer, boolean, single- and multi-select enums). :func:`fields_of` turns it into
:class:`Field` values every face renders (the CLI prompts, the window builds a form);
:func:`parse_text` reads what a person typed for one field; :func:`validate` checks a whole
answer before anything is saved or sent, so an answer the server would refuse never leaves.
The reply shapes (:func:`accept`, :data:`DECLINE`, :data:`CANCEL`) are defined only here.

The schema comes from a server: every string in it is hostile, and a malformed schema is
reported as such rather than trusted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

ELICITATION_METHOD: Final = "elicitation/create"
SAMPLING_METHOD: Final = "sampling/createMessage"

DECLINE: Final[Mapping[str, Any]] = {"action": "decline"}
CANCEL: Final[Mapping[str, Any]] = {"action": "cancel"}

MAX_FIELDS: Final = 100
"""A schema with more properties than this is refused as malformed (no form is that long)."""


def accept(content: Mapping[str, Any]) -> dict[str, Any]:
    """The reply that accepts the form with ``content``."""
    return {"action": "accept", "content": dict(content)}


def decline() -> dict[str, Any]:
    """The reply that says no to the question."""
    return dict(DECLINE)


def cancel() -> dict[str, Any]:
    """The reply that dismisses the question without an answer."""
    return dict(CANCEL)


class FieldKind(StrEnum):
    """How a field is entered."""

    TEXT = "text"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    CHOICE = "choice"
    """One of fixed options."""
    CHOICES = "choices"
    """Any number of fixed options."""


@dataclass(frozen=True, slots=True)
class Option:
    """One allowed value of a choice field, with the label the server gave it."""

    value: str
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Field:
    """One question of a form."""

    name: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    options: tuple[Option, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    """``email``, ``uri``, ``date`` or ``date-time`` for text fields."""
    min_items: int | None = None
    max_items: int | None = None

    @property
    def hint(self) -> str:
        """A short description of what may be entered (for prompts and placeholders)."""
        parts: list[str] = []
        if self.options:
            parts.append(" | ".join(o.value for o in self.options))
        elif self.kind is FieldKind.BOOLEAN:
            parts.append("yes | no")
        elif self.kind in (FieldKind.NUMBER, FieldKind.INTEGER):
            low = "" if self.minimum is None else _number(self.minimum)
            high = "" if self.maximum is None else _number(self.maximum)
            parts.append(f"{self.kind.value} {low}..{high}" if low or high else self.kind.value)
        elif self.format:
            parts.append(self.format)
        if self.default is not None:
            parts.append(f"default {self.default}")
        return ", ".join(parts)


class SchemaError(ValueError):
    """The server's ``requestedSchema`` is not a form Mooring can show."""


@dataclass(frozen=True, slots=True)
class Problem:
    """What is wrong with one field of an answer."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class InvalidAnswer(ValueError):
    """An answer that does not fit the question; nothing was saved or sent."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


@dataclass(frozen=True, slots=True)
class Form:
    """A server's question as fields, with the message that goes with it."""

    message: str
    fields: tuple[Field, ...] = field(default=())


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _options(spec: Mapping[str, Any]) -> tuple[Option, ...]:
    if isinstance(spec.get("enum"), list):
        values = spec["enum"]
        names = spec.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(values) else values
        return tuple(Option(str(v), str(lab)) for v, lab in zip(values, labels, strict=True))
    for key in ("oneOf", "anyOf"):
        items = spec.get(key)
        if isinstance(items, list):
            found = [
                Option(str(item["const"]), str(item.get("title", item["const"])))
                for item in items
                if isinstance(item, dict) and "const" in item
            ]
            if found:
                return tuple(found)
    return ()


def _bound(spec: Mapping[str, Any], key: str) -> float | None:
    value = spec.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _count(spec: Mapping[str, Any], key: str) -> int | None:
    value = spec.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def fields_of(schema: Mapping[str, Any] | None) -> tuple[Field, ...]:
    """The fields of a ``requestedSchema``, in the server's order.

    Raises :class:`SchemaError` for a schema that is not a flat object of primitive fields.
    """
    if not schema:
        return ()
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise SchemaError("the question's schema is not an object")
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping):
        raise SchemaError("the question's schema has no list of fields")
    if len(properties) > MAX_FIELDS:
        raise SchemaError(f"the question has {len(properties)} fields (at most {MAX_FIELDS})")
    required_list = schema.get("required") or []
    required = {str(r) for r in required_list} if isinstance(required_list, list) else set()
    fields: list[Field] = []
    for name, spec in properties.items():
        if not isinstance(spec, Mapping):
            raise SchemaError(f"field {name!r} has no description")
        fields.append(_field(str(name), spec, str(name) in required))
    return tuple(fields)


def _field(name: str, spec: Mapping[str, Any], required: bool) -> Field:
    kind_name = spec.get("type")
    common: dict[str, Any] = {
        "name": name,
        "title": str(spec.get("title") or name),
        "description": str(spec.get("description") or ""),
        "required": required,
        "default": spec.get("default"),
    }
    if kind_name == "array":
        items = spec.get("items")
        options = _options(items) if isinstance(items, Mapping) else ()
        if not options:
            raise SchemaError(f"field {name!r} is a list without fixed options")
        return Field(
            kind=FieldKind.CHOICES,
            options=options,
            min_items=_count(spec, "minItems"),
            max_items=_count(spec, "maxItems"),
            **common,
        )
    options = _options(spec)
    if options:
        return Field(kind=FieldKind.CHOICE, options=options, **common)
    match kind_name:
        case "string":
            fmt = spec.get("format")
            return Field(
                kind=FieldKind.TEXT,
                min_length=_count(spec, "minLength"),
                max_length=_count(spec, "maxLength"),
                format=str(fmt) if isinstance(fmt, str) else None,
                **common,
            )
        case "number" | "integer":
            return Field(
                kind=FieldKind.NUMBER if kind_name == "number" else FieldKind.INTEGER,
                minimum=_bound(spec, "minimum"),
                maximum=_bound(spec, "maximum"),
                **common,
            )
        case "boolean":
            return Field(kind=FieldKind.BOOLEAN, **common)
    raise SchemaError(f"field {name!r} has an unsupported type {kind_name!r}")


_TRUE = frozenset({"y", "yes", "true", "1", "on"})
_FALSE = frozenset({"n", "no", "false", "0", "off"})


def parse_text(item: Field, raw: str) -> Any:
    """What a person typed for ``item``, as the value the schema wants.

    Raises :class:`InvalidAnswer` when the text cannot be that kind of value. Choices may be
    typed by value or by label; several choices are separated by commas.
    """
    text = raw.strip()
    try:
        match item.kind:
            case FieldKind.INTEGER:
                return int(text)
            case FieldKind.NUMBER:
                number = float(text)
                if not math.isfinite(number):
                    raise ValueError(text)
                return number
            case FieldKind.BOOLEAN:
                if text.lower() in _TRUE:
                    return True
                if text.lower() in _FALSE:
                    return False
                raise ValueError(text)
            case FieldKind.CHOICE:
                return _choice(item, text)
            case FieldKind.CHOICES:
                return [_choice(item, part.strip()) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise InvalidAnswer([Problem(item.name, f"{text!r} is not {_expected(item)}")]) from exc
    return raw


def _choice(item: Field, text: str) -> str:
    for option in item.options:
        if text in (option.value, option.label):
            return option.value
    raise ValueError(text)


def _expected(item: Field) -> str:
    match item.kind:
        case FieldKind.INTEGER:
            return "a whole number"
        case FieldKind.NUMBER:
            return "a number"
        case FieldKind.BOOLEAN:
            return "yes or no"
        case FieldKind.CHOICE | FieldKind.CHOICES:
            return "one of " + ", ".join(o.value for o in item.options)
    return "text"


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$"
)


def _problem(item: Field, value: Any) -> str | None:
    match item.kind:
        case FieldKind.TEXT:
            if not isinstance(value, str):
                return "must be text"
            if item.min_length is not None and len(value) < item.min_length:
                return f"must be at least {item.min_length} characters"
            if item.max_length is not None and len(value) > item.max_length:
                return f"must be at most {item.max_length} characters"
            if item.format == "email" and not _EMAIL.match(value):
                return "must be an email address"
            if item.format == "uri" and ":" not in value:
                return "must be a URI"
            if item.format == "date" and not _DATE.match(value):
                return "must be a date (YYYY-MM-DD)"
            if item.format == "date-time" and not _DATE_TIME.match(value):
                return "must be a date and time (YYYY-MM-DDTHH:MM)"
        case FieldKind.INTEGER | FieldKind.NUMBER:
            if isinstance(value, bool) or not isinstance(value, int | float):
                return f"must be {_expected(item)}"
            if item.kind is FieldKind.INTEGER and not float(value).is_integer():
                return "must be a whole number"
            if item.minimum is not None and value < item.minimum:
                return f"must be at least {_number(item.minimum)}"
            if item.maximum is not None and value > item.maximum:
                return f"must be at most {_number(item.maximum)}"
        case FieldKind.BOOLEAN:
            if not isinstance(value, bool):
                return "must be yes or no"
        case FieldKind.CHOICE:
            if not isinstance(value, str) or value not in {o.value for o in item.options}:
                return f"must be {_expected(item)}"
        case FieldKind.CHOICES:
            allowed = {o.value for o in item.options}
            if not isinstance(value, list) or any(
                not isinstance(v, str) or v not in allowed for v in value
            ):
                return f"must be a list of {', '.join(sorted(allowed))}"
            if item.min_items is not None and len(value) < item.min_items:
                return f"needs at least {item.min_items} choices"
            if item.max_items is not None and len(value) > item.max_items:
                return f"allows at most {item.max_items} choices"
    return None


def validate(fields: Sequence[Field], content: Mapping[str, Any]) -> dict[str, Any]:
    """``content`` checked against ``fields``: every problem at once, or the content to send.

    Unknown fields and missing required ones are problems; an integer given for a number field
    is fine. Raises :class:`InvalidAnswer`.
    """
    known = {f.name: f for f in fields}
    problems = [
        Problem(name, "is not a question of this form") for name in content if name not in known
    ]
    for item in fields:
        if item.name not in content or content[item.name] is None:
            if item.required:
                problems.append(Problem(item.name, "is required"))
            continue
        found = _problem(item, content[item.name])
        if found is not None:
            problems.append(Problem(item.name, found))
    if problems:
        raise InvalidAnswer(problems)
    return {name: value for name, value in content.items() if value is not None}


def check_reply(method: str, params: Mapping[str, Any], reply: Mapping[str, Any]) -> dict[str, Any]:
    """A whole reply to an input request, checked before it is saved.

    For a form (``elicitation/create``): the action must be accept, decline or cancel, and an
    accepted content must fit the requested schema. Other methods' replies must be objects
    (their shapes are the server's business). Raises :class:`InvalidAnswer` or
    :class:`SchemaError`.
    """
    if method != ELICITATION_METHOD:
        return dict(reply)
    action = reply.get("action")
    if action in ("decline", "cancel"):
        return {"action": action}
    if action != "accept":
        raise InvalidAnswer([Problem("action", "must be accept, decline or cancel")])
    content = reply.get("content") or {}
    if not isinstance(content, Mapping):
        raise InvalidAnswer([Problem("content", "must be an object")])
    schema = params.get("requestedSchema")
    checked = validate(fields_of(schema if isinstance(schema, Mapping) else None), content)
    return accept(checked)
