"""Polling a task whose status does not change stores only the check, never the whole record."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from mooring.core.events import TaskDidChange
from mooring.core.tasks.states import LocalState
from tests.services.conftest import SAMPLES, HostFactory, demo_definition, run_until

pytestmark = pytest.mark.anyio


async def test_unchanged_polls_only_mark_the_check_and_listeners_still_see_it(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    # Each checkpoint takes a long while, so most polls (every 50 ms) see nothing new. No
    # notifications/tasks: an applied notification is a write that is not a poll.
    server = demo_definition(
        tmp_path / "store.sqlite3",
        tmp_path / "requests.log",
        checkpoint_delay_ms=1500,
        rows_per_checkpoint=2,
        fault_no_task_notifications=1,
    )
    await host.store.add_server(server)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    started = await host.store.get(record.id)
    assert started is not None

    full: list[str] = []
    marks: list[str] = []

    def count(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
        if statement.startswith("UPDATE task_records"):
            (full if "status_message" in statement else marks).append(statement)

    told: list[TaskDidChange] = []
    host.events.on(TaskDidChange, told.append)
    event.listen(host.db.engine, "before_cursor_execute", count)
    try:
        latest = await run_until(host, record.id, lambda r: r.poll_count >= started.poll_count + 12)
    finally:
        event.remove(host.db.engine, "before_cursor_execute", count)

    polls = latest.poll_count - started.poll_count
    # Progress may also come as notifications/tasks frames: each applied in full, not a poll.
    counts = [started.poll_count, *(e.record.poll_count for e in told if e.record.id == record.id)]
    frames = sum(1 for before, after in pairwise(counts) if before == after)
    assert len(marks) >= polls // 2  # most polls learned nothing...
    assert len(full) + len(marks) == polls + frames  # ...and each poll wrote once, full or a mark
    stored = await host.store.get(record.id)
    assert stored is not None
    # What is on disk is what listeners were told, including the last check.
    assert stored.poll_count == latest.poll_count
    assert stored.last_checked_at == latest.last_checked_at
    assert stored.updated_at == latest.updated_at
    assert stored.state is LocalState.WORKING
    assert len([e for e in told if e.record.id == record.id]) >= polls


async def test_a_task_waiting_for_an_answer_is_checked_without_rewriting_it(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    # A server that reports nothing on a listen stream: the task is polled at its interval (one
    # that reports on it would be polled only as a safety net, minutes apart).
    server = demo_definition(
        tmp_path / "store.sqlite3", tmp_path / "requests.log", fault_no_task_notifications=1
    )
    await host.store.add_server(server)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}
    )
    asking = await run_until(host, record.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    questions = [item.key for item in await host.store.inputs(record.id)]
    assert questions

    full: list[str] = []

    def count(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
        if statement.startswith("UPDATE task_records") and "status_message" in statement:
            full.append(statement)

    event.listen(host.db.engine, "before_cursor_execute", count)
    try:
        latest = await run_until(host, record.id, lambda r: r.poll_count >= asking.poll_count + 5)
    finally:
        event.remove(host.db.engine, "before_cursor_execute", count)

    assert full == []  # five more polls, the same question each time: no new version
    stored = await host.store.get(record.id)
    assert stored is not None
    assert stored.state is LocalState.INPUT_REQUIRED
    assert (stored.poll_count, stored.updated_at) == (latest.poll_count, asking.updated_at)
    assert [item.key for item in await host.store.inputs(record.id)] == questions
