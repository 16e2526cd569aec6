"""Polling discipline: never sooner than a task's ``pollIntervalMs``, fair at start, and
notifications that apply news at once and do nothing for a repeat.

Scheduling is read with an injected clock (no waiting); the behaviour against the demo server is
read from what the server received (its request log).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mooring.core.clock import SystemClock, parse_timestamp
from mooring.core.events import Event, TaskDidChange
from mooring.core.tasks.checks import PollMark
from mooring.core.tasks.reconcile import ServerTask
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.services.task_monitor import TaskMonitor
from mooring.storage.store import SqlStore
from tests.services.conftest import (
    SAMPLES,
    Host,
    HostFactory,
    demo_definition,
    logged,
    run_until,
)

pytestmark = pytest.mark.anyio

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class ManualClock:
    """A clock the test sets."""

    def __init__(self, now: datetime) -> None:
        self.current = now

    def now(self) -> datetime:
        return self.current


def working(
    record_id: str, *, checked: datetime | None, interval_ms: int = 5_000, **changes: Any
) -> TaskRecord:
    return TaskRecord(
        id=record_id,
        server_id="server",
        tool="import_suppliers",
        argument_digest="digest",
        state=LocalState.WORKING,
        created_at=T0 - timedelta(hours=1),
        updated_at=checked or T0 - timedelta(hours=1),
        task_id=f"task-{record_id}",
        server_status="working",
        last_checked_at=checked,
        poll_interval_ms=interval_ms,
        **changes,
    )


def monitor_for(host: Host, clock: ManualClock, jitters: Iterator[float]) -> TaskMonitor:
    return TaskMonitor(
        ledger=host.store,
        catalog=host.store,
        gateway=host.gateway,
        events=host.events,
        clock=clock,
        jitter=lambda: next(jitters),
    )


async def test_a_task_checked_recently_is_due_a_full_interval_after_that_check(
    hosts: HostFactory,
) -> None:
    # (The jitter places a task on a listen stream in its interval's second half: T0 + 2.5 s.)
    monitor = monitor_for(await hosts(), ManualClock(T0), iter([0.0]))
    recent = working("recent", checked=T0 - timedelta(seconds=2))
    stale_plan = working(
        "planned", checked=T0 - timedelta(seconds=1), next_poll_at=T0 - timedelta(seconds=9)
    )

    monitor.track(recent)
    monitor.track(stale_plan, now=True)  # "at once" still waits for the interval

    assert monitor.due_at("recent") == T0 + timedelta(seconds=3)
    assert monitor.due_at("planned") == T0 + timedelta(seconds=4)


async def test_tasks_not_checked_lately_are_spread_over_their_first_interval(
    hosts: HostFactory,
) -> None:
    # Tasks that no listen stream re-reads (here: each asks for input) are polled as usual.
    monitor = monitor_for(await hosts(), ManualClock(T0), iter([0.0, 0.5, 0.999]))
    records = [
        replace(record, server_status="input_required")
        for record in (
            working("never", checked=None),
            working("overdue", checked=T0 - timedelta(minutes=5)),
            working(
                "stale", checked=T0 - timedelta(seconds=6), next_poll_at=T0 - timedelta(seconds=1)
            ),
        )
    ]
    for record in records:
        monitor.track(record)

    due = [monitor.due_at(r.id) for r in records]
    assert due == [
        T0,
        T0 + timedelta(milliseconds=2_500),
        T0 + timedelta(milliseconds=5_000),  # 4,995 raised to the next 250 ms tick
    ]
    assert all(at is not None and at <= T0 + timedelta(milliseconds=5_000) for at in due)


async def test_tasks_a_listen_stream_re_reads_are_first_polled_in_the_second_half(
    hosts: HostFactory,
) -> None:
    # Running tasks go on their server's listen stream, whose replay re-reads them as it opens
    # (a second or two after start); a first poll in the first half would come before that.
    monitor = monitor_for(await hosts(), ManualClock(T0), iter([0.0, 0.5, 0.999]))
    records = [
        working("never", checked=None),
        working("overdue", checked=T0 - timedelta(minutes=5)),
        working("stale", checked=T0 - timedelta(seconds=6), next_poll_at=T0 - timedelta(seconds=1)),
    ]
    for record in records:
        monitor.track(record)

    assert [monitor.due_at(r.id) for r in records] == [
        T0 + timedelta(milliseconds=2_500),
        T0 + timedelta(milliseconds=3_750),
        T0 + timedelta(milliseconds=5_000),  # 4,997.5 raised to the next 250 ms tick
    ]


async def test_asking_to_poll_soon_waits_for_the_interval(hosts: HostFactory) -> None:
    clock = ManualClock(T0)
    monitor = monitor_for(await hosts(), clock, iter([0.0]))
    monitor.track(
        working("r", checked=T0 - timedelta(seconds=1), next_poll_at=T0 + timedelta(days=9))
    )

    monitor.poll_soon("r")
    assert monitor.due_at("r") == T0 + timedelta(seconds=4)
    clock.current = T0 + timedelta(seconds=7)
    monitor.poll_soon("r")
    assert monitor.due_at("r") == T0 + timedelta(seconds=4)  # an earlier plan is kept


# -- against the demo server ---------------------------------------------------------------------


def task_gets(log: Path, task_id: str) -> list[datetime]:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line]
    return [
        parse_timestamp(entry["ts"])
        for entry in lines
        if entry.get("method") == "tasks/get" and entry.get("taskId") == task_id
    ]


async def test_the_server_never_sees_a_poll_sooner_than_the_interval_while_notified(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    log = tmp_path / "requests.log"
    # Status messages change every 100 ms: a notification with news each time, far more often
    # than the 400 ms the server asks between polls.
    server = demo_definition(
        tmp_path / "store.sqlite3",
        log,
        poll_interval_ms=400,
        checkpoint_delay_ms=100,
        rows_per_checkpoint=1,
    )
    await host.store.add_server(server)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    changes: list[TaskRecord] = []
    host.events.subscribe(
        lambda e: (
            changes.append(e.record)
            if isinstance(e, TaskDidChange) and e.record.id == record.id
            else None
        )
    )

    done = await run_until(host, record.id, lambda r: r.is_terminal)

    assert done.state is LocalState.COMPLETED
    assert done.task_id is not None
    polls = task_gets(log, done.task_id)
    gaps = [later - earlier for earlier, later in pairwise(polls)]
    assert all(gap >= timedelta(milliseconds=400) for gap in gaps), gaps
    # Notifications were applied as they came: more changes told than polls made.
    assert len({c.status_message for c in changes}) > len(polls)


async def test_a_notification_repeating_the_known_state_does_nothing_and_news_needs_no_poll(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    log = tmp_path / "requests.log"
    server = demo_definition(
        tmp_path / "store.sqlite3",
        log,
        poll_interval_ms=30_000,
        checkpoint_delay_ms=60_000,
        rows_per_checkpoint=1,
    )
    await host.store.add_server(server)
    created = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    record = await host.store.get(created.id)
    assert record is not None
    assert record.task_id is not None
    host.monitor.track(record)
    planned = host.monitor.due_at(record.id)
    told: list[Event] = []
    host.events.subscribe(told.append)
    gets_before = task_gets(log, record.task_id)

    same = ServerTask(
        task_id=record.task_id,
        status="working",
        status_message=record.status_message,
        created_at=record.server_created_at,
        last_updated_at=record.server_updated_at,
        ttl_ms=record.ttl_ms,
        poll_interval_ms=record.poll_interval_ms,
    )
    await host.monitor.take_notice(server.id, record.task_id, same)

    assert [e for e in told if isinstance(e, TaskDidChange)] == []
    assert await host.store.get(record.id) == record  # not written
    assert host.monitor.due_at(record.id) == planned

    news = ServerTask(
        task_id=record.task_id,
        status="working",
        status_message="Imported 1 of 5 rows",
        created_at=record.server_created_at,
        last_updated_at=datetime.now(UTC),
        ttl_ms=record.ttl_ms,
        poll_interval_ms=record.poll_interval_ms,
    )
    before = datetime.now(UTC)
    with anyio.fail_after(20):
        await host.monitor.take_notice(server.id, record.task_id, news)

    [change] = [e for e in told if isinstance(e, TaskDidChange)]
    assert change.record.status_message == "Imported 1 of 5 rows"
    stored = await host.store.get(record.id)
    assert stored is not None
    assert stored.status_message == "Imported 1 of 5 rows"
    assert task_gets(log, record.task_id) == gets_before  # applied, not polled
    due = host.monitor.due_at(record.id)
    assert due is not None
    assert due >= before + timedelta(milliseconds=30_000)


async def test_a_burst_of_frames_applies_the_newest_and_progress_never_holds_back_the_end(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    log = tmp_path / "requests.log"
    server = demo_definition(
        tmp_path / "store.sqlite3",
        log,
        poll_interval_ms=30_000,
        checkpoint_delay_ms=60_000,
        rows_per_checkpoint=1,
    )
    await host.store.add_server(server)
    created = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    record = await host.store.get(created.id)
    assert record is not None
    assert record.task_id is not None
    task_id = record.task_id
    told: list[str | None] = []
    applied = {"Imported 3 of 5 rows": anyio.Event(), "All rows imported": anyio.Event()}

    def listen(event: Event) -> None:
        if isinstance(event, TaskDidChange) and event.record.id == record.id:
            told.append(event.record.status_message)
            if event.record.status_message in applied:
                applied[event.record.status_message].set()

    host.events.subscribe(listen)

    def frame(status: str, message: str) -> ServerTask:
        assert record is not None
        return ServerTask(
            task_id=task_id,
            status=status,
            status_message=message,
            created_at=record.server_created_at,
            last_updated_at=datetime.now(UTC),
            ttl_ms=record.ttl_ms,
            poll_interval_ms=record.poll_interval_ms,
            result={"content": [], "isError": False} if status == "completed" else None,
        )

    # Three frames before any is acted on: each carries the whole task, only the newest counts.
    for n in (1, 2, 3):
        host.monitor.notified(server.id, task_id, frame("working", f"Imported {n} of 5 rows"))
    with anyio.fail_after(20):
        await applied["Imported 3 of 5 rows"].wait()
    # More progress right away is held back (progress alone is written at most every
    # PROGRESS_EVERY); the end is news and goes at once, replacing the progress still waiting.
    host.monitor.notified(server.id, task_id, frame("working", "Imported 4 of 5 rows"))
    host.monitor.notified(server.id, task_id, frame("completed", "All rows imported"))
    with anyio.fail_after(20):
        await applied["All rows imported"].wait()

    assert told == ["Imported 3 of 5 rows", "All rows imported"]
    stored = await host.store.get(record.id)
    assert stored is not None
    assert stored.state is LocalState.COMPLETED
    assert task_gets(log, task_id) == []  # applied as they came, never a tasks/get


async def test_polls_due_close_together_go_out_together_and_never_early(
    hosts: HostFactory,
) -> None:
    # Raised to the next 250 ms tick (a tenth of the interval when that is shorter), so the
    # loop, the database thread and the server wake once for a tick's polls, not once each.
    clock = ManualClock(T0)
    monitor = monitor_for(await hosts(), clock, itertools.repeat(0.0))
    spread = [T0 + timedelta(milliseconds=ms) for ms in (4_001, 4_120, 4_249, 4_250, 4_251)]
    for n, at in enumerate(spread):
        monitor.track(working(f"r{n}", checked=T0 - timedelta(seconds=1), next_poll_at=at))
    due = [monitor.due_at(f"r{n}") for n in range(len(spread))]
    assert due == [T0 + timedelta(milliseconds=ms) for ms in (4_250, 4_250, 4_250, 4_250, 4_500)]

    short = working("short", checked=T0, interval_ms=100)
    monitor.track(replace(short, next_poll_at=T0 + timedelta(milliseconds=103)))
    assert monitor.due_at("short") == T0 + timedelta(milliseconds=110)  # a tenth of 100 ms


async def test_many_tasks_due_together_are_polled_a_few_at_a_time_per_server_to_their_ends(
    hosts: HostFactory, tmp_path: Path
) -> None:
    """The monitor's per-server bound (``polling.per_server_concurrency``, 4): tasks due
    together take the server's poll slots in turn; each is followed to its end."""
    host = await hosts()
    log = tmp_path / "slots.log"
    # Each status answer takes a while, so polls sent together overlap on the server; it
    # reports no changes, so every task is followed by polling alone.
    server = demo_definition(
        tmp_path / "slots.sqlite3",
        log,
        fault_slow_get_ms=100,
        conformance_fixtures=1,
        fault_no_task_notifications=1,
    )
    await host.store.add_server(server)
    records = [
        await host.host.call(server, "slow_compute", {"seconds": 1, "label": f"s{n}"})
        for n in range(12)
    ]
    assert all(r.task_id is not None for r in records), [(r.state, r.reason) for r in records][:2]

    def due_together() -> None:
        for record in records:
            host.monitor.track(record, now=True)

    await followed_to_their_ends(host, {r.id for r in records}, due_together)

    for record in records:
        stored = await host.store.get(record.id)
        assert stored is not None
        assert stored.state is LocalState.COMPLETED, stored
    gets = logged(log, "tasks/get")
    assert {g["taskId"] for g in gets} == {r.task_id for r in records}
    assert 1 < max(g["inflight"] for g in gets) <= 4


