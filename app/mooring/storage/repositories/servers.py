"""Servers and their credential profiles (soft-removed, so their tasks stay explainable)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Row, and_, bindparam, insert, select, update
from sqlalchemy.orm import Session

from mooring.core.servers import CredentialProfile, ServerDefinition, Transport
from mooring.storage import tables as t
from mooring.storage.records import driver_values

# -- servers -------------------------------------------------------------------------------


def _server(row: Row[Any]) -> ServerDefinition:
    return _server_from(row._mapping)


def _server_from(values: Mapping[Any, Any]) -> ServerDefinition:
    return ServerDefinition(
        id=values["id"],
        alias=values["alias"],
        transport=Transport(values["transport"]),
        command=values["command"],
        args=tuple(values["args"]),
        env=dict(values["env"]),
        cwd=values["cwd"],
        url=values["url"],
        headers=dict(values["headers"]),
        trusted=bool(values["trusted"]),
        enabled=bool(values["enabled"]),
        builtin=bool(values["builtin"]),
        allowed_tools=None if values["allowed_tools"] is None else tuple(values["allowed_tools"]),
        hidden_tools=tuple(values["hidden_tools"]),
        env_refs=dict(values["env_refs"]),
        created_at=values["created_at"],
    )


def add_server(session: Session, server: ServerDefinition) -> None:
    """Store a new server definition."""
    session.execute(
        insert(t.servers).values(
            id=server.id, builtin=server.builtin, created_at=server.created_at, **_editable(server)
        )
    )


# Built once: every poll reads its task's server, and every model turn lists the servers (a
# statement and its cache key, built at each call, cost more than running it).
_GET_SERVER = select(t.servers).where(t.servers.c.id == bindparam("server_id"))
_LIST_SERVERS = (
    select(t.servers).where(t.servers.c.removed_at.is_(None)).order_by(t.servers.c.alias)
)


def list_servers(session: Session) -> list[ServerDefinition]:
    """Every server that has not been removed, by alias."""
    return [_server(r) for r in session.execute(_LIST_SERVERS)]


# A model turn's first transaction lists the servers on the plain driver connection (see
# storage/conversations.py: open_turn); tests/storage/test_conversations.py holds both readers
# to the same definitions.
_SQL_LIVE_SERVERS = "SELECT * FROM servers WHERE removed_at IS NULL ORDER BY alias"
_JSON_COLUMNS = ("args", "env", "headers", "allowed_tools", "hidden_tools", "env_refs")


def live_servers(cursor: sqlite3.Cursor) -> list[ServerDefinition]:
    """:func:`list_servers` on a plain ``sqlite3`` cursor whose rows are
    :class:`sqlite3.Row`, decoded as the column types would."""
    return [
        _server_from(driver_values(row, times=("created_at",), json_columns=_JSON_COLUMNS))
        for row in cursor.execute(_SQL_LIVE_SERVERS)
    ]


def get_server(session: Session, server_id: str) -> ServerDefinition | None:
    """A server by id, even a removed one (its tasks still name it)."""
    row = session.execute(_GET_SERVER, {"server_id": server_id}).first()
    return _server(row) if row else None


def find_server(session: Session, alias: str) -> ServerDefinition | None:
    """A live server by alias."""
    row = session.execute(
        select(t.servers).where(and_(t.servers.c.alias == alias, t.servers.c.removed_at.is_(None)))
    ).first()
    return _server(row) if row else None


def server_removed_at(session: Session, server_id: str) -> datetime | None:
    """When a server was removed, or ``None`` while it exists."""
    removed: datetime | None = session.execute(
        select(t.servers.c.removed_at).where(t.servers.c.id == server_id)
    ).scalar_one_or_none()
    return removed


def builtin_server_ever_configured(session: Session) -> bool:
    """Whether a built-in server exists or ever existed."""
    found = session.execute(
        select(t.servers.c.id).where(t.servers.c.builtin.is_(True)).limit(1)
    ).first()
    return found is not None


def remove_server(session: Session, server_id: str, *, at: datetime) -> None:
    """Remove a server; the row stays so its tasks can still be explained."""
    session.execute(update(t.servers).where(t.servers.c.id == server_id).values(removed_at=at))


# -- credential profiles ---------------------------------------------------------------------


def add_profile(session: Session, profile: CredentialProfile) -> None:
    """Store a new account for a server (its secrets go to the keyring, not here)."""
    session.execute(
        insert(t.credential_profiles).values(
            id=profile.id,
            server_id=profile.server_id,
            label=profile.label,
            created_at=profile.created_at,
        )
    )


def list_profiles(session: Session, server_id: str) -> list[CredentialProfile]:
    """The live accounts of one server."""
    rows = session.execute(
        select(t.credential_profiles).where(
            and_(
                t.credential_profiles.c.server_id == server_id,
                t.credential_profiles.c.removed_at.is_(None),
            )
        )
    )
    return [
        CredentialProfile(id=r.id, server_id=r.server_id, label=r.label, created_at=r.created_at)
        for r in rows
    ]


def remove_profile(session: Session, profile_id: str, *, at: datetime) -> None:
    """Remove an account; the row stays so its tasks can still be explained."""
    session.execute(
        update(t.credential_profiles)
        .where(t.credential_profiles.c.id == profile_id)
        .values(removed_at=at)
    )


def profile_removed_at(session: Session, profile_id: str) -> datetime | None:
    """When an account was removed (``None`` while it exists or is unknown)."""
    removed: datetime | None = session.execute(
        select(t.credential_profiles.c.removed_at).where(t.credential_profiles.c.id == profile_id)
    ).scalar_one_or_none()
    return removed


def set_server_trusted(session: Session, server_id: str, trusted: bool) -> None:
    """Trust (or stop trusting) a server's tool annotations."""
    session.execute(update(t.servers).where(t.servers.c.id == server_id).values(trusted=trusted))


def update_server(session: Session, server: ServerDefinition) -> None:
    """Store a changed definition (everything the user may edit; not its id or history)."""
    session.execute(
        update(t.servers).where(t.servers.c.id == server.id).values(**_editable(server))
    )


def _editable(server: ServerDefinition) -> dict[str, Any]:
    """The columns of a server definition the user may change (all but its id and history)."""
    return {
        "alias": server.alias,
        "transport": server.transport.value,
        "command": server.command,
        "args": list(server.args),
        "env": server.env,
        "cwd": server.cwd,
        "url": server.url,
        "headers": server.headers,
        "trusted": server.trusted,
        "enabled": server.enabled,
        "allowed_tools": None if server.allowed_tools is None else list(server.allowed_tools),
        "hidden_tools": list(server.hidden_tools),
        "env_refs": server.env_refs,
    }
