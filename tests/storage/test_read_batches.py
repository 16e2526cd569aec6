"""Point reads (and independent writes) asked for together share a transaction, and each caller
gets its own answer."""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event, update
from sqlalchemy.orm import Session

from mooring.core.clock import SystemClock
from mooring.core.errors import RecordChanged
from mooring.core.tasks.reconcile import Outcome, Reconciliation
from mooring.core.tasks.record import TaskRecord
from mooring.storage import repositories as repo
from mooring.storage.db import Database
from mooring.storage.read_batches import ReadBatches, WriteBatches
from mooring.storage.store import SqlStore
from mooring.storage.tables import task_records
from tests.core.tasks.factories import T0
from tests.storage.test_poll_marks import records


def count_transactions(db: Database) -> tuple[list[int], Any]:
    begun: list[int] = []

    def on_begin(_conn: Any) -> None:
        begun.append(1)

    event.listen(db.engine, "begin", on_begin)
    return begun, on_begin


def test_reads_asked_together_share_transactions_and_each_gets_its_own_record(
    db: Database,
) -> None:
    made = records(db, 200)
    store = SqlStore(db, SystemClock())
    begun, listener = count_transactions(db)
    try:

        async def read_all() -> list[Any]:
            return await asyncio.gather(
                *(store.get(r.id) for r in made),
                *(store.inputs(r.id) for r in made),
                *(store.get_server(r.server_id) for r in made),
            )

        found = asyncio.run(read_all())
    finally:
        event.remove(db.engine, "begin", listener)

    assert found[:200] == made  # each caller its own record, in order
    assert found[200:400] == [[]] * 200
    assert all(s is not None and s.id == made[0].server_id for s in found[400:])
    assert 1 <= len(begun) <= 6  # 600 reads: a few transactions, not 600


def test_a_failing_read_fails_only_its_caller(db: Database) -> None:
    [record] = records(db, 1)
    reads = ReadBatches(db)

    def broken(_session: Session) -> None:
        raise LookupError("not there")

    async def both() -> tuple[Any, ...]:
        return await asyncio.gather(
            reads.run(broken),
            SqlStore(db, SystemClock()).get(record.id),
            return_exceptions=True,
        )

    failed, fine = asyncio.run(both())
    assert isinstance(failed, LookupError)
    assert fine == record


def test_reads_work_from_one_event_loop_after_another(db: Database) -> None:
    [record] = records(db, 1)
    store = SqlStore(db, SystemClock())
    assert asyncio.run(store.get(record.id)) == record
    assert asyncio.run(store.get(record.id)) == record  # a second loop: no stale runner


@pytest.mark.parametrize("count", [1, 300])
def test_every_read_is_answered_whatever_the_batch_size(db: Database, count: int) -> None:
    made = records(db, count)
    reads = ReadBatches(db, most=64)

    async def read_all() -> list[Any]:
        return await asyncio.gather(
            *(reads.run(functools.partial(repo.get_task_record, record_id=r.id)) for r in made)
        )

    assert asyncio.run(read_all()) == made


def test_writes_asked_together_share_transactions_and_a_stale_one_fails_alone(
    db: Database,
) -> None:
    # A listen stream's replay brings news of many tasks at once: their writes share a few
    # transactions, and one whose record moved on elsewhere is refused without undoing the rest.
    made = records(db, 100)
    store = SqlStore(db, SystemClock())
    later = T0 + timedelta(seconds=5)
    news = [
        Reconciliation(
            outcome=Outcome.UPDATED,
            record=replace(r, status_message=f"validated {n} rows", updated_at=later),
            previous_state=r.state,
            base_updated_at=T0 - timedelta(days=1) if n == 50 else r.updated_at,
        )
        for n, r in enumerate(made)
    ]
    begun, listener = count_transactions(db)
    try:

        async def write_all() -> list[Any]:
            return await asyncio.gather(*(store.apply(rec) for rec in news), return_exceptions=True)

        outcomes = asyncio.run(write_all())
    finally:
        event.remove(db.engine, "begin", listener)

    assert isinstance(outcomes[50], RecordChanged)
    assert [o for n, o in enumerate(outcomes) if n != 50] == [[]] * 99
    stored = asyncio.run(read_back(store, made))
    assert [s.status_message for s in stored] == [
        "working on it" if n == 50 else f"validated {n} rows" for n in range(100)
    ]
    assert 1 <= len(begun) <= 6  # 100 writes: a few transactions, not 100


