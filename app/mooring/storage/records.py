"""How a task record's fields map to the ``task_records`` columns: the one mapping, shared by the
SQLAlchemy repositories and the plain-``sqlite3`` read path (:mod:`mooring.storage.reader`).

Kept free of SQLAlchemy so a read-only command can load it cheaply.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState, TaskFlag
from mooring.core.tasks.wire import TaskWire

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Columns(Protocol):
        """A result row by column name (SQLAlchemy's ``RowMapping``, ``sqlite3.Row``)."""

        def __getitem__(self, name: str, /) -> Any: ...


# A task record's fields map to the columns of the same names, in one place: a new field needs
# the dataclass field, the column and a migration, and nothing here unless it needs converting.
RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(TaskRecord))
TO_COLUMN: dict[str, Callable[[Any], Any]] = {
    "state": lambda state: state.value,
    "flags": lambda flags: sorted(f.value for f in flags),
    "wire": lambda wire: wire.value if wire is not None else None,
}
FROM_COLUMN: dict[str, Callable[[Any], Any]] = {
    "state": LocalState,
    "flags": lambda values: frozenset(TaskFlag(f) for f in values),
    "wire": lambda value: TaskWire(value) if value is not None else None,
}


def utc_text(value: datetime | None) -> str | None:
    """An aware datetime as stored: ISO 8601 text in UTC, to the microsecond."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetimes are not stored: pass an aware UTC datetime")
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def utc_from_text(value: Any) -> datetime | None:
    """A stored timestamp (ISO 8601 text) as an aware UTC datetime."""
    if value is None:
        return None
    return datetime.fromisoformat(str(value)).astimezone(UTC)


def driver_values(
    row: sqlite3.Row, *, times: Sequence[str] = (), json_columns: Sequence[str] = ()
) -> dict[str, Any]:
    """A plain ``sqlite3`` row's values decoded as the column types would (for the hot reads
    on the driver connection): ``times`` (``UtcDateTime``) as aware datetimes, ``json_columns``
    (``JSON``) parsed; SQL NULL stays ``None``."""
    values = dict(zip(row.keys(), row, strict=True))
    for name in times:
        values[name] = utc_from_text(values[name])
    for name in json_columns:
        values[name] = _json(values[name])
    return values


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def _bool(value: Any) -> bool:
    return bool(value)


def _stored_as(field: dataclasses.Field[Any]) -> Callable[[Any], Any] | None:
    # What SQLAlchemy's column types do on reading (UtcDateTime, JSON, Boolean), derived from
    # the record's own annotations so the raw read path needs no list of its own.
    kind = str(field.type)
    if kind.startswith("datetime"):
        return utc_from_text
    if kind == "bool":
        return _bool
    if field.name in FROM_COLUMN and kind.startswith("frozenset"):
        return _json
    return None


RAW_COLUMN: dict[str, Callable[[Any], Any]] = {
    f.name: convert for f in dataclasses.fields(TaskRecord) if (convert := _stored_as(f))
}
"""Decoding a raw ``sqlite3`` value into what the SQLAlchemy column type would have given."""


def record_values(record: TaskRecord) -> dict[str, Any]:
    """A record as column values (before the column types' own conversion)."""
    values = {name: getattr(record, name) for name in RECORD_FIELDS}
    for name, convert in TO_COLUMN.items():
        values[name] = convert(values[name])
    return values


def record_from(mapping: Columns, *, raw: bool = False) -> TaskRecord:
    """A record from a row's mapping: from SQLAlchemy (column types applied) or, with ``raw``,
    straight from ``sqlite3``."""
    values = {name: mapping[name] for name in RECORD_FIELDS}
    if raw:
        for name, decode in RAW_COLUMN.items():
            values[name] = decode(values[name])
    for name, convert in FROM_COLUMN.items():
        values[name] = convert(values[name])
    return TaskRecord(**values)
