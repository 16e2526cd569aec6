"""The HTTP sessions left open, by server and account, in a real SQLite file."""

from __future__ import annotations

import pytest

from mooring.core.clock import SystemClock
from mooring.core.ports import RememberedSession
from mooring.storage import repositories as repo
from mooring.storage.db import Database
from mooring.storage.http_sessions import SqlHttpSessions
from tests.storage.test_repositories import a_server

pytestmark = pytest.mark.anyio


async def test_each_account_keeps_its_own_session_and_the_newest_replaces_the_older(
    db: Database,
) -> None:
    server = a_server("remote")
    db.call_sync(lambda s: repo.add_server(s, server))
    sessions = SqlHttpSessions(db, SystemClock())
    assert await sessions.remembered(server.id, None) is None
    await sessions.remember(server.id, None, "first")
    await sessions.remember(server.id, "work", "other-account")
    await sessions.remember(server.id, None, "second", '{"protocolVersion": "2025-11-25"}')
    assert await sessions.remembered(server.id, None) == RememberedSession(
        "second", '{"protocolVersion": "2025-11-25"}'
    )
    assert await sessions.remembered(server.id, "work") == RememberedSession("other-account")


async def test_forgetting_an_ended_session_keeps_a_newer_one(db: Database) -> None:
    server = a_server("remote")
    db.call_sync(lambda s: repo.add_server(s, server))
    sessions = SqlHttpSessions(db, SystemClock())
    await sessions.remember(server.id, None, "newer")
    await sessions.forget(server.id, None, "older")  # ended late: not the one held now
    assert await sessions.remembered(server.id, None) == RememberedSession("newer")
    await sessions.forget(server.id, None, "newer")
    assert await sessions.remembered(server.id, None) is None
