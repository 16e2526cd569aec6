"""Model provider configurations in SQLite (``ProviderBook``); never their secrets.

The default is kept in the same transaction as each change: the first provider added becomes
the default, and removing the default hands it to the oldest remaining provider.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Row, bindparam, delete, insert, select, update
from sqlalchemy.orm import Session

from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.clock import Clock
from mooring.core.errors import KnownError
from mooring.storage import tables as t
from mooring.storage.db import Database
from mooring.storage.records import driver_values

_p = t.providers
# Built once: every model turn reads its provider (see storage/conversations.py).
_GET_PROVIDER = select(_p).where(_p.c.id == bindparam("b_id"))
_DEFAULT_PROVIDER = select(_p).where(_p.c.is_default.is_(True))


def _config(row: Row[Any]) -> ProviderConfig:
    return _config_from(row._mapping)


def _config_from(values: Mapping[Any, Any]) -> ProviderConfig:
    return ProviderConfig(
        id=values["id"],
        name=values["name"],
        kind=ProviderKind(values["kind"]),
        base_url=values["base_url"],
        model=values["model"],
        header_names=tuple(values["header_names"]),
        has_api_key=bool(values["has_api_key"]),
        api_key_env=values["api_key_env"],
    )


# The provider a model turn starts with is read on the plain driver connection, in the turn's
# first transaction (see storage/conversations.py: open_turn).
_SQL_PROVIDER = "SELECT * FROM providers WHERE id = ?"
_SQL_DEFAULT_PROVIDER = "SELECT * FROM providers WHERE is_default = 1"


def turn_provider(cursor: sqlite3.Cursor, provider_id: str | None) -> ProviderConfig | None:
    """The provider called ``provider_id`` (``None``: the default one), on a plain ``sqlite3``
    cursor whose rows are :class:`sqlite3.Row`, decoded as the column types would."""
    if provider_id is None:
        row = cursor.execute(_SQL_DEFAULT_PROVIDER).fetchone()
    else:
        row = cursor.execute(_SQL_PROVIDER, (provider_id,)).fetchone()
    if row is None:
        return None
    return _config_from(driver_values(row, json_columns=("header_names",)))


def add_provider(session: Session, config: ProviderConfig, *, at: datetime) -> bool:
    """Store a provider; the first one becomes the default. Whether it did."""
    if session.execute(select(_p.c.id).where(_p.c.name == config.name)).first() is not None:
        raise KnownError(f"A provider called {config.name!r} exists already.", code="exists")
    first = session.execute(select(_p.c.id).limit(1)).first() is None
    session.execute(
        insert(_p).values(
            id=config.id,
            name=config.name,
            kind=config.kind.value,
            base_url=config.base_url,
            model=config.model,
            header_names=list(config.header_names),
            has_api_key=config.has_api_key,
            api_key_env=config.api_key_env,
            is_default=first,
            created_at=at,
        )
    )
    return first


def update_provider(session: Session, config: ProviderConfig) -> None:
    """Store an edited provider: everything but its id, default mark and creation time."""
    taken = session.execute(
        select(_p.c.id).where(_p.c.name == config.name, _p.c.id != config.id)
    ).first()
    if taken is not None:
        raise KnownError(f"A provider called {config.name!r} exists already.", code="exists")
    if session.execute(select(_p.c.id).where(_p.c.id == config.id)).first() is None:
        raise KnownError("That provider no longer exists.", code="not_found")
    session.execute(
        update(_p)
        .where(_p.c.id == config.id)
        .values(
            name=config.name,
            kind=config.kind.value,
            base_url=config.base_url,
            model=config.model,
            header_names=list(config.header_names),
            has_api_key=config.has_api_key,
            api_key_env=config.api_key_env,
        )
    )


def list_providers(session: Session) -> list[ProviderConfig]:
    """Every provider, by name."""
    return [_config(r) for r in session.execute(select(_p).order_by(_p.c.name))]


def get_provider(session: Session, provider_id: str) -> ProviderConfig | None:
    row = session.execute(_GET_PROVIDER, {"b_id": provider_id}).first()
    return _config(row) if row else None


def find_provider(session: Session, name: str) -> ProviderConfig | None:
    row = session.execute(select(_p).where(_p.c.name == name)).first()
    return _config(row) if row else None


def default_provider(session: Session) -> ProviderConfig | None:
    row = session.execute(_DEFAULT_PROVIDER).first()
    return _config(row) if row else None


def set_default(session: Session, provider_id: str) -> None:
    """Make one provider the default (and no other)."""
    if session.execute(select(_p.c.id).where(_p.c.id == provider_id)).first() is None:
        raise KnownError("That provider no longer exists.", code="not_found")
    session.execute(update(_p).where(_p.c.is_default.is_(True)).values(is_default=False))
    session.execute(update(_p).where(_p.c.id == provider_id).values(is_default=True))


def remove_provider(session: Session, provider_id: str) -> None:
    """Delete a provider; if it was the default, the oldest remaining one becomes it."""
    was_default = session.execute(
        select(_p.c.is_default).where(_p.c.id == provider_id)
    ).scalar_one_or_none()
    session.execute(delete(_p).where(_p.c.id == provider_id))
    if was_default:
        oldest = session.execute(
            select(_p.c.id).order_by(_p.c.created_at, _p.c.name).limit(1)
        ).scalar_one_or_none()
        if oldest is not None:
            session.execute(update(_p).where(_p.c.id == oldest).values(is_default=True))


class SqlProviderBook:
    """``ProviderBook`` on one :class:`Database`."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def list_providers(self) -> list[ProviderConfig]:
        return await self._db.run(list_providers)

    async def get_provider(self, provider_id: str) -> ProviderConfig | None:
        return await self._db.run(lambda s: get_provider(s, provider_id))

    async def find_provider(self, name: str) -> ProviderConfig | None:
        return await self._db.run(lambda s: find_provider(s, name))

    async def add_provider(self, config: ProviderConfig) -> bool:
        at = self._clock.now()
        return await self._db.run(lambda s: add_provider(s, config, at=at))

    async def update_provider(self, config: ProviderConfig) -> None:
        await self._db.run(lambda s: update_provider(s, config))

    async def remove_provider(self, provider_id: str) -> None:
        await self._db.run(lambda s: remove_provider(s, provider_id))

    async def default_provider(self) -> ProviderConfig | None:
        return await self._db.run(default_provider)

    async def set_default_provider(self, provider_id: str) -> None:
        await self._db.run(lambda s: set_default(s, provider_id))
