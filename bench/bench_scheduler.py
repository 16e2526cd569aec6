"""What waiting costs: one scheduler for 1,000 active tasks versus an idle event loop.

1,000 monitored task records whose next poll is an hour away are handed to the real
TaskMonitor; the process CPU time spent while the loop runs for a fixed wall time is compared
with the same loop running nothing. (A task per poll loop would wake 1,000 coroutines instead.)
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mooring.core.clock import SystemClock
from mooring.core.events import EventBus
from mooring.core.ports import ConnectionStatus, ServerConnection
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.services.task_monitor import TaskMonitor
from mooring.storage.db import Database
from mooring.storage.store import SqlStore

TASKS = 1_000
WALL_S = 2.0


class _NoGateway:
    """Nothing is due within the measurement, so no connection is ever asked for."""

    async def connect(
        self, server: ServerDefinition, profile_id: str | None = None
    ) -> ServerConnection:
        raise AssertionError("no poll is due during the benchmark")

    def statuses(self) -> list[ConnectionStatus]:
        return []

    def add_task_listener(self, listener: object) -> None:
        return None

    def add_status_listener(self, listener: object) -> None:
        return None

    def want_task_notifications(self, wanted: bool) -> None:
        return None

    def add_tools_listener(self, listener: object) -> None:
        return None

    async def aclose(self) -> None:
        return None


async def _measure(with_tasks: bool, folder: Path) -> float:
    db = Database.open(folder / f"{with_tasks}.sqlite3")
    clock = SystemClock()
    store = SqlStore(db, clock)
    monitor = TaskMonitor(
        ledger=store, catalog=store, gateway=_NoGateway(), events=EventBus(), clock=clock
    )
    later = datetime.now(UTC) + timedelta(hours=1)
    if with_tasks:
        for i in range(TASKS):
            monitor.track(
                TaskRecord(
                    id=f"op-{i}",
                    server_id="s",
                    tool="t",
                    argument_digest="d",
                    state=LocalState.WORKING,
                    task_id=f"task-{i}",
                    created_at=later,
                    updated_at=later,
                    next_poll_at=later + timedelta(seconds=i),
                )
            )
    runner = asyncio.create_task(monitor.run())
    start = time.process_time()
    await asyncio.sleep(WALL_S)  # the benchmark's own measuring window
    spent = time.process_time() - start
    await monitor.stop()
    runner.cancel()
    db.close()
    return spent


def main() -> None:
    """Print CPU time while 1,000 tasks wait, against an idle loop."""
    with tempfile.TemporaryDirectory() as tmp:
        idle = asyncio.run(_measure(False, Path(tmp)))
        busy = asyncio.run(_measure(True, Path(tmp)))
    print(
        f"scheduler, {WALL_S:.0f} s wall: idle loop {idle * 1000:.1f} ms CPU, "
        f"{TASKS} waiting tasks {busy * 1000:.1f} ms CPU"
    )
    print(f"ratio waiting/idle: {busy / max(idle, 1e-6):.2f}x")