async def test_a_record_asked_about_before_its_server_is_known_here_is_read_then_polled(
    hosts: HostFactory, tmp_path: Path
) -> None:
    """A poll asked for by id alone (an answer delivered for a task this monitor no longer
    keeps) reads the record for its server first, then polls it in that server's line."""
    first = await hosts()
    log = tmp_path / "late.log"
    server = demo_definition(
        tmp_path / "late.sqlite3",
        log,
        conformance_fixtures=1,
        fault_no_task_notifications=1,
    )
    await first.store.add_server(server)
    record = await first.host.call(server, "slow_compute", {"seconds": 0.5})
    assert record.task_id is not None
    await first.host.stop()

    later = await hosts()  # knows nothing of it but its id
    await followed_to_their_ends(later, {record.id}, lambda: later.monitor.poll_soon(record.id))
    stored = await later.store.get(record.id)
    assert stored is not None
    assert stored.state is LocalState.COMPLETED
    assert logged(log, "tasks/get")


async def followed_to_their_ends(
    host: Host, record_ids: set[str], start: Callable[[], None]
) -> None:
    """Run the host's monitor, ``start`` it on the records, until each is told to have ended
    (within a minute)."""
    ended = anyio.Event()
    finished: set[str] = set()

    def listen(event: Event) -> None:
        if isinstance(event, TaskDidChange) and event.record.is_terminal:
            finished.add(event.record.id)
            if record_ids <= finished:
                ended.set()

    unsubscribe = host.events.subscribe(listen)
    try:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(host.monitor.run)
                start()
                await ended.wait()
                group.cancel_scope.cancel()
    finally:
        unsubscribe()


