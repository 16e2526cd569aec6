"""The bundled demo server follows the installation that runs Mooring (a bundle moved or
installed elsewhere, a new virtual environment), on a real SQLite database; a command line the
user changed to something else stays theirs."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mooring.core.clock import SystemClock
from mooring.services.first_run import ensure_demo_server
from mooring.storage.db import Database
from mooring.storage.store import SqlStore

pytestmark = pytest.mark.anyio

OLD_BUNDLE = "/old/place/mooring"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlStore]:
    db = Database.open(tmp_path / "mooring.sqlite3")
    try:
        yield SqlStore(db, SystemClock())
    finally:
        db.close()


async def first_use_from_old_bundle(store: SqlStore) -> None:
    added = await ensure_demo_server(
        store, SystemClock(), command=OLD_BUNDLE, args=("demo-server", "--store", "/d/demo.db")
    )
    assert added is not None


async def test_a_moved_installation_takes_the_demo_server_along(store: SqlStore) -> None:
    await first_use_from_old_bundle(store)
    [before] = await store.list_servers()
    python = ("-m", "mooring.demo_server", "--store", "/d/demo.db")
    assert (
        await ensure_demo_server(store, SystemClock(), command="/venv/python", args=python) is None
    )
    [after] = await store.list_servers()
    assert (after.id, after.alias, after.builtin) == (before.id, "demo", True)
    assert (after.command, after.args) == ("/venv/python", python)

    # And back into a bundle: the entry form again.
    new_bundle = ("demo-server", "--store", "/d/demo.db")
    await ensure_demo_server(store, SystemClock(), command="/new/mooring", args=new_bundle)
    [again] = await store.list_servers()
    assert (again.command, again.args) == ("/new/mooring", new_bundle)


async def test_the_demo_servers_own_flags_stay(store: SqlStore) -> None:
    await first_use_from_old_bundle(store)
    [server] = await store.list_servers()
    flags = ("demo-server", "--store", "/d/demo.db", "--poll-interval-ms", "250")
    await store.update_server(dataclasses.replace(server, args=flags))
    await ensure_demo_server(
        store, SystemClock(), command="/new/mooring", args=("demo-server", "--store", "/x.db")
    )
    [after] = await store.list_servers()
    assert (after.command, after.args) == ("/new/mooring", flags)


async def test_a_command_line_the_user_changed_stays_theirs(store: SqlStore) -> None:
    await first_use_from_old_bundle(store)
    [server] = await store.list_servers()
    theirs = dataclasses.replace(server, command="uvx", args=("my-demo-fork", "--fast"))
    await store.update_server(theirs)
    await ensure_demo_server(
        store, SystemClock(), command="/new/mooring", args=("demo-server", "--store", "/d/demo.db")
    )
    [after] = await store.list_servers()
    assert (after.command, after.args) == ("uvx", ("my-demo-fork", "--fast"))


async def test_a_removed_demo_server_is_not_brought_back(store: SqlStore) -> None:
    await first_use_from_old_bundle(store)
    [server] = await store.list_servers()
    await store.remove_server(server.id)
    await ensure_demo_server(
        store, SystemClock(), command="/new/mooring", args=("demo-server", "--store", "/d/demo.db")
    )
    assert await store.list_servers() == []
