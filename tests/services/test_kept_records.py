"""A poll does not read its task's record again each time: it keeps what it stored. A change
written meanwhile by another process is still caught at the next poll, never overwritten."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import event

from mooring.core.events import TaskDidChange
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from tests.services.conftest import SAMPLES, HostFactory, demo_definition, logged, run_until

pytestmark = pytest.mark.anyio


def gets(log: Path) -> int:
    return len(logged(log, "tasks/get"))


async def test_polls_keep_the_record_and_a_change_from_another_process_stops_them(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    log = tmp_path / "requests.log"
    # A long task polled every 50 ms; no notifications, so every check is a tasks/get.
    server = demo_definition(
        tmp_path / "store.sqlite3",
        log,
        checkpoint_delay_ms=60_000,
        rows_per_checkpoint=1,
        fault_no_task_notifications=1,
    )
    await host.store.add_server(server)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    first = await host.store.get(record.id)
    assert first is not None

    reads: list[str] = []

    def count(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
        if statement.startswith("SELECT task_records."):
            reads.append(statement)

    event.listen(host.db.engine, "before_cursor_execute", count)
    try:
        await run_until(host, record.id, lambda r: r.poll_count >= first.poll_count + 6)
    finally:
        event.remove(host.db.engine, "before_cursor_execute", count)
    assert len(reads) <= 2  # not one read per poll

    # Another Mooring process (a second host on the same file) finishes the record.
    other = await hosts()
    current = await other.store.get(record.id)
    assert current is not None
    stopped = current.transition(
        LocalState.CANCELLED, at=current.updated_at, reason="cancelled in another window"
    )
    await other.store.save(stopped, expected_updated_at=current.updated_at)
    before = gets(log)

    told: list[TaskRecord] = []
    told_cancelled = anyio.Event()

    def listen(changed: TaskDidChange) -> None:
        if changed.record.id == record.id:
            told.append(changed.record)
            if changed.record.state is LocalState.CANCELLED:
                told_cancelled.set()

    host.events.on(TaskDidChange, listen)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(host.monitor.run)  # its schedule still holds the task
            await told_cancelled.wait()
            await host.monitor.stop()

    assert told[-1].reason == "cancelled in another window"
    assert host.monitor.due_at(record.id) is None  # no longer polled
    assert gets(log) - before <= 2  # the first check after the change notices it
    stored = await host.store.get(record.id)
    assert stored is not None
    assert stored.state is LocalState.CANCELLED  # not overwritten
    assert stored.poll_count == current.poll_count
