"""The ledger's hot queries use an index on a real file (``EXPLAIN QUERY PLAN``), so a lookup
costs the same with ten records as with a hundred thousand.

Mooring never runs ``ANALYZE``, so SQLite plans from the schema alone, as here."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session

from mooring.core.ids import new_id
from mooring.core.tasks.checks import PollMark
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.storage import repositories as repo
from mooring.storage.db import Database
from tests.core.tasks.factories import T0
from tests.storage.test_repositories import a_server

S = LocalState


@pytest.fixture
def ledger(db: Database) -> list[TaskRecord]:
    """400 records on two servers: most finished, a few still running."""
    servers = [a_server("one"), a_server("two")]
    records = [
        TaskRecord(
            id=new_id(),
            server_id=servers[n % 2].id,
            tool="import_suppliers",
            argument_digest="sha256:00",
            state=S.WORKING if n % 20 == 0 else S.COMPLETED,
            created_at=T0 + timedelta(seconds=n),
            updated_at=T0 + timedelta(seconds=n),
            task_id=f"task-{n:04d}",
        )
        for n in range(400)
    ]

    def fill(session: Session) -> None:
        for server in servers:
            repo.add_server(session, server)
        for record in records:
            repo.add_task_record(session, record)

    db.call_sync(fill)
    return records


def plans(db: Database, query: Callable[[Session], Any]) -> list[list[str]]:
    """The query plan of every statement ``query`` runs (its real SQL and parameters)."""
    seen: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "UPDATE")):
            seen.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", capture)
    try:
        db.call_sync(query)
    finally:
        event.remove(db.engine, "before_cursor_execute", capture)

    def explain(session: Session) -> list[list[str]]:
        connection = session.connection()
        return [
            [row[3] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params)]
            for sql, params in seen
        ]

    return db.call_sync(explain)


def full_scans(plan: list[str]) -> list[str]:
    """Steps that read a whole table or index rather than seeking into one."""
    return [step for step in plan if step.startswith("SCAN")]


def test_finding_a_task_by_its_server_task_id_seeks_an_index(
    db: Database, ledger: list[TaskRecord]
) -> None:
    wanted = ledger[123]
    [plan] = plans(db, lambda s: repo.find_task_record(s, wanted.task_id or ""))
    assert full_scans(plan) == []
    assert any("ix_task_records_task_id" in step for step in plan), plan
    assert db.call_sync(lambda s: repo.find_task_record(s, wanted.task_id or "")) == wanted


def test_finding_a_task_by_its_operation_id_seeks_an_index(
    db: Database, ledger: list[TaskRecord]
) -> None:
    wanted = ledger[7]
    [plan] = plans(db, lambda s: repo.find_task_record(s, wanted.id))
    assert full_scans(plan) == []
    assert db.call_sync(lambda s: repo.find_task_record(s, wanted.id)) == wanted


def test_a_notification_finds_its_record_by_server_and_task_id_through_an_index(
    db: Database, ledger: list[TaskRecord]
) -> None:
    wanted = ledger[40]
    query = lambda s: repo.task_record_by_task_id(s, wanted.server_id, wanted.task_id or "")  # noqa: E731
    [plan] = plans(db, query)
    assert full_scans(plan) == []
    assert db.call_sync(query) == wanted


def test_the_active_tasks_are_found_without_reading_the_finished_ones(
    db: Database, ledger: list[TaskRecord]
) -> None:
    [plan] = plans(db, repo.list_unfinished_task_records)
    assert full_scans(plan) == []
    assert any("ix_task_records_state" in step for step in plan), plan
    active = db.call_sync(repo.list_unfinished_task_records)
    assert [r.id for r in active] == [r.id for r in ledger if r.state is S.WORKING]


def test_the_newest_page_of_the_task_list_reads_the_index_in_order_without_sorting(
    db: Database, ledger: list[TaskRecord]
) -> None:
    [plan] = plans(db, lambda s: repo.list_task_records(s, limit=50))
    assert not any("TEMP B-TREE" in step for step in plan), plan
    assert any("ix_task_records_newest" in step for step in plan), plan
    page = db.call_sync(lambda s: repo.list_task_records(s, limit=50))
    assert [r.id for r in page] == [r.id for r in reversed(ledger)][:50]


def test_reading_and_saving_one_record_seek_its_primary_key(
    db: Database, ledger: list[TaskRecord]
) -> None:
    record = ledger[20]
    moved = record.evolve(at=record.updated_at + timedelta(seconds=1), status_message="half")

    def read_and_save(session: Session) -> None:
        repo.get_task_record(session, record.id)
        repo.save_task_record(session, moved, expected_updated_at=record.updated_at)
        repo.list_task_inputs(session, record.id)

    for plan in plans(db, read_and_save):
        assert full_scans(plan) == [], plan


def test_marking_checks_seeks_each_record_by_its_primary_key(
    db: Database, ledger: list[TaskRecord]
) -> None:
    marks = [
        PollMark(
            record_id=r.id,
            base_updated_at=r.updated_at,
            last_checked_at=r.updated_at + timedelta(seconds=1),
            poll_count=1,
            next_poll_at=None,
        )
        for r in ledger[:3]
    ]
    [plan] = plans(db, lambda s: repo.mark_checked(s, marks))
    assert full_scans(plan) == []