class CheckWatch(SqlStore):
    """The host's store, with checks gathered for a minute (stored when the monitor stops),
    telling the test which records' checks wait to be stored."""

    def __init__(self, host: Host) -> None:
        super().__init__(host.db, SystemClock(), check_gather_s=60)
        self.waiting: set[str] = set()
        self.changed = anyio.Event()

    async def mark_checked(self, mark: PollMark, *, gather: bool = False) -> bool:
        assert gather  # a scheduled poll's check
        self.waiting.add(mark.record_id)
        self.changed.set()
        return await super().mark_checked(mark, gather=gather)

    async def until_waiting(self, record_ids: set[str]) -> None:
        """Until each of these records' checks waits to be stored."""
        while not record_ids <= self.waiting:
            self.changed = anyio.Event()
            await self.changed.wait()


@dataclass
class QuietTasks:
    """Three long tasks on one demo server whose polls find nothing new, and a monitor with one
    slot for the server whose checks gather (:class:`CheckWatch`)."""

    records: list[TaskRecord]
    before: dict[str, TaskRecord]
    """Each record as stored before the monitor runs."""
    store: CheckWatch
    monitor: TaskMonitor
    log: Path

    @property
    def ids(self) -> set[str]:
        return {r.id for r in self.records}


async def quiet_tasks(host: Host, tmp_path: Path, name: str) -> QuietTasks:
    log = tmp_path / f"{name}.log"
    server = demo_definition(
        tmp_path / f"{name}.sqlite3",
        log,
        conformance_fixtures=1,
        fault_no_task_notifications=1,
        poll_interval_ms=2_500,  # checks gather only for tasks polled this seldom or less
    )
    await host.store.add_server(server)
    records = [
        await host.host.call(server, "slow_compute", {"seconds": 120, "label": f"s{n}"})
        for n in range(3)
    ]
    # Asked once, so the status each reports ("computing ...") is stored: polls from now on
    # find nothing new, and only their checks are stored.
    before = {r.id: await host.monitor.refresh(r) for r in records}
    store = CheckWatch(host)
    monitor = TaskMonitor(
        ledger=store,
        catalog=host.store,
        gateway=host.gateway,
        events=host.events,
        clock=SystemClock(),
        per_server=1,
    )
    return QuietTasks(records, before, store, monitor, log)


