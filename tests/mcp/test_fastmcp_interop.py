"""Interop with a Tasks server nobody at Mooring wrote: ``fastmcp-tasks`` 4.1.4 (memory backend).

The peer (``peers/fastmcp_tasks_server.py``) runs as one subprocess for the module, over
Streamable HTTP on loopback (fastmcp-tasks also rejects ``tasks/*`` whose ``Mcp-Name`` header
disagrees with ``taskId``), plus one stdio run; both through the connection layer the app uses.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mooring.core.ports import ConnectionState
from mooring.core.tasks.calls import Acknowledged, ImmediateResult, TaskCreated
from mooring.core.tasks.reconcile import Observation, ServerTask
from mooring.mcp.connection import McpConnection
from tests.mcp.conftest import Connect
from tests.mcp.servers import (
    eventually,
    http_definition,
    settled,
    start_peer,
    stdio_definition,
    stop_processes,
)

pytestmark = pytest.mark.anyio

PEER = Path(__file__).parent / "peers" / "fastmcp_tasks_server.py"


@pytest.fixture(scope="module")
def peer_url() -> Iterator[str]:
    """One HTTP peer for the module (FastMCP starts slowly); stopped by pid afterwards."""
    process, url = start_peer(PEER)
    try:
        yield url
    finally:
        stop_processes([process])


@pytest.fixture
async def peer(connect: Connect, peer_url: str) -> McpConnection:
    connection = connect(http_definition(peer_url, alias="fastmcp-tasks"))
    status = await settled(connection)
    assert status.state is ConnectionState.READY, status.reason
    return connection


async def start(peer: McpConnection, tool: str, arguments: dict[str, object]) -> str:
    outcome = await peer.call_tool(tool, arguments)
    assert isinstance(outcome, TaskCreated), outcome
    assert outcome.task.ttl_ms is not None
    assert outcome.task.created_at is not None
    return outcome.task.task_id


async def reached(peer: McpConnection, task_id: str, *statuses: str) -> ServerTask:
    def done(seen: Observation) -> bool:
        return isinstance(seen, ServerTask) and seen.status in statuses

    seen = await eventually(lambda: peer.get_task(task_id), done)
    assert isinstance(seen, ServerTask)
    return seen


async def test_the_stdio_peer_declares_the_extension_and_runs_a_task(connect: Connect) -> None:
    connection = connect(stdio_definition(sys.executable, str(PEER), alias="fastmcp-tasks"))
    status = await settled(connection)
    assert status.state is ConnectionState.READY, status.reason
    assert status.supports_tasks

    plain = await connection.call_tool("echo", {"text": "hi"})
    task_id = await start(connection, "crunch", {"n": 2})

    assert isinstance(plain, ImmediateResult)
    assert plain.result["content"][0]["text"] == "hi"
    done = await reached(connection, task_id, "completed")
    assert done.result is not None
    assert done.result["content"][0]["text"] == "crunched 2"


async def test_a_peer_task_runs_to_completion(peer: McpConnection) -> None:
    task_id = await start(peer, "crunch", {"n": 3})

    done = await reached(peer, task_id, "completed")

    assert done.result is not None
    assert done.result["content"][0]["text"] == "crunched 3"


async def test_a_peer_task_can_be_cancelled(peer: McpConnection) -> None:
    task_id = await start(peer, "linger", {"seconds": 60})
    await reached(peer, task_id, "working")

    assert isinstance(await peer.cancel_task(task_id), Acknowledged)
    await reached(peer, task_id, "cancelled")


async def test_peer_failures_arrive_as_tool_errors_or_failed_tasks(peer: McpConnection) -> None:
    tool_error = await start(peer, "explode", {})
    protocol_error = await start(peer, "malfunction", {})

    completed = await reached(peer, tool_error, "completed", "failed")
    failed = await reached(peer, protocol_error, "completed", "failed")

    assert completed.status == "completed"  # a tool error is a result, per the spec
    assert completed.result is not None
    assert completed.result["isError"] is True
    assert failed.status == "failed"
    assert failed.error is not None
    assert "backend is down" in failed.error["message"]


async def test_a_peer_input_request_is_answered_by_its_own_key(peer: McpConnection) -> None:
    task_id = await start(peer, "confirm", {"item": "report.csv"})
    waiting = await reached(peer, task_id, "input_required")
    (key,) = waiting.input_requests  # the peer mints its own keys
    assert waiting.input_requests[key]["params"]["message"] == "Really delete report.csv?"

    ack = await peer.update_task(task_id, {key: {"action": "accept", "content": {"ok": True}}})

    assert isinstance(ack, Acknowledged)
    done = await reached(peer, task_id, "completed")
    assert done.result is not None
    assert done.result["content"][0]["text"] == "deleted report.csv"
