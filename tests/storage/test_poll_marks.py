"""Checks that found nothing new are stored cheaply: a few columns, many records at once."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

from mooring.core.clock import SystemClock
from mooring.core.ids import new_id
from mooring.core.tasks.checks import PollMark
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.storage import repositories as repo
from mooring.storage.db import Database
from mooring.storage.store import SqlStore
from tests.core.tasks.factories import T0
from tests.storage.test_repositories import a_server

S = LocalState


def records(db: Database, count: int) -> list[TaskRecord]:
    server = a_server()
    made = [
        TaskRecord(
            id=new_id(),
            server_id=server.id,
            tool="import_suppliers",
            argument_digest="sha256:00",
            state=S.WORKING,
            created_at=T0,
            updated_at=T0,
            task_id=f"task-{n}",
            status_message="working on it",
            poll_count=3,
        )
        for n in range(count)
    ]

    def fill(session: Session) -> None:
        repo.add_server(session, server)
        for record in made:
            repo.add_task_record(session, record)

    db.call_sync(fill)
    return made


def mark(record: TaskRecord, seconds: int = 5) -> PollMark:
    return PollMark(
        record_id=record.id,
        base_updated_at=record.updated_at,
        last_checked_at=T0 + timedelta(seconds=seconds),
        poll_count=record.poll_count + 1,
        next_poll_at=T0 + timedelta(seconds=seconds + 5),
    )


def stored(db: Database, record_id: str) -> TaskRecord:
    found = db.call_sync(lambda s: repo.get_task_record(s, record_id))
    assert found is not None
    return found


def test_a_check_changes_when_and_how_often_and_nothing_else(db: Database) -> None:
    [record] = records(db, 1)
    assert db.call_sync(lambda s: repo.mark_checked(s, [mark(record)])) == 1
    after = stored(db, record.id)
    assert after.last_checked_at == T0 + timedelta(seconds=5)
    assert after.poll_count == 4
    assert after.next_poll_at == T0 + timedelta(seconds=10)
    assert after.updated_at == record.updated_at  # the same version of the record
    assert after.status_message == record.status_message


def test_a_check_of_a_record_that_moved_on_is_dropped(db: Database) -> None:
    moving, finished = records(db, 2)
    newer = moving.evolve(at=T0 + timedelta(seconds=2), status_message="half way")
    done = finished.transition(S.COMPLETED, at=T0 + timedelta(seconds=2))

    def elsewhere(session: Session) -> None:
        repo.save_task_record(session, newer)
        repo.save_task_record(session, done)

    db.call_sync(elsewhere)
    # Both marks were made against the older version (and one record is now finished).
    stale = [mark(moving), mark(finished)]
    assert db.call_sync(lambda s: repo.mark_checked(s, stale)) == 0
    assert stored(db, moving.id) == newer
    assert stored(db, finished.id) == done


def test_checks_arriving_together_share_one_statement(db: Database) -> None:
    made = records(db, 50)
    store = SqlStore(db, SystemClock())
    statements: list[tuple[str, bool]] = []

    def capture(_c: Any, _cur: Any, statement: str, _p: Any, _ctx: Any, many: bool) -> None:
        if statement.startswith("UPDATE task_records"):
            statements.append((statement, many))

    event.listen(db.engine, "before_cursor_execute", capture)
    try:

        async def poll_all() -> None:
            await asyncio.gather(*(store.mark_checked(mark(r)) for r in made))

        asyncio.run(poll_all())
    finally:
        event.remove(db.engine, "before_cursor_execute", capture)

    assert 1 <= len(statements) <= 2
    assert all("status_message" not in sql for sql, _many in statements)  # a few columns only
    assert all(stored(db, r.id).poll_count == 4 for r in made)  # on disk once awaited


def test_each_check_of_a_batch_learns_whether_it_was_stored(db: Database) -> None:
    # The monitor keeps the record it polled instead of reading it again: a check refused
    # because another process wrote the record meanwhile must tell its caller so.
    fresh, moved = records(db, 2)
    db.call_sync(
        lambda s: repo.save_task_record(
            s, moved.evolve(at=T0 + timedelta(seconds=2), status_message="half way")
        )
    )
    store = SqlStore(db, SystemClock())

    async def check_both() -> list[bool]:
        return list(
            await asyncio.gather(store.mark_checked(mark(fresh)), store.mark_checked(mark(moved)))
        )

    assert asyncio.run(check_both()) == [True, False]
    assert stored(db, fresh.id).poll_count == fresh.poll_count + 1
    assert stored(db, moved.id).status_message == "half way"


def test_a_refused_check_is_found_among_more_checks_than_one_in_list_holds(db: Database) -> None:
    # A launch reconciliation stores a thousand checks at once: the refused one is named
    # however many there are (the look-up goes in IN lists of 500).
    made = records(db, 600)
    moved = made[550]
    db.call_sync(
        lambda s: repo.save_task_record(
            s, moved.evolve(at=T0 + timedelta(seconds=2), status_message="half way")
        )
    )
    marks = [mark(r) for r in made]

    def store_all(session: Session) -> frozenset[str]:
        assert repo.mark_checked(session, marks) == 599
        return repo.unmarked(session, marks)

    assert db.call_sync(store_all) == frozenset({moved.id})


async def gathering(store: SqlStore, record: TaskRecord) -> asyncio.Future[bool]:
    """Start a scheduled poll's check of ``record``; return once the store holds it (the
    check's task stops at its first wait only after handing the check over)."""
    handed = asyncio.Event()

    async def check() -> bool:
        storing = store.mark_checked(mark(record), gather=True)
        handed.set()  # seen by the caller once this task waits inside ``storing``
        return await storing

    task = asyncio.ensure_future(check())
    await asyncio.wait_for(handed.wait(), 10)
    return task