async def test_a_poll_slot_is_free_once_the_server_answered_and_stopping_stores_the_checks(
    hosts: HostFactory, tmp_path: Path
) -> None:
    """With one slot per server, three tasks due together are all asked about while the first
    answers' checks still wait to be stored with the others; stopping the monitor stores
    them."""
    host = await hosts()
    quiet = await quiet_tasks(host, tmp_path, "slot")
    with anyio.fail_after(30):  # the checks gather for 60 s: the slots must not wait for them
        async with anyio.create_task_group() as group:
            group.start_soon(quiet.monitor.run)
            for record in quiet.records:
                quiet.monitor.track(record, now=True)
            await quiet.store.until_waiting(quiet.ids)
            for record in quiet.records:  # asked, answered, not stored yet
                assert (await host.store.get(record.id)) == quiet.before[record.id]
            await quiet.monitor.stop()
            group.cancel_scope.cancel()
    assert max(g["inflight"] for g in logged(quiet.log, "tasks/get")) == 1
    for record in quiet.records:
        was, stored = quiet.before[record.id], await host.store.get(record.id)
        assert stored is not None
        assert stored.poll_count == was.poll_count + 1
        assert stored.last_checked_at is not None
        assert stored.last_checked_at != was.last_checked_at
        assert stored.state is LocalState.WORKING


async def test_polls_a_stop_cut_short_or_left_waiting_are_made_when_the_monitor_runs_again(
    hosts: HostFactory, tmp_path: Path
) -> None:
    """Stopping abandons the poll in flight and those waiting for a slot; none is forgotten:
    the monitor run again polls every task."""
    host = await hosts()
    quiet = await quiet_tasks(host, tmp_path, "again")
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(quiet.monitor.run)
            for record in quiet.records:
                quiet.monitor.track(record, now=True)
            await anyio.lowlevel.checkpoint()  # a turn of the loop; stop cuts in wherever
            await quiet.monitor.stop()
            group.cancel_scope.cancel()
        async with anyio.create_task_group() as group:
            group.start_soon(quiet.monitor.run)
            await quiet.store.until_waiting(quiet.ids)
            await quiet.monitor.stop()
            group.cancel_scope.cancel()
