"""Following tasks another process polls: changes come from the database, not from servers; the
poller lock decides who polls, and a follower takes over when the poller is gone."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from mooring.adapters.poller_lock import FilePollerLock
from mooring.core.clock import SystemClock
from mooring.core.conversation import ToolRound
from mooring.core.events import Event, TaskDidChange
from mooring.core.ids import argument_digest, new_id
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.reconcile import Outcome, Reconciliation
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.services.follower import Adopter, DatabaseFollower, reread_interval
from tests.core.tasks.factories import make_record
from tests.services.conftest import Host, HostFactory, demo_definition

pytestmark = pytest.mark.anyio


def test_a_second_lock_on_the_same_folder_is_refused_until_the_first_lets_go(
    tmp_path: Path,
) -> None:
    path = tmp_path / "poller.lock"
    first = FilePollerLock(path, "box:101:9")
    second = FilePollerLock(path, "box:202:9")
    assert second.holder() is None
    assert first.try_acquire()
    assert not second.try_acquire()
    assert second.holder() == "box pid 101"
    first.release()
    assert second.holder() is None
    assert second.try_acquire()
    second.release()


def test_a_dead_pollers_lock_is_free(tmp_path: Path) -> None:
    path = tmp_path / "poller.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path\n"
            "from mooring.adapters.poller_lock import FilePollerLock\n"
            f"assert FilePollerLock(Path({str(path)!r}), 'box:1:1').try_acquire()\n"
            "print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    mine = FilePollerLock(path, "box:2:2")
    assert not mine.try_acquire()
    holder.kill()
    holder.wait(timeout=10)
    for stream in (holder.stdin, holder.stdout):
        if stream is not None:
            stream.close()
    assert mine.try_acquire()  # killed: the kernel released it, no stale file blocks us
    mine.release()


def test_the_reread_interval_follows_the_servers_poll_interval() -> None:
    assert reread_interval(make_record(poll_interval_ms=200)) == timedelta(milliseconds=200)
    assert reread_interval(make_record(poll_interval_ms=1)) == timedelta(milliseconds=50)
    assert reread_interval(make_record(poll_interval_ms=None)) == timedelta(seconds=1)
    assert reread_interval(make_record(poll_interval_ms=10**9)) == timedelta(seconds=30)


async def test_a_follower_tells_what_another_process_wrote_and_takes_over_when_it_stops(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server = demo_definition(tmp_path / "store.sqlite3", tmp_path / "requests.log")
    await host.store.add_server(server)
    now = datetime.now(UTC)
    tool_round = ToolRound(
        id=new_id(),
        server_id=server.id,
        tool="import_suppliers",
        arguments={},
        argument_digest=argument_digest({}),
        created_at=now,
    )
    record = TaskRecord(
        id=new_id(),
        server_id=server.id,
        tool="import_suppliers",
        argument_digest=tool_round.argument_digest,
        state=LocalState.CREATING,
        created_at=now,
        updated_at=now,
        tool_round_id=tool_round.id,
    )
    await host.store.begin_operation(tool_round, record)
    working = record.transition(
        LocalState.WORKING, at=now, task_id="t-1", poll_interval_ms=50, server_created_at=now
    )
    await host.store.save(working, expected_updated_at=record.updated_at)

    other = FilePollerLock(tmp_path / "poller.lock", "elsewhere:4242:1")
    assert other.try_acquire()  # another process polls
    lock = FilePollerLock(tmp_path / "poller.lock", "here:1:1")
    took_over = anyio.Event()
    follower = DatabaseFollower(
        ledger=host.store,
        events=host.events,
        clock=SystemClock(),
        lock=lock,
        monitor=host.monitor,
        on_takeover=took_over.set,
    )
    seen: list[Event] = []
    asked = anyio.Event()

    def listen(event: Event) -> None:
        seen.append(event)
        if isinstance(event, TaskDidChange) and event.new_inputs:
            asked.set()

    host.events.subscribe(listen)
    follower.track(working)
    async with anyio.create_task_group() as group:
        group.start_soon(follower.run)
        # "The other process" polls and persists a question.
        later = working.updated_at + timedelta(seconds=1)
        waiting = working.transition(LocalState.INPUT_REQUIRED, at=later)
        await host.store.apply(
            Reconciliation(
                outcome=Outcome.TRANSITIONED,
                record=waiting,
                previous_state=LocalState.WORKING,
                input_requests={"q1": {"method": "elicitation/create", "params": {}}},
                base_updated_at=working.updated_at,
            )
        )
        with anyio.fail_after(20):
            await asked.wait()
        [change] = [e for e in seen if isinstance(e, TaskDidChange)]
        assert change.previous_state is LocalState.WORKING
        assert change.record.state is LocalState.INPUT_REQUIRED
        assert [i.key for i in change.new_inputs] == ["q1"]
        assert not follower.polling

        other.release()  # the other process ends
        with anyio.fail_after(20):
            await took_over.wait()
        assert lock.holder() == "here pid 1"
        await follower.stop()
        group.cancel_scope.cancel()
    lock.release()


async def _working_record(host: Host, server: ServerDefinition) -> TaskRecord:
    now = datetime.now(UTC)
    tool_round = ToolRound(
        id=new_id(),
        server_id=server.id,
        tool="import_suppliers",
        arguments={},
        argument_digest=argument_digest({}),
        created_at=now,
    )
    record = TaskRecord(
        id=new_id(),
        server_id=server.id,
        tool="import_suppliers",
        argument_digest=tool_round.argument_digest,
        state=LocalState.CREATING,
        created_at=now,
        updated_at=now,
        tool_round_id=tool_round.id,
    )
    await host.store.begin_operation(tool_round, record)
    working = record.transition(
        LocalState.WORKING,
        at=now,
        task_id=new_id(),
        server_created_at=now,
        next_poll_at=now + timedelta(hours=1),
    )
    await host.store.save(working, expected_updated_at=record.updated_at)
    return working


async def test_the_poller_adopts_tasks_started_elsewhere_once_but_not_orphans(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    live = demo_definition(tmp_path / "a.sqlite3", tmp_path / "a.log")
    gone = dataclasses.replace(
        demo_definition(tmp_path / "b.sqlite3", tmp_path / "b.log"), alias="old"
    )
    await host.store.add_server(live)
    await host.store.add_server(gone)
    known = await _working_record(host, live)
    new = await _working_record(host, live)
    orphan = await _working_record(host, gone)
    await host.store.remove_server(gone.id)
    adopter = Adopter(
        ledger=host.store,
        catalog=host.store,
        accounts=host.store,
        monitor=host.monitor,
        known={known.id},
    )
    adopted = await adopter.adopt()
    assert [r.id for r in adopted] == [new.id]
    assert host.monitor.scheduled == 1
    assert await adopter.adopt() == []  # once
    assert orphan.id not in {r.id for r in await adopter.adopt()}


async def test_a_window_follower_finds_new_tasks_and_takes_over_with_nothing_to_follow(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    live = demo_definition(tmp_path / "a.sqlite3", tmp_path / "a.log")
    await host.store.add_server(live)
    other = FilePollerLock(tmp_path / "poller.lock", "elsewhere:4242:1")
    assert other.try_acquire()
    lock = FilePollerLock(tmp_path / "poller.lock", "here:1:1")
    took_over = anyio.Event()
    follower = DatabaseFollower(
        ledger=host.store,
        events=host.events,
        clock=SystemClock(),
        lock=lock,
        monitor=host.monitor,
        on_takeover=took_over.set,
        discover=True,
    )
    changed = anyio.Event()
    host.events.subscribe(
        lambda e: changed.set() if isinstance(e, TaskDidChange) and e.state_changed else None
    )
    record = await _working_record(host, live)  # started by another process
    assert [r.id for r in await follower.discover_new()] == [record.id]
    assert await follower.discover_new() == []
    async with anyio.create_task_group() as group:
        group.start_soon(follower.run)
        failed = record.transition(LocalState.FAILED, at=record.updated_at + timedelta(seconds=1))
        await host.store.save(failed, expected_updated_at=record.updated_at)
        with anyio.fail_after(20):
            await changed.wait()
        other.release()
        with anyio.fail_after(20):
            await took_over.wait()  # nothing left to follow: the lock is still looked at
        await follower.stop()
        group.cancel_scope.cancel()
    lock.release()
