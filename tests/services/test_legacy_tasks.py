"""The services on the 2025-11-25 Tasks wire, against the reference "everything" server.

The runner, monitor and ledger do not know the wires apart: the record remembers which one
created its task, and the connection speaks it. The server is a real ``node`` process over stdio.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mooring.core.ids import new_id
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.reconcile import Observation, ServerTask
from mooring.core.tasks.states import LocalState
from mooring.core.tasks.wire import TaskWire
from tests.helpers.node_peers import everything_server, node
from tests.mcp.servers import eventually
from tests.services.conftest import HostFactory, run_until

pytestmark = pytest.mark.anyio

RESEARCH = "simulate-research-query"


def everything() -> ServerDefinition:
    return ServerDefinition(
        id=new_id(),
        alias="everything",
        transport=Transport.STDIO,
        command=node(),
        args=(str(everything_server()), "stdio"),
        created_at=datetime.now(UTC),
    )


async def test_a_legacy_task_is_recorded_with_its_wire_and_completes(hosts: HostFactory) -> None:
    host = await hosts()
    server = everything()
    await host.store.add_server(server)
    record = await host.runner.call(server, RESEARCH, {"topic": "tides"})
    assert record.state is LocalState.WORKING
    assert record.wire is TaskWire.LEGACY
    assert record.poll_interval_ms == 1000
    stored = await host.store.get(record.id)
    assert stored is not None
    assert stored.wire is TaskWire.LEGACY
    final = await run_until(host, record.id, lambda r: r.is_terminal)
    assert final.state is LocalState.COMPLETED
    assert final.wire is TaskWire.LEGACY
    assert final.tool_round_id is not None
    tool_round = await host.store.tool_round(final.tool_round_id)
    assert tool_round is not None
    assert tool_round.result is not None
    assert "Research Report: tides" in tool_round.result["content"][0]["text"]


async def test_a_legacy_question_is_saved_shown_and_answered_through_the_monitor(
    hosts: HostFactory,
) -> None:
    host = await hosts()
    server = everything()
    await host.store.add_server(server)
    record = await host.runner.call(server, RESEARCH, {"topic": "python", "ambiguous": True})
    waiting = await run_until(host, record.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    [question] = await host.store.inputs(waiting.id)
    assert question.method == "elicitation/create"
    assert "python" in question.params["message"]
    settled = await host.monitor.answer(
        waiting.id, question.key, {"action": "accept", "content": {"interpretation": "comedy"}}
    )
    assert settled.delivered
    final = await run_until(host, record.id, lambda r: r.is_terminal)
    assert final.state is LocalState.COMPLETED
    assert final.tool_round_id is not None
    tool_round = await host.store.tool_round(final.tool_round_id)
    assert tool_round is not None
    assert tool_round.result is not None
    assert "python (comedy)" in tool_round.result["content"][0]["text"]
    [delivered] = await host.store.inputs(final.id)
    assert delivered.acknowledged_at is not None


async def test_a_legacy_cancel_is_requested_then_confirmed(hosts: HostFactory) -> None:
    host = await hosts()
    server = everything()
    await host.store.add_server(server)
    record = await host.runner.call(server, RESEARCH, {"topic": "stop me"})
    requested = await host.monitor.cancel(record.id)
    assert requested.cancel_requested
    assert requested.state is LocalState.WORKING  # a request, not an outcome
    final = await run_until(host, record.id, lambda r: r.is_terminal)
    assert final.state is LocalState.CANCELLED
    assert final.cancel_requested


async def test_a_legacy_cancel_that_arrives_after_completion_says_so(hosts: HostFactory) -> None:
    host = await hosts()
    server = everything()
    await host.store.add_server(server)
    record = await host.runner.call(server, RESEARCH, {"topic": "quick"})
    assert record.task_id is not None
    connection = await host.gateway.connect(server)
    task_id = record.task_id

    def finished(seen: Observation) -> bool:
        return isinstance(seen, ServerTask) and seen.status == "completed"

    await eventually(lambda: connection.get_task(task_id, wire=TaskWire.LEGACY), finished)
    await host.monitor.cancel(record.id)  # the server refuses: the task already ended
    final = await run_until(host, record.id, lambda r: r.is_terminal)
    assert final.state is LocalState.COMPLETED
    assert final.cancel_requested
    assert final.reason == "Completed: the cancel arrived too late."
