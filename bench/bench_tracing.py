"""What tracing costs: the same tool rounds with spans on (file exporter) and off.

``list_suppliers`` calls through the real services against the demo server over stdio (id
``tracing_round``); the figure is the host's CPU time per round (every thread of the host
process; the server's time is not tracing's cost, and its waits made the wall time of a round
swing by more than the 5 % measured). A process has one tracer provider for good, so each side
runs in child processes (``python -m bench.bench_tracing off|on FOLDER BLOCK CALLS``, one JSON list
of per-round CPU seconds on stdout), and the sides alternate in pairs, which side goes first
switching from pair to pair (off-on, on-off, ...). The ratio is the geometric mean of the
pairs' ratios of medians: drift in the machine's speed hits both sides of a pair alike, and
any edge the first child of a pair has cancels out over the pairs. (Run one after the other,
with wall times, the sides read anywhere from 0.95x to 1.10x.)
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.fleet import child_env
from bench.suite import Result, Size, in_turn, measured
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
CALLS = 20
"""Timed calls per child process, after its warm-up (``small``: 3)."""
PAIRS = 8
"""Pairs of child processes (an even number: as many pairs start with each side; ``small``: 1)."""


async def _rounds(folder: Path, label: str, calls: int) -> list[float]:
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
        rules=store.rules, clock=clock, guards_for=lambda _s: Guards(max_argument_bytes=1 << 20)
    )
    runner = ToolRunner(
        ledger=store, gateway=gateway, monitor=monitor, broker=broker, events=events, clock=clock
    )
    await runner.call(server, "list_suppliers", {})  # warm up: start the server
    times = []
    for _ in range(calls):
        start = time.process_time()
        await runner.call(server, "list_suppliers", {})
        times.append(time.process_time() - start)
    await gateway.aclose()
    db.close()
    return times


def _block(folder: Path, side: str, block: int, calls: int) -> list[float]:
    """One child process's CPU seconds per round (``side`` is ``off`` or ``on``)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_tracing", side, str(folder), str(block), str(calls)],
        capture_output=True,
        text=True,
        env=child_env(),
        check=True,
        timeout=300,
    )
    return [float(t) for t in json.loads(done.stdout.strip().splitlines()[-1])]


def run(size: Size, folder: Path, wanted: Callable[[str], bool]) -> list[Result]:
    """``tracing_round``: median tool round with trace files written versus tracing off, the
    sides alternating in child processes."""
    if not wanted("tracing_round"):
        return []
    pairs, calls = (1, 3) if size.name == "small" else (PAIRS, CALLS)
    times: dict[str, list[float]] = {"off": [], "on": []}
    ratios = []
    for block in range(pairs):
        pair: dict[str, list[float]] = {}
        for side in in_turn(block, "off", "on"):
            pair[side] = _block(folder, side, block, calls)
            times[side] += pair[side]
        ratios.append(statistics.median(pair["on"]) / statistics.median(pair["off"]))
    spans = sum(f.read_text().count("\n") for f in (folder / "traces").glob("*/traces.jsonl"))
    m_off, m_on = statistics.median(times["off"]), statistics.median(times["on"])
    ratio = statistics.geometric_mean(ratios)
    return [
        measured(
            "tracing_round",
            "host CPU of one list_suppliers tool round (stdio) with trace files written "
            f"({spans} lines) "
            f"vs tracing off, {len(times['on'])} rounds a side in {pairs} pairs of child "
            "processes (value, baseline: medians; ratio: geometric mean of the pairs' ratios)",
            value=m_on * 1e3,
            baseline=m_off * 1e3,
            unit="ms CPU",
            target="<= 1.05x",
            met=ratio <= 1.05,
            ratio=ratio,
            pair_ratios=[round(r, 3) for r in ratios],
        )
    ]


def child(side: str, folder: Path, block: int, calls: int) -> None:
    """A child's work: one block of rounds, tracing to files when ``side`` is ``on``."""
    here = folder / f"{side}-{block}"
    here.mkdir(parents=True, exist_ok=True)
    provider = None
    if side == "on":
        traces = folder / "traces" / str(block)
        provider = setup_tracing(TelemetryConfig(folder=traces, synchronous=True))
    try:
        times = asyncio.run(_rounds(here, side, calls))
    finally:
        if provider is not None:
            provider.shutdown()
    print(json.dumps(times), flush=True)


if __name__ == "__main__":
    child(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
