"""What tracing costs: the same tool rounds with spans on (file exporter) and off.

Runs N ``list_suppliers`` calls through the real services against the demo server over stdio,
first without a tracer provider, then with the OTLP JSON file exporter (id ``tracing_round``).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.suite import Result, Size, measured
from mooring.adapters.telemetry import TelemetryConfig, setup_tracing
from mooring.core.approval.policy import Guards
from mooring.core.clock import SystemClock
from mooring.core.events import EventBus
from mooring.core.ids import new_id
from mooring.core.servers import ServerDefinition, Transport
from mooring.mcp.gateway import McpGateway
from mooring.services.approvals import ApprovalBroker
from mooring.services.task_monitor import TaskMonitor
from mooring.services.tool_runner import ToolRunner
from mooring.storage.db import Database
from mooring.storage.store import SqlStore

IDS = ("tracing_round",)
CALLS = 40


async def _rounds(folder: Path, label: str) -> list[float]:
    db = Database.open(folder / f"{label}.sqlite3")
    clock = SystemClock()
    store = SqlStore(db, clock)
    gateway = McpGateway()
    events = EventBus()
    monitor = TaskMonitor(ledger=store, catalog=store, gateway=gateway, events=events, clock=clock)
    server = ServerDefinition(
        id=new_id(),
        alias="demo",
        transport=Transport.STDIO,
        command=sys.executable,
        args=("-m", "mooring.demo_server", "--store", str(folder / f"{label}-demo.sqlite3")),
        trusted=True,
        created_at=datetime.now(UTC),
    )
    await store.add_server(server)
    broker = ApprovalBroker(
        rules=store, clock=clock, guards_for=lambda _s: Guards(max_argument_bytes=1 << 20)
    )
    runner = ToolRunner(
        ledger=store, gateway=gateway, monitor=monitor, broker=broker, events=events, clock=clock
    )
    await runner.call(server, "list_suppliers", {})  # warm up: start the server
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        await runner.call(server, "list_suppliers", {})
        times.append(time.perf_counter() - start)
    await gateway.aclose()
    db.close()
    return times


def run(size: Size, folder: Path, wanted: Callable[[str], bool]) -> list[Result]:
    """``tracing_round``: median tool round with trace files written versus tracing off."""
    if not wanted("tracing_round"):
        return []
    off = asyncio.run(_rounds(folder, "off"))
    provider = setup_tracing(TelemetryConfig(folder=folder / "traces", synchronous=True))
    try:
        on = asyncio.run(_rounds(folder, "on"))
    finally:
        provider.shutdown()
    spans = (folder / "traces" / "traces.jsonl").read_text().count("\n")
    m_off, m_on = statistics.median(off), statistics.median(on)
    return [
        measured(
            "tracing_round",
            f"one list_suppliers tool round (stdio) with trace files written ({spans} spans) "
            f"vs tracing off, median of {CALLS}",
            value=m_on * 1e3,
            baseline=m_off * 1e3,
            unit="ms",
            target="<= 1.05x",
            met=m_on <= m_off * 1.05,
        )
    ]