def test_checks_arriving_one_after_another_wait_to_be_stored_together(db: Database) -> None:
    # The answers to a tick's polls come back one by one: their checks wait for each other
    # (here until told to store them) and go in one statement, each caller learning its own.
    made = records(db, 20)
    store = SqlStore(db, SystemClock(), check_gather_s=60)
    statements: list[str] = []

    def capture(_c: Any, _cur: Any, statement: str, _p: Any, _ctx: Any, _many: bool) -> None:
        if statement.startswith("UPDATE task_records"):
            statements.append(statement)

    event.listen(db.engine, "before_cursor_execute", capture)
    try:

        async def one_by_one() -> list[bool]:
            checks = [await gathering(store, record) for record in made]  # one after another
            assert not statements  # nothing stored yet: gathering
            assert all(stored(db, r.id).poll_count == 3 for r in made)
            await store.store_checks()
            return list(await asyncio.gather(*checks))

        assert asyncio.run(one_by_one()) == [True] * len(made)
    finally:
        event.remove(db.engine, "before_cursor_execute", capture)
    assert len(statements) == 1
    assert all(stored(db, r.id).poll_count == 4 for r in made)


def test_a_check_whose_caller_stopped_waiting_is_stored_all_the_same(db: Database) -> None:
    # The monitor stops while a poll's check is gathering: the poll is abandoned, the check
    # it made is kept.
    [record] = records(db, 1)
    store = SqlStore(db, SystemClock(), check_gather_s=60)

    async def abandon() -> None:
        waiting = await gathering(store, record)
        waiting.cancel()
        await store.store_checks()

    asyncio.run(abandon())
    assert stored(db, record.id).poll_count == 4
    assert stored(db, record.id).last_checked_at == T0 + timedelta(seconds=5)


def test_a_check_a_caller_waits_on_is_stored_at_once_with_those_gathered(db: Database) -> None:
    # A launch reconciliation waits for each check to go on: it is not held for a tick, and
    # the scheduled polls' checks gathering meanwhile go with it.
    scheduled, reconciled = records(db, 2)
    store = SqlStore(db, SystemClock(), check_gather_s=60)

    async def both() -> list[bool]:
        held = await gathering(store, scheduled)
        return [await store.mark_checked(mark(reconciled)), await held]

    assert asyncio.run(both()) == [True, True]
    assert stored(db, scheduled.id).poll_count == stored(db, reconciled.id).poll_count == 4