async def read_back(store: SqlStore, made: list[TaskRecord]) -> list[TaskRecord]:
    found = await asyncio.gather(*(store.get(r.id) for r in made))
    assert all(f is not None for f in found)
    return [f for f in found if f is not None]


def write(record: TaskRecord, session: Session) -> None:
    """A batch's write: the record's status message becomes "written"."""
    session.execute(
        update(task_records).where(task_records.c.id == record.id).values(status_message="written")
    )


def test_a_write_batch_commits_once_so_no_reader_sees_half_of_it(db: Database) -> None:
    # Every write of a batch has its own savepoint; the batch is one SQLite transaction (one
    # commit, not one per write), so another process reads all of it or none of it.
    made = records(db, 3)
    writes = WriteBatches(db)
    seen_meanwhile: list[int] = []

    def write_and_look(record: TaskRecord, session: Session) -> None:
        write(record, session)
        other = sqlite3.connect(db.path)  # another process's view of the file
        try:
            [(count,)] = other.execute(
                "SELECT count(*) FROM task_records WHERE status_message = 'written'"
            ).fetchall()
        finally:
            other.close()
        seen_meanwhile.append(count)

    async def write_all() -> None:
        await asyncio.gather(
            writes.run(functools.partial(write, made[0])),
            writes.run(functools.partial(write, made[1])),
            writes.run(functools.partial(write_and_look, made[2])),
        )

    asyncio.run(write_all())
    assert seen_meanwhile == [0]  # the first two were not committed on their own
    stored = asyncio.run(read_back(SqlStore(db, SystemClock()), made))
    assert [s.status_message for s in stored] == ["written"] * 3


def test_the_inputs_of_many_records_come_in_one_read_each_in_arrival_order(db: Database) -> None:
    # A launch reconciliation reads the inputs of every unfinished task at once (600: more
    # than one IN list's worth).
    made = records(db, 600)
    asked = {made[0].id: ["second", "first"], made[599].id: ["only"]}

    def ask(session: Session) -> None:
        for record_id, keys in asked.items():
            for n, key in enumerate(keys):
                repo.add_task_inputs(
                    session,
                    record_id,
                    {key: {"method": "elicitation/create", "params": {"message": key}}},
                    at=T0 + timedelta(seconds=n),
                )

    db.call_sync(ask)
    store = SqlStore(db, SystemClock())
    found = asyncio.run(store.inputs_of([r.id for r in made]))
    assert {record_id: [i.key for i in items] for record_id, items in found.items()} == asked


def test_the_reads_of_a_batch_see_one_snapshot_of_the_file(db: Database) -> None:
    # A poll reads its record and its inputs together; another process's commit between the
    # two must not pair an old record with new inputs.
    made = records(db, 2)
    reads = ReadBatches(db)

    def count(session: Session) -> int:
        return len(session.execute(task_records.select()).all())

    def count_then_other_writes(session: Session) -> int:
        seen = count(session)
        other = sqlite3.connect(db.path, isolation_level=None)  # another process commits
        try:
            other.execute("DELETE FROM task_records WHERE id = ?", (made[0].id,))
        finally:
            other.close()
        return seen

    async def read_all() -> list[int]:
        return list(await asyncio.gather(reads.run(count_then_other_writes), reads.run(count)))

    assert asyncio.run(read_all()) == [2, 2]  # the second read still sees the first's file
    assert asyncio.run(reads.run(count)) == 1  # a later batch sees the commit


def test_a_write_that_fails_halfway_leaves_nothing_and_the_others_of_its_batch_stay(
    db: Database,
) -> None:
    made = records(db, 3)
    writes = WriteBatches(db)

    def write_then_fail(record: TaskRecord, session: Session) -> None:
        write(record, session)
        raise ValueError("the second half failed")

    async def write_all() -> list[BaseException | None]:
        return list(
            await asyncio.gather(
                writes.run(functools.partial(write, made[0])),
                writes.run(functools.partial(write_then_fail, made[1])),
                writes.run(functools.partial(write, made[2])),
                return_exceptions=True,
            )
        )

    outcomes = asyncio.run(write_all())
    assert outcomes[0] is None
    assert outcomes[2] is None
    assert isinstance(outcomes[1], ValueError)
    stored = asyncio.run(read_back(SqlStore(db, SystemClock()), made))
    assert [s.status_message for s in stored] == ["written", made[1].status_message, "written"]
