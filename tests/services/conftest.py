"""An in-process host: real services, a real SQLite file, real MCP connections, a real demo
server as a subprocess — everything but a window."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from mooring.bootstrap import build_host as wire_host
from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome, ApprovalRequest
from mooring.core.chat import ProviderFactory
from mooring.core.events import Event, EventBus
from mooring.core.ids import new_id
from mooring.core.ports import Gateway
from mooring.core.servers import ServerDefinition, Transport
from mooring.mcp.transport import TransportOpener
from mooring.services.approvals import ApprovalBroker
from mooring.services.chat import ProviderResolver
from mooring.services.host import Host as RealHost
from mooring.services.reconciler import Reconciler
from mooring.services.sampling import InputBroker
from mooring.services.task_monitor import TaskMonitor
from mooring.services.tool_runner import ToolRunner
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from mooring.storage.store import SqlStore

REPO = Path(__file__).resolve().parents[2]

Models = tuple[ProviderResolver | None, ProviderFactory]
"""How a host's chat finds and builds its model (a scripted one in tests)."""
SAMPLES = REPO / "resources" / "samples"


@dataclass
class Host:
    """One in-process Mooring host."""

    db: Database
    store: SqlStore
    gateway: Gateway
    events: EventBus
    monitor: TaskMonitor
    broker: ApprovalBroker
    runner: ToolRunner
    reconciler: Reconciler
    host: RealHost
    seen: list[Event] = field(default_factory=list)
    closed: bool = False
    asked: list[ApprovalRequest] = field(default_factory=list)
    answers: list[ApprovalAnswer] = field(default_factory=list)
    inputs: InputBroker | None = None


async def build_host(
    db_path: Path,
    logs: Path,
    models: Models | None = None,
    open_transport: TransportOpener | None = None,
) -> Host:
    """The services exactly as bootstrap wires them, with short deadlines and a scripted
    asker that approves unless the test queued other answers."""
    root = db_path.parent
    paths = Paths(data_dir=root, config_dir=root / "config", log_dir=logs, overridden=True)
    settings = Settings({"mcp.request_timeout_ms": 10_000, "mcp.call_timeout_ms": 30_000})
    db = Database.open(db_path)
    host_ref: list[Host] = []

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        host = host_ref[0]
        host.asked.append(request)
        if host.answers:
            return host.answers.pop(0)
        return ApprovalAnswer(ApprovalOutcome.APPROVED)

    real = wire_host(paths, settings, db, ask=ask, models=models, open_transport=open_transport)
    assert isinstance(real.ledger, SqlStore)
    host = Host(
        db,
        real.ledger,
        real.gateway,
        real.events,
        real.monitor,
        real.broker,
        real.runner,
        real.reconciler,
        real,
    )
    host.inputs = real.inputs
    host_ref.append(host)
    real.events.subscribe(host.seen.append)
    return host


async def close_host(host: Host) -> None:
    """Stop polling, close connections (their server processes end), release the file."""
    if host.closed:
        return
    host.closed = True
    with anyio.fail_after(30):
        await host.monitor.stop()
        await host.gateway.aclose()
    host.db.close()


def logged(request_log: Path, method: str) -> list[dict[str, Any]]:
    """The requests of one method the demo server wrote to its request log, oldest first."""
    lines = request_log.read_text().splitlines() if request_log.exists() else []
    return [entry for entry in map(json.loads, lines) if entry.get("method") == method]


def demo_definition(store: Path, request_log: Path, **settings: Any) -> ServerDefinition:
    """The demo server over stdio with fast test settings."""
    env = {
        "MOORING_DEMO_POLL_INTERVAL_MS": "50",
        "MOORING_DEMO_LEASE_MS": "400",
        "MOORING_DEMO_REQUEST_LOG": str(request_log),
        "MOORING_DEMO_SAMPLES_DIR": str(SAMPLES),
    }
    env.update({f"MOORING_DEMO_{k.upper()}": str(v) for k, v in settings.items()})
    if os.environ.get("PYTHONPATH"):  # the server runs the sources under test
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return ServerDefinition(
        id=new_id(),
        alias="demo",
        transport=Transport.STDIO,
        command=sys.executable,
        args=("-m", "mooring.demo_server", "--store", str(store)),
        env=env,
        created_at=datetime.now(UTC),
    )


HostFactory = Callable[..., Awaitable[Host]]
"""``await hosts()`` (or ``hosts(models=(resolve, factory))`` for a host whose chat talks to a
scripted model; ``hosts(open_transport=...)`` for one whose servers run in-process)."""


@pytest.fixture
async def hosts(tmp_path: Path) -> AsyncIterator[HostFactory]:
    """Make hosts on one database (a second one stands for the app after a restart)."""
    made: list[Host] = []

    async def make(
        models: Models | None = None, open_transport: TransportOpener | None = None
    ) -> Host:
        host = await build_host(
            tmp_path / "mooring.sqlite3", tmp_path / "server-logs", models, open_transport
        )
        made.append(host)
        return host

    try:
        yield make
    finally:
        for host in made:
            await close_host(host)


async def run_until(
    host: Host, record_id: str, done: Callable[[Any], bool], limit: float = 60
) -> Any:
    """Run the host's scheduler until the record satisfies ``done`` (bounded by ``limit``)."""
    from mooring.core.events import TaskDidChange

    reached = anyio.Event()
    latest: list[Any] = []

    def listen(event: Event) -> None:
        if isinstance(event, TaskDidChange) and event.record.id == record_id:
            latest.append(event.record)
            if done(event.record):
                reached.set()

    unsubscribe = host.events.subscribe(listen)
    current = await host.store.get(record_id)
    assert current is not None
    if done(current):
        unsubscribe()
        return current
    try:
        with anyio.fail_after(limit):
            async with anyio.create_task_group() as group:
                group.start_soon(host.monitor.run)
                host.monitor.track(current, now=True)
                await reached.wait()
                await host.monitor.stop()
                group.cancel_scope.cancel()
    finally:
        unsubscribe()
    return latest[-1]
