"""A task its server reports on (a ``subscriptions/listen`` stream that acknowledged it) is
polled only as a safety net; when the stream goes, normal polling comes back at once.

Read from what the demo server received (its request log) and from the monitor's schedule.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from mooring.core.events import TaskDidChange
from mooring.core.tasks.states import LocalState
from mooring.mcp.gateway import McpGateway
from mooring.mcp.lazy import LazyGateway
from tests.services.conftest import SAMPLES, HostFactory, close_host, demo_definition, run_until
from tests.services.test_poll_discipline import T0, ManualClock, monitor_for, task_gets, working

pytestmark = pytest.mark.anyio


async def test_a_task_the_server_reports_on_is_followed_to_its_end_without_polls(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    log = tmp_path / "requests.log"
    # Two rows every 600 ms, 12 rows; the server asks for a poll every 200 ms: between two
    # checkpoints, a poller that is not told would ask twice.
    server = demo_definition(
        tmp_path / "store.sqlite3",
        log,
        poll_interval_ms=200,
        checkpoint_delay_ms=600,
        rows_per_checkpoint=2,
    )
    await host.store.add_server(server)
    covered_at: list[datetime] = []

    def coverage(server_id: str, task_ids: frozenset[str], covered: bool) -> None:
        if covered and server_id == server.id:
            covered_at.append(datetime.now(UTC))

    host.gateway.add_coverage_listener(coverage)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )

    done = await run_until(host, record.id, lambda r: r.is_terminal)

    assert done.state is LocalState.COMPLETED
    assert done.task_id is not None
    assert covered_at, "the server never acknowledged the task on a listen stream"
    # A poll already on its way when the acknowledgement came may still arrive; none after.
    settled = covered_at[0] + timedelta(milliseconds=500)
    later = [at for at in task_gets(log, done.task_id) if at > settled]
    assert later == []
    assert done.status_message  # its progress and end came as notifications


async def test_when_the_stream_goes_the_task_is_polled_again_within_its_interval(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server = demo_definition(
        tmp_path / "store.sqlite3",
        tmp_path / "requests.log",
        poll_interval_ms=2_000,
        checkpoint_delay_ms=60_000,
        rows_per_checkpoint=1,
    )
    await host.store.add_server(server)
    covered = anyio.Event()
    lost = anyio.Event()

    def coverage(server_id: str, task_ids: frozenset[str], now_covered: bool) -> None:
        if server_id == server.id:
            (covered if now_covered else lost).set()

    host.gateway.add_coverage_listener(coverage)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    stored = await host.store.get(record.id)
    assert stored is not None

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(host.monitor.run)
            host.monitor.track(stored)
            await covered.wait()
            due = host.monitor.due_at(record.id)
            assert due is not None
            assert due >= datetime.now(UTC) + timedelta(minutes=4)  # the safety net only

            assert isinstance(host.gateway, LazyGateway)
            real = host.gateway.load()
            assert isinstance(real, McpGateway)
            await real.disconnect(server.id)  # the stream goes with its connection
            await lost.wait()
            due = host.monitor.due_at(record.id)
            assert due is not None
            # Within its interval of the loss, raised at most to the next poll tick (a tenth of
            # the interval here): polls due within one tick go out together.
            assert due <= datetime.now(UTC) + timedelta(milliseconds=2_000 + 200)

            await host.monitor.stop()
            group.cancel_scope.cancel()


async def test_a_server_that_accepts_no_task_subscription_is_polled_as_usual(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    log = tmp_path / "requests.log"
    server = demo_definition(
        tmp_path / "store.sqlite3",
        log,
        poll_interval_ms=100,
        checkpoint_delay_ms=150,
        rows_per_checkpoint=1,
        fault_no_task_notifications=1,
    )
    await host.store.add_server(server)
    covered: list[frozenset[str]] = []
    host.gateway.add_coverage_listener(lambda _s, ids, now: covered.append(ids) if now else None)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )

    done = await run_until(host, record.id, lambda r: r.is_terminal)

    assert done.state is LocalState.COMPLETED
    assert covered == []
    assert done.task_id is not None
    assert len(task_gets(log, done.task_id)) > 3  # 12 rows at 150 ms, polled every 100 ms


# -- the schedule, read with an injected clock ---------------------------------------------------


async def test_coverage_moves_polls_out_but_keeps_the_ttl_backstop(hosts: HostFactory) -> None:
    monitor = monitor_for(await hosts(), ManualClock(T0), itertools.repeat(0.0))
    plain = working("plain", checked=T0)
    # Created 50 s ago with a 60 s TTL: its last look is due in 10 s, covered or not.
    ending = working(
        "ending", checked=T0, server_created_at=T0 - timedelta(seconds=50), ttl_ms=60_000
    )
    for record in (plain, ending):
        monitor.track(record)
    assert monitor.due_at("plain") == T0 + timedelta(seconds=5)

    monitor.coverage_changed("server", frozenset({"task-plain", "task-ending"}), True)
    assert monitor.due_at("plain") == T0 + timedelta(minutes=5)
    assert monitor.due_at("ending") == T0 + timedelta(seconds=10)

    monitor.coverage_changed("server", frozenset({"task-plain"}), False)
    due = monitor.due_at("plain")
    assert due is not None
    assert due <= T0 + timedelta(seconds=5)  # back within its interval (here: at once)


async def test_after_a_restart_running_tasks_are_re_read_by_the_stream_not_polled(
    hosts: HostFactory, tmp_path: Path
) -> None:
    log = tmp_path / "requests.log"
    server = demo_definition(
        tmp_path / "store.sqlite3",
        log,
        # No first look before half of it: room for the listen stream to open first on a busy
        # machine (2 s left it 1 s, and a loaded CI run polled all three tasks).
        poll_interval_ms=10_000,
        checkpoint_delay_ms=60_000,
        rows_per_checkpoint=1,
    )
    first = await hosts()
    await first.store.add_server(server)
    records = [
        await first.host.call(
            server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
        )
        for _ in range(3)
    ]
    await close_host(first)  # the app quits while the tasks run

    again = await hosts()  # ... and starts again on the same database
    covered: set[str] = set()
    all_covered = anyio.Event()

    def coverage(server_id: str, task_ids: frozenset[str], now_covered: bool) -> None:
        if now_covered and server_id == server.id:
            covered.update(task_ids)
            if len(covered) == len(records):
                all_covered.set()

    again.gateway.add_coverage_listener(coverage)
    told = [anyio.Event()]  # a poll in flight as coverage came plans its task's next when done

    def on_change(_event: TaskDidChange) -> None:
        told[0].set()

    again.events.on(TaskDidChange, on_change)
    gets_before = len([line for line in log.read_text().splitlines() if '"tasks/get"' in line])
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(again.monitor.run)
            task_ids = []
            for record in records:
                stored = await again.store.get(record.id)
                assert stored is not None
                assert stored.task_id is not None
                task_ids.append(stored.task_id)
                again.monitor.track(stored)
            await all_covered.wait()
            while any(again.monitor.due_at(r.id) is None for r in records):
                told[0] = anyio.Event()
                await told[0].wait()
            for record in records:
                due = again.monitor.due_at(record.id)
                assert due is not None
                assert due >= datetime.now(UTC) + timedelta(minutes=4)
            await again.monitor.stop()
            group.cancel_scope.cancel()

    lines = log.read_text().splitlines()
    [listen] = [line for line in lines if '"subscriptions/listen"' in line and "taskIds" in line]
    assert all(task_id in listen for task_id in task_ids)
    # The first look, at most: the stream's opening re-read the tasks.
    gets_after = len([line for line in lines if '"tasks/get"' in line]) - gets_before
    assert gets_after <= 1
