"""Notification latency: from a task's completion on the server to the notification sent.

The bundled demo server runs as a real stdio subprocess with ``pollIntervalMs`` = 500; the real
tool runner, task monitor, SQLite ledger and notifier run in this process (the notifier's sink
records when each notice was handed over; bursts are not merged here, so every completion is
measured). The server's ``lastUpdatedAt`` at completion is the start of the clock.

Two runs: ``notify_latency_subscribed``, with ``notifications/tasks`` subscribed (a notification
triggers the ``tasks/get``; target p95 ≤ 100 ms), and ``notify_latency_polling``, by polling
alone (the monitor ignores notifications; target ≤ the poll interval + 100 ms).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.suite import Result, Size, measured
from mooring.core.approval.policy import Guards
from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome, ApprovalRequest
from mooring.core.clock import SystemClock
from mooring.core.events import EventBus, TaskDidChange
from mooring.core.ids import new_id
from mooring.core.notifications import Notice, NotifyPrefs, WhenToNotify
from mooring.core.ports import ConnectionStatus, Gateway, ServerConnection
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.reconcile import Observation, ServerTask
from mooring.core.tasks.states import LocalState
from mooring.mcp.gateway import McpGateway
from mooring.services.approvals import ApprovalBroker
from mooring.services.notifier import Notifier
from mooring.services.task_monitor import TaskMonitor
from mooring.services.tool_runner import ToolRunner
from mooring.storage.db import Database
from mooring.storage.store import SqlStore

IDS = ("notify_latency_subscribed", "notify_latency_polling")
POLL_MS = 500
SAMPLES = Path(__file__).resolve().parents[1] / "resources" / "samples" / "suppliers_clean.csv"


class _PollingOnly:
    """The real gateway, but nobody is told about ``notifications/tasks``: polling alone."""

    def __init__(self, inner: McpGateway) -> None:
        self._inner = inner

    async def connect(
        self, server: ServerDefinition, profile_id: str | None = None
    ) -> ServerConnection:
        return await self._inner.connect(server, profile_id)

    def statuses(self) -> list[ConnectionStatus]:
        return self._inner.statuses()

    async def disconnect(
        self, server_id: str, profile_id: str | None = None, *, every_account: bool = False
    ) -> None:
        await self._inner.disconnect(server_id, profile_id, every_account=every_account)

    def idle_connections(self, idle_after: float) -> list[tuple[str, str | None]]:
        return self._inner.idle_connections(idle_after)

    async def end_if_idle(self, server_id: str, profile_id: str | None, idle_after: float) -> bool:
        return await self._inner.end_if_idle(server_id, profile_id, idle_after)

    def add_task_listener(self, listener: Callable[[str, str, Observation | None], None]) -> None:
        return None

    def want_task_notifications(self, wanted: bool) -> None:
        return None  # polling alone: no listen stream either

    def task_covered(self, server_id: str, profile_id: str | None, task_id: str) -> bool:
        return False  # no stream: every task is polled

    def add_coverage_listener(self, listener: Callable[[str, frozenset[str], bool], None]) -> None:
        return None

    def expect_task(self, server_id: str, profile_id: str | None, seen: ServerTask) -> None:
        return None  # no stream: polled

    def add_status_listener(self, listener: Callable[[ConnectionStatus], None]) -> None:
        self._inner.add_status_listener(listener)

    def add_tools_listener(self, listener: Callable[[str, str | None], None]) -> None:
        self._inner.add_tools_listener(listener)

    def add_lists_listener(self, listener: Callable[[str, str | None, str], None]) -> None:
        self._inner.add_lists_listener(listener)

    def secrets_changed(self, server_id: str) -> None:
        self._inner.secrets_changed(server_id)

    def signed_in(self, server_id: str, profile_id: str | None) -> None:
        self._inner.signed_in(server_id, profile_id)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Recorder:
    def __init__(self) -> None:
        self.shown: list[tuple[Notice, datetime]] = []

    async def show(self, notice: Notice) -> str:
        self.shown.append((notice, datetime.now(UTC)))
        return "recorder"


async def _approve(_request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(ApprovalOutcome.APPROVED)


async def _run(folder: Path, *, subscribed: bool, tasks: int) -> list[float]:
    db = Database.open(folder / f"bench-{subscribed}.sqlite3")
    clock = SystemClock()
    store = SqlStore(db, clock)
    events = EventBus()
    real = McpGateway()
    gateway: Gateway = real if subscribed else _PollingOnly(real)
    monitor = TaskMonitor(ledger=store, catalog=store, gateway=gateway, events=events, clock=clock)
    broker = ApprovalBroker(
        rules=store.rules,
        clock=clock,
        guards_for=lambda _s: Guards(max_argument_bytes=1 << 20),
        ask=_approve,
    )
    runner = ToolRunner(
        ledger=store, gateway=gateway, monitor=monitor, broker=broker, events=events, clock=clock
    )
    recorder = _Recorder()
    notifier = Notifier(
        events=events,
        catalog=store,
        sink=recorder,
        clock=clock,
        prefs=lambda: NotifyPrefs(when=WhenToNotify.ALWAYS),
        merge_window=timedelta(0),
    )
    server = ServerDefinition(
        id=new_id(),
        alias="demo",
        transport=Transport.STDIO,
        command=sys.executable,
        args=("-m", "mooring.demo_server", "--store", str(folder / f"demo-{subscribed}.sqlite3")),
        env={
            "MOORING_DEMO_POLL_INTERVAL_MS": str(POLL_MS),
            "MOORING_DEMO_ROWS_PER_CHECKPOINT": "1",
            "MOORING_DEMO_CHECKPOINT_DELAY_MS": "37",
        },
        created_at=datetime.now(UTC),
    )
    await store.add_server(server)
    finished: dict[str, datetime] = {}
    all_done = asyncio.Event()

    def listen(event: object) -> None:
        if isinstance(event, TaskDidChange) and event.record.state is LocalState.COMPLETED:
            assert event.record.server_updated_at is not None
            finished[event.record.id] = event.record.server_updated_at
            if len(finished) == tasks:
                all_done.set()

    events.subscribe(listen)
    notifier.start()
    scheduler = asyncio.create_task(monitor.run())
    delivering = asyncio.create_task(notifier.run())
    for _ in range(tasks):
        await runner.call(server, "import_suppliers", {"path": str(SAMPLES)})
        await asyncio.sleep(0.11)  # stagger the starts: completions spread over the interval
    await asyncio.wait_for(all_done.wait(), 120)
    await notifier.aclose(delivering)
    await monitor.stop()
    scheduler.cancel()
    await gateway.aclose()
    db.close()
    latencies = []
    for notice, at in recorder.shown:
        if notice.target is not None and notice.target.record_id in finished:
            latencies.append((at - finished[notice.target.record_id]).total_seconds() * 1000)
    return latencies


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]


def run(size: Size, folder: Path, wanted: Callable[[str], bool]) -> list[Result]:
    """p95 notification latency, subscribed (``notify_latency_subscribed``) and by polling
    alone (``notify_latency_polling``)."""
    results = []
    for id_, subscribed, target, how in (
        ("notify_latency_subscribed", True, 100.0, "with notifications/tasks"),
        ("notify_latency_polling", False, POLL_MS + 100.0, f"by polling alone ({POLL_MS} ms)"),
    ):
        if not wanted(id_):
            continue
        values = asyncio.run(_run(folder, subscribed=subscribed, tasks=size.notify_tasks))
        p95 = _p95(values)
        results.append(
            measured(
                id_,
                f"task completion on the server -> notification handed over, {how}, "
                f"{len(values)} tasks (p95)",
                value=p95,
                baseline=None,
                unit="ms",
                target=f"p95 <= {target:g} ms",
                met=p95 <= target,
                p50_ms=round(statistics.median(values), 1),
            )
        )
    return results
