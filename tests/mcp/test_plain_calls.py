"""Long plain calls (no task): progress keeps a call alive, silence and the user stop it.

Against the durable 2025-11-25 peer's plain tools (``progress_job`` reports progress, ``silent_job``
does not), over stdio as a real process; the peer logs every ``notifications/cancelled``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from mooring.core.ports import ConnectionState
from mooring.core.tasks.calls import ImmediateResult, NoAnswer, Progress, StoppedByUser
from mooring.mcp.connection import CallLimits, ConnectionSettings, McpConnection
from tests.mcp.conftest import Connect
from tests.mcp.servers import eventually, settled, stdio_definition

pytestmark = pytest.mark.anyio

PEER = Path(__file__).parent / "peers" / "legacy_tasks_server.py"
IDLE = 0.6


class Peer:
    def __init__(self, tmp_path: Path) -> None:
        self.store = tmp_path / "store.json"
        self.log = tmp_path / "requests.jsonl"

    def methods(self) -> list[str]:
        if not self.log.exists():
            return []
        return [json.loads(line)["method"] for line in self.log.read_text().splitlines()]


@pytest.fixture
def peer(tmp_path: Path) -> Peer:
    return Peer(tmp_path)


@pytest.fixture
async def conn(connect: Connect, peer: Peer, settings: ConnectionSettings) -> McpConnection:
    definition = stdio_definition(
        sys.executable, str(PEER), f"--store={peer.store}", f"--requests={peer.log}", alias="peer"
    )
    limits = ConnectionSettings(
        connect_timeout=settings.connect_timeout,
        request_timeout=settings.request_timeout,
        stderr_dir=settings.stderr_dir,
        call_idle_timeout=IDLE,
        call_timeout=60.0,
    )
    connection = connect(definition, connection_settings=limits)
    status = await settled(connection)
    assert status.state is ConnectionState.READY, status.reason
    return connection


async def test_a_call_three_times_the_idle_timeout_completes_while_it_reports_progress(
    conn: McpConnection,
) -> None:
    seen: list[Progress] = []

    async def progress(update: Progress) -> None:
        seen.append(update)

    outcome = await conn.call_tool(
        "progress_job", {"seconds": 3 * IDLE, "every": 0.15}, on_progress=progress
    )
    assert isinstance(outcome, ImmediateResult), outcome
    assert outcome.result["content"][0]["text"] == "progress_job finished"
    assert len(seen) >= 5
    assert seen[-1].message is not None
    assert seen[-1].message.startswith("step ")
    assert seen[-1].total == pytest.approx(3 * IDLE / 0.15)


async def test_the_same_call_without_progress_times_out_and_the_server_is_told(
    conn: McpConnection, peer: Peer
) -> None:
    outcome = await conn.call_tool("silent_job", {"seconds": 3 * IDLE})
    assert isinstance(outcome, NoAnswer), outcome
    assert f"no sign of life from the server for {IDLE:g} s" in outcome.reason
    assert "told the server to stop" in outcome.reason
    await eventually(peer.methods, lambda methods: "notifications/cancelled" in methods)


async def test_a_per_server_maximum_stops_even_a_lively_call(
    connect: Connect, peer: Peer, settings: ConnectionSettings
) -> None:
    definition = stdio_definition(
        sys.executable, str(PEER), f"--store={peer.store}", f"--requests={peer.log}", alias="peer"
    )
    limits = ConnectionSettings(
        connect_timeout=settings.connect_timeout,
        request_timeout=settings.request_timeout,
        stderr_dir=settings.stderr_dir,
        server_call_limits={"peer": CallLimits(idle_timeout=5.0, max_time=IDLE)},
    )
    connection = connect(definition, connection_settings=limits)
    outcome = await connection.call_tool("progress_job", {"seconds": 10, "every": 0.1})
    assert isinstance(outcome, NoAnswer), outcome
    assert f"after the maximum of {IDLE:g} s" in outcome.reason


async def test_the_user_stops_a_plain_call_and_the_server_hears_it(
    conn: McpConnection, peer: Peer
) -> None:
    started = anyio.Event()

    async def progress(_update: Progress) -> None:
        started.set()

    outcomes: list[object] = []

    async def call() -> None:
        outcomes.append(
            await conn.call_tool(
                "progress_job", {"seconds": 30, "every": 0.1}, on_progress=progress, call_key="k1"
            )
        )

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await started.wait()
            assert conn.stop_call("k1")
    [outcome] = outcomes
    assert isinstance(outcome, StoppedByUser), outcome
    assert outcome.reason.startswith("Stopped by you")
    assert not conn.stop_call("k1")  # nothing left to stop
    await eventually(peer.methods, lambda methods: "notifications/cancelled" in methods)


async def test_a_server_that_speaks_only_2025_06_18_is_called_plainly(
    connect: Connect, peer: Peer
) -> None:
    definition = stdio_definition(
        sys.executable,
        str(PEER),
        f"--store={peer.store}",
        f"--requests={peer.log}",
        "--protocol=2025-06-18",
        alias="old",
    )
    connection = connect(definition)
    status = await settled(connection)
    assert status.state is ConnectionState.READY, status.reason
    assert status.protocol_version == "2025-06-18"
    assert status.task_wire is None
    assert not status.supports_tasks
    assert "slow_job" in [tool.name for tool in await connection.list_tools()]
    outcome = await connection.call_tool("slow_job", {"seconds": 0.1})
    assert isinstance(outcome, ImmediateResult), outcome
    assert outcome.result["content"][0]["text"] == "slow_job finished"
