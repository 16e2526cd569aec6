"""Saved assistants in SQLite (``AssistantBook``, migration 0015)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.orm import Session

from mooring.core.assistants import Assistant, ToolOffering
from mooring.core.errors import KnownError
from mooring.storage import tables as t
from mooring.storage.db import Database

_a = t.assistants


def _assistant(values: Mapping[Any, Any]) -> Assistant:
    servers, tools = values["servers"], values["tools"]
    offering = None
    if servers is not None or tools is not None:
        offering = ToolOffering(
            servers=frozenset(str(s) for s in servers or ()),
            tools=frozenset((str(s), str(n)) for s, n in tools or ()),
        )
    return Assistant(
        id=values["id"],
        name=values["name"],
        system_prompt=values["system_prompt"] or "",
        provider_id=values["provider_id"],
        model=values["model"],
        offering=offering,
        created_at=values["created_at"],
        updated_at=values["updated_at"],
    )


def _values(assistant: Assistant) -> dict[str, Any]:
    offering = assistant.offering
    return {
        "name": assistant.name,
        "system_prompt": assistant.system_prompt,
        "provider_id": assistant.provider_id,
        "model": assistant.model,
        "servers": sorted(offering.servers) if offering is not None else None,
        "tools": [list(p) for p in sorted(offering.tools)] if offering is not None else None,
        "updated_at": assistant.updated_at,
    }


def _name_taken(session: Session, name: str, other_than: str | None) -> None:
    query = select(_a.c.id).where(func.lower(_a.c.name) == name.lower())
    if other_than is not None:
        query = query.where(_a.c.id != other_than)
    if session.execute(query).first() is not None:
        raise KnownError(f"An assistant called {name!r} exists already.", code="exists")


def list_assistants(session: Session) -> list[Assistant]:
    """Every assistant, by name."""
    rows = session.execute(select(_a).order_by(func.lower(_a.c.name), _a.c.id))
    return [_assistant(r._mapping) for r in rows]


def find_assistant(session: Session, key: str) -> Assistant | None:
    """By name (exactly, else ignoring case) or id."""
    for condition in (_a.c.name == key, func.lower(_a.c.name) == key.lower(), _a.c.id == key):
        rows = session.execute(select(_a).where(condition).limit(2)).all()
        if len(rows) == 1:
            return _assistant(rows[0]._mapping)
    return None


def add_assistant(session: Session, assistant: Assistant) -> None:
    """Store a new assistant (names are unique, ignoring case)."""
    _name_taken(session, assistant.name, None)
    session.execute(
        insert(_a).values(id=assistant.id, created_at=assistant.created_at, **_values(assistant))
    )


def update_assistant(session: Session, assistant: Assistant) -> bool:
    """Store an edited assistant; whether it exists."""
    _name_taken(session, assistant.name, assistant.id)
    done = session.execute(update(_a).where(_a.c.id == assistant.id).values(**_values(assistant)))
    return bool(done.rowcount)  # type: ignore[attr-defined]  # CursorResult has rowcount


def remove_assistant(session: Session, assistant_id: str) -> bool:
    """Remove an assistant; its conversations lose the link (``ON DELETE SET NULL``)."""
    # The column's ON DELETE SET NULL does this too; said here so it never depends on it.
    session.execute(
        update(t.conversations)
        .where(t.conversations.c.assistant_id == assistant_id)
        .values(assistant_id=None)
    )
    done = session.execute(delete(_a).where(_a.c.id == assistant_id))
    return bool(done.rowcount)  # type: ignore[attr-defined]  # CursorResult has rowcount


class SqlAssistants:
    """Implements ``AssistantBook`` on one :class:`Database`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def list_assistants(self) -> list[Assistant]:
        return await self.db.run(list_assistants)

    async def find_assistant(self, key: str) -> Assistant | None:
        return await self.db.run(lambda s: find_assistant(s, key))

    async def add_assistant(self, assistant: Assistant) -> None:
        await self.db.run(lambda s: add_assistant(s, assistant))

    async def update_assistant(self, assistant: Assistant) -> bool:
        return await self.db.run(lambda s: update_assistant(s, assistant))

    async def remove_assistant(self, assistant_id: str) -> bool:
        return await self.db.run(lambda s: remove_assistant(s, assistant_id))
