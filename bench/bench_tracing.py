"""What tracing costs: the same tool rounds with spans on (file exporter) and off.

Runs N ``list_suppliers`` calls through the real services against the demo server over stdio,
first without a tracer provider, then with the OTLP JSON file exporter, and prints the ratio.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

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


def main() -> None:
    """Measure both ways in one run and print the ratio of medians."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        off = asyncio.run(_rounds(folder, "off"))
        provider = setup_tracing(TelemetryConfig(folder=folder / "traces", synchronous=True))
        on = asyncio.run(_rounds(folder, "on"))
        provider.shutdown()
        spans = (folder / "traces" / "traces.jsonl").read_text().count("\n")
    m_off, m_on = statistics.median(off), statistics.median(on)
    print(f"tool round, tracing off: median {m_off * 1000:.2f} ms over {CALLS} calls")
    print(f"tool round, tracing on:  median {m_on * 1000:.2f} ms ({spans} spans written)")
    print(f"ratio on/off: {m_on / m_off:.2f}x")
