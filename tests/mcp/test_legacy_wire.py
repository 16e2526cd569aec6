"""The 2025-11-25 Tasks wire against the reference "everything" server (TypeScript SDK 1.x).

The server runs over stdio as a real ``node`` process; ``simulate-research-query`` is a task-only
tool (``taskSupport: required``) that asks for a clarification when ``ambiguous`` is set.
"""

from __future__ import annotations

import pytest

from mooring.core.ports import ConnectionState
from mooring.core.tasks.calls import Acknowledged, ImmediateResult, TaskCreated
from mooring.core.tasks.reconcile import Observation, ServerTask
from mooring.core.tasks.wire import TaskWire
from mooring.mcp.connection import McpConnection
from tests.helpers.node_peers import everything_server, node
from tests.mcp.conftest import Connect
from tests.mcp.servers import eventually, settled, stdio_definition

pytestmark = pytest.mark.anyio


@pytest.fixture
async def everything(connect: Connect) -> McpConnection:
    connection = connect(stdio_definition(node(), str(everything_server()), "stdio"))
    status = await settled(connection)
    assert status.state is ConnectionState.READY, status.reason
    return connection


async def reached(conn: McpConnection, task_id: str, *statuses: str) -> ServerTask:
    def done(seen: Observation) -> bool:
        return isinstance(seen, ServerTask) and seen.status in statuses

    seen = await eventually(lambda: conn.get_task(task_id, wire=TaskWire.LEGACY), done)
    assert isinstance(seen, ServerTask)
    return seen


async def test_the_everything_server_is_spoken_to_on_the_legacy_wire(
    everything: McpConnection,
) -> None:
    assert everything.status.protocol_version == "2025-11-25"
    assert everything.status.task_wire is TaskWire.LEGACY
    assert everything.status.supports_tasks


async def test_a_legacy_task_runs_to_completion_and_its_payload_comes_from_tasks_result(
    everything: McpConnection,
) -> None:
    await everything.list_tools()
    outcome = await everything.call_tool("simulate-research-query", {"topic": "tides"})
    assert isinstance(outcome, TaskCreated), outcome
    assert outcome.wire is TaskWire.LEGACY
    assert outcome.task.status == "working"
    assert outcome.task.poll_interval_ms == 1000
    assert outcome.task.ttl_ms == 300000
    done = await reached(everything, outcome.task.task_id, "completed")
    assert done.result is not None
    assert "Research Report: tides" in done.result["content"][0]["text"]
    assert "io.modelcontextprotocol/related-task" not in done.result.get("_meta", {})


async def test_a_legacy_question_arrives_on_tasks_result_and_is_answered_by_its_key(
    everything: McpConnection,
) -> None:
    outcome = await everything.call_tool(
        "simulate-research-query", {"topic": "python", "ambiguous": True}
    )
    assert isinstance(outcome, TaskCreated), outcome
    task_id = outcome.task.task_id
    asking = await reached(everything, task_id, "input_required")
    [(key, request)] = asking.input_requests.items()
    assert request["method"] == "elicitation/create"
    assert "python" in request["params"]["message"]
    again = await everything.get_task(task_id, wire=TaskWire.LEGACY)
    assert isinstance(again, ServerTask)
    assert list(again.input_requests) == [key]  # the same question, the same key

    answer = {"action": "accept", "content": {"interpretation": "snake"}}
    ack = await everything.update_task(task_id, {key: answer}, wire=TaskWire.LEGACY)
    assert isinstance(ack, Acknowledged)
    done = await reached(everything, task_id, "completed")
    assert done.result is not None
    assert "python (snake)" in done.result["content"][0]["text"]


async def test_a_legacy_cancel_is_confirmed_by_the_next_status(everything: McpConnection) -> None:
    outcome = await everything.call_tool("simulate-research-query", {"topic": "cancel me"})
    assert isinstance(outcome, TaskCreated), outcome
    ack = await everything.cancel_task(outcome.task.task_id, wire=TaskWire.LEGACY)
    assert isinstance(ack, Acknowledged)
    await reached(everything, outcome.task.task_id, "cancelled")


async def test_a_cancel_that_loses_the_race_is_not_mistaken_for_a_vanished_task(
    everything: McpConnection,
) -> None:
    outcome = await everything.call_tool("simulate-research-query", {"topic": "fast"})
    assert isinstance(outcome, TaskCreated), outcome
    await reached(everything, outcome.task.task_id, "completed")
    # The 2025-11-25 server refuses to cancel an ended task with -32602; that is not "gone".
    ack = await everything.cancel_task(outcome.task.task_id, wire=TaskWire.LEGACY)
    assert isinstance(ack, Acknowledged)
    done = await everything.get_task(outcome.task.task_id, wire=TaskWire.LEGACY)
    assert isinstance(done, ServerTask)
    assert done.status == "completed"


async def test_a_tool_without_task_support_is_a_plain_call(everything: McpConnection) -> None:
    outcome = await everything.call_tool("echo", {"message": "hi"})
    assert isinstance(outcome, ImmediateResult), outcome
    assert outcome.result["content"][0]["text"] == "Echo: hi"
