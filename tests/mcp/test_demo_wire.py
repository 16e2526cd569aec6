"""The wire layer against the bundled demo server, over stdio and Streamable HTTP on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from mooring.core.ports import ConnectionState, Gateway, ServerConnection
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.calls import (
    Acknowledged,
    AuthFailed,
    ImmediateResult,
    NoAnswer,
    NotSent,
    RequestFailed,
    TaskCreated,
)
from mooring.core.tasks.reconcile import (
    AuthRequired,
    MalformedReply,
    Observation,
    ServerTask,
    StatusUnavailable,
    TaskGone,
)
from mooring.core.tools import ToolAnnotations
from mooring.mcp.connection import ConnectionSettings, McpConnection
from mooring.mcp.gateway import McpGateway
from tests.mcp.conftest import Connect
from tests.mcp.servers import (
    DemoServer,
    eventually,
    free_port,
    http_definition,
    settled,
    stdio_definition,
)

pytestmark = pytest.mark.anyio


async def created_task(connection: McpConnection, tool: str, arguments: dict[str, object]) -> str:
    outcome = await connection.call_tool(tool, arguments)
    assert isinstance(outcome, TaskCreated), outcome
    return outcome.task.task_id


async def task_status(connection: McpConnection, task_id: str, *statuses: str) -> ServerTask:
    """Poll ``tasks/get`` (bounded) until the task reaches one of ``statuses``."""

    def reached(seen: Observation) -> bool:
        return isinstance(seen, ServerTask) and seen.status in statuses

    seen = await eventually(lambda: connection.get_task(task_id), reached)
    assert isinstance(seen, ServerTask)
    return seen


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def demo_definition(demo: DemoServer, transport: str, *extra: str) -> ServerDefinition:
    return demo.stdio(*extra) if transport == "stdio" else http_definition(demo.start_http(*extra))


async def test_a_task_is_created_and_polled_to_completion(
    demo: DemoServer, connect: Connect, transport: str
) -> None:
    connection = connect(demo_definition(demo, transport))
    status = await settled(connection)
    assert status.state is ConnectionState.READY
    assert status.supports_tasks
    assert status.protocol_version == "2026-07-28"

    outcome = await connection.call_tool("slow_compute", {"seconds": 0.2, "label": "x"})

    assert isinstance(outcome, TaskCreated)
    assert outcome.task.status == "working"
    assert outcome.task.created_at is not None
    assert outcome.task.created_at.tzinfo is not None
    assert outcome.task.poll_interval_ms == 50
    done = await task_status(connection, outcome.task.task_id, "completed")
    assert done.result is not None
    assert done.result["content"][0]["text"] == "Computed x after 0.2s"
    assert done.last_updated_at is not None
    assert done.last_updated_at.tzinfo is not None
    assert demo.log.count("tools/call") == 1


async def test_tasks_requests_carry_the_mcp_name_header_over_http(
    demo: DemoServer, connect: Connect
) -> None:
    # The demo server answers -32020 (header mismatch) to tasks/* whose Mcp-Name header is
    # missing or differs from params.taskId, so an answered get, update and cancel prove it.
    connection = connect(http_definition(demo.start_http()))
    task_id = await created_task(connection, "confirm_delete", {"filename": "a.csv"})

    assert isinstance(await connection.get_task(task_id), ServerTask)
    assert isinstance(await connection.update_task(task_id, {}), Acknowledged)
    assert isinstance(await connection.cancel_task(task_id), Acknowledged)
    logged = [e for e in demo.log.entries() if str(e["method"]).startswith("tasks/")]
    assert {e["method"] for e in logged} == {"tasks/get", "tasks/update", "tasks/cancel"}
    assert all(e["transport"] == "http" and e["taskId"] == task_id for e in logged)


async def test_a_tool_without_tasks_answers_with_a_plain_result(
    demo: DemoServer, connect: Connect
) -> None:
    connection = connect(demo.stdio())

    outcome = await connection.call_tool("greet", {"name": "Ada"})

    assert isinstance(outcome, ImmediateResult)
    assert outcome.result["content"] == [{"type": "text", "text": "Hello, Ada!"}]
    assert outcome.result["isError"] is False


async def test_a_tool_error_result_is_an_immediate_result_not_a_rejection(
    demo: DemoServer, connect: Connect
) -> None:
    connection = connect(demo.stdio())

    outcome = await connection.call_tool("delete_supplier", {"supplier_id": "nobody"})

    assert isinstance(outcome, ImmediateResult)
    assert outcome.result["isError"] is True


async def test_a_server_without_the_extension_gets_plain_calls(
    connect: Connect, tmp_path: Path
) -> None:
    peer = Path(__file__).parent / "peers" / "plain_server.py"
    connection = connect(stdio_definition(sys.executable, str(peer), alias="plain"))

    status = await settled(connection)
    outcome = await connection.call_tool("add", {"a": 2, "b": 3})

    assert status.state is ConnectionState.READY
    assert not status.supports_tasks
    assert isinstance(outcome, ImmediateResult)
    assert outcome.result["structuredContent"] == {"result": 5}


async def test_tools_are_listed_with_their_annotations(demo: DemoServer, connect: Connect) -> None:
    server = demo.stdio()
    connection = connect(server)

    tools = {tool.name: tool for tool in await connection.list_tools()}

    assert tools["delete_supplier"].annotations == ToolAnnotations(
        read_only=False, destructive=True, idempotent=True, open_world=False
    )
    assert tools["list_suppliers"].annotations.read_only is True
    assert tools["import_suppliers"].title == "Import suppliers from a CSV file"
    assert tools["import_suppliers"].server_id == server.id
    assert "path" in tools["import_suppliers"].input_schema["properties"]
    assert tools["greet"].annotations == ToolAnnotations()


async def test_a_missing_command_fails_quickly_with_a_reason_and_nothing_is_sent(
    connect: Connect, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no-such-server")
    connection = connect(stdio_definition(missing))

    status = await settled(connection, within=10)
    outcome = await connection.call_tool("anything", {})

    assert status.state is ConnectionState.FAILED
    assert "not found" in status.reason
    assert missing in status.reason
    assert isinstance(outcome, NotSent)
    assert isinstance(await connection.get_task("t"), StatusUnavailable)
    assert await connection.list_tools() == []


async def test_a_server_that_crashes_on_start_fails_with_its_last_words(connect: Connect) -> None:
    script = "import sys; print('config file is broken', file=sys.stderr); sys.exit(3)"
    connection = connect(stdio_definition(sys.executable, "-c", script))

    status = await settled(connection, within=15)

    assert status.state is ConnectionState.FAILED
    assert "exited before it answered" in status.reason
    assert "config file is broken" in status.reason
    assert isinstance(await connection.call_tool("x", {}), NotSent)


async def test_a_refused_port_fails_quickly_and_nothing_is_sent(connect: Connect) -> None:
    connection = connect(http_definition(f"http://127.0.0.1:{free_port()}/mcp"))

    status = await settled(connection, within=10)
    outcome = await connection.call_tool("anything", {})

    assert status.state is ConnectionState.FAILED
    assert "could not reach" in status.reason
    assert isinstance(outcome, NotSent)


async def test_a_wrong_url_fails_with_a_reason(demo: DemoServer, connect: Connect) -> None:
    url = demo.start_http().replace("/mcp", "/not-mcp")
    connection = connect(http_definition(url))

    status = await settled(connection, within=10)

    assert status.state is ConnectionState.FAILED
    assert url in status.reason


async def test_an_unknown_task_is_gone(demo: DemoServer, connect: Connect, transport: str) -> None:
    connection = connect(demo_definition(demo, transport))

    seen = await connection.get_task("no-such-task")
    cancel = await connection.cancel_task("no-such-task")
    update = await connection.update_task("no-such-task", {"k": {"action": "decline"}})

    assert isinstance(seen, TaskGone)
    assert "not found" in seen.reason.lower()
    assert isinstance(cancel, RequestFailed)
    assert cancel.gone
    assert not cancel.auth
    assert isinstance(update, RequestFailed)
    assert update.gone


@pytest.mark.parametrize("mode", ["unknown-status", "missing-status"])
async def test_a_malformed_status_is_a_malformed_reply(
    demo: DemoServer, connect: Connect, mode: str
) -> None:
    connection = connect(demo.stdio("--fault-malformed-status", mode))
    task_id = await created_task(connection, "slow_compute", {"seconds": 5})

    seen = await connection.get_task(task_id)

    assert isinstance(seen, MalformedReply)
    assert ("exploded" if mode == "unknown-status" else "status") in seen.detail


async def test_a_dropped_create_reply_is_an_unknown_outcome_and_is_not_resent(
    demo: DemoServer, connect: Connect, transport: str
) -> None:
    connection = connect(demo_definition(demo, transport, "--fault-drop-create-reply", "1"))
    await settled(connection)

    outcome = await connection.call_tool("slow_compute", {"seconds": 0.1})

    assert isinstance(outcome, NoAnswer)
    assert demo.log.count("tools/call") == 1
    # The connection recovers for the next request (stdio: a new server process).
    assert isinstance(await connection.call_tool("greet", {"name": "again"}), ImmediateResult)
    assert demo.log.count("tools/call") == 2


async def test_a_slow_status_answer_beyond_the_deadline_is_status_unavailable(
    demo: DemoServer, connect: Connect, settings: ConnectionSettings, transport: str
) -> None:
    impatient = ConnectionSettings(
        request_timeout=0.3, backoff_initial=0.05, stderr_dir=settings.stderr_dir
    )
    server = demo_definition(demo, transport, "--fault-slow-get-ms", "30000")
    connection = connect(server, connection_settings=impatient)
    task_id = await created_task(connection, "slow_compute", {"seconds": 5})

    seen = await connection.get_task(task_id)

    assert isinstance(seen, StatusUnavailable)
    assert "no answer within 0.3 s" in seen.reason
    # A timeout is not a dead transport: the same Client keeps serving.
    assert connection.status.state is ConnectionState.READY
    assert isinstance(await connection.cancel_task(task_id), Acknowledged)


async def test_a_rejected_token_means_sign_in_is_needed(demo: DemoServer, connect: Connect) -> None:
    # The token works for three requests (discover, tools/call, one tasks/get), then "expires".
    url = demo.start_http("--fault-token-expires-after", "3")
    connection = connect(
        http_definition(url), headers_for=lambda _s, _p: {"Authorization": "Bearer secret-1"}
    )
    task_id = await created_task(connection, "slow_compute", {"seconds": 5})
    assert isinstance(await connection.get_task(task_id), ServerTask)

    seen = await connection.get_task(task_id)
    cancel = await connection.cancel_task(task_id)
    call = await connection.call_tool("greet", {"name": "x"})

    assert isinstance(seen, AuthRequired)
    assert "401" in seen.reason
    assert isinstance(cancel, RequestFailed)
    assert cancel.auth
    assert not cancel.gone
    assert isinstance(call, AuthFailed)


async def test_a_token_refused_at_connect_fails_the_connection_as_auth(
    demo: DemoServer, connect: Connect
) -> None:
    url = demo.start_http("--fault-token-expires-after", "1")
    headers = {"Authorization": "Bearer used-up"}
    first = connect(http_definition(url), headers_for=lambda _s, _p: headers)
    await settled(first)  # the token's only good request was this connection's discover
    second = connect(http_definition(url), headers_for=lambda _s, _p: headers)

    status = await settled(second)

    assert status.state is ConnectionState.FAILED
    assert "401" in status.reason
    assert isinstance(await second.call_tool("greet", {"name": "x"}), AuthFailed)
    assert isinstance(await second.get_task("t"), AuthRequired)


async def test_an_input_request_is_answered_with_tasks_update(
    demo: DemoServer, connect: Connect, transport: str
) -> None:
    connection = connect(demo_definition(demo, transport))
    task_id = await created_task(connection, "confirm_delete", {"filename": "old.csv"})
    waiting = await task_status(connection, task_id, "input_required")
    assert set(waiting.input_requests) == {"confirm-delete"}
    assert waiting.input_requests["confirm-delete"]["method"] == "elicitation/create"

    ack = await connection.update_task(
        task_id, {"confirm-delete": {"action": "accept", "content": {"confirm": True}}}
    )

    assert isinstance(ack, Acknowledged)
    done = await task_status(connection, task_id, "completed")
    assert done.result is not None
    assert done.result["content"][0]["text"] == "Deleted old.csv"


async def test_a_cancelled_task_ends_cancelled(
    demo: DemoServer, connect: Connect, transport: str
) -> None:
    connection = connect(demo_definition(demo, transport))
    task_id = await created_task(connection, "slow_compute", {"seconds": 60})

    ack = await connection.cancel_task(task_id)

    assert isinstance(ack, Acknowledged)
    await task_status(connection, task_id, "cancelled")


async def test_a_failed_task_carries_its_json_rpc_error(demo: DemoServer, connect: Connect) -> None:
    connection = connect(demo.stdio())
    task_id = await created_task(connection, "protocol_error_job", {})

    failed = await task_status(connection, task_id, "failed")

    assert failed.error is not None
    assert failed.error["code"] == -32603
    assert "as designed" in failed.error["message"]


async def test_on_sending_runs_before_the_request_leaves(
    demo: DemoServer, connect: Connect
) -> None:
    connection = connect(demo.stdio())
    await settled(connection)
    seen_before: list[int] = []

    async def on_sending() -> None:
        assert connection.status.state is ConnectionState.READY
        seen_before.append(demo.log.count("tools/call"))

    outcome = await connection.call_tool("greet", {"name": "x"}, on_sending=on_sending)

    assert isinstance(outcome, ImmediateResult)
    assert seen_before == [0]
    assert demo.log.count("tools/call") == 1


async def test_a_failing_on_sending_propagates_and_nothing_is_sent(
    demo: DemoServer, connect: Connect
) -> None:
    connection = connect(demo.stdio())

    async def on_sending() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        await connection.call_tool("greet", {"name": "x"}, on_sending=on_sending)
    assert demo.log.count("tools/call") == 0
    assert isinstance(await connection.call_tool("greet", {"name": "y"}), ImmediateResult)


async def test_a_killed_http_server_is_unavailable_then_the_same_connection_recovers(
    demo: DemoServer, connect: Connect
) -> None:
    connection = connect(http_definition(demo.start_http()))
    task_id = await created_task(connection, "slow_compute", {"seconds": 1})

    demo.kill()
    down = await connection.get_task(task_id)
    demo.start_http()  # same port, same store
    back = await eventually(
        lambda: connection.get_task(task_id), lambda seen: isinstance(seen, ServerTask)
    )

    assert isinstance(down, StatusUnavailable)
    assert back.task_id == task_id
    assert connection.status.state is ConnectionState.READY
    await task_status(connection, task_id, "completed")


async def test_a_killed_stdio_server_mid_request_is_unavailable_then_respawned(
    demo: DemoServer, connect: Connect
) -> None:
    connection = connect(demo.stdio("--fault-slow-get-ms", "2000"))
    task_id = await created_task(connection, "slow_compute", {"seconds": 1})
    first_pid = demo.log.pids().pop()
    outcome: list[Observation] = []

    async def poll() -> None:
        outcome.append(await connection.get_task(task_id))

    async with anyio.create_task_group() as tg:
        tg.start_soon(poll)
        await eventually(lambda: demo.log.count("tasks/get"), lambda n: n == 1)
        os.kill(first_pid, signal.SIGKILL)

    assert isinstance(outcome[0], StatusUnavailable)
    assert "connection" in outcome[0].reason
    back = await connection.get_task(task_id)
    assert isinstance(back, ServerTask)
    assert demo.log.pids() - {first_pid}, "a new server process answered"


async def test_the_gateway_keeps_one_connection_per_server_and_profile(
    demo: DemoServer, settings: ConnectionSettings
) -> None:
    gateway = McpGateway(settings=settings)
    checked: Gateway = gateway
    server = demo.stdio()
    try:
        first = await checked.connect(server, "work")
        again = await gateway.connect(server, "work")
        other = await gateway.connect(server, "home")
        typed: ServerConnection = first
        assert first is again
        assert first is not other
        assert isinstance(await typed.call_tool("greet", {"name": "a"}), ImmediateResult)
        assert isinstance(await other.call_tool("greet", {"name": "b"}), ImmediateResult)
        assert {s.state for s in gateway.statuses()} == {ConnectionState.READY}
        pids = demo.log.pids()
        assert len(pids) == 2
    finally:
        with anyio.fail_after(30):
            await gateway.aclose()

    assert {s.state for s in (first.status, other.status)} == {ConnectionState.STOPPED}
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert isinstance(await first.call_tool("greet", {"name": "c"}), NotSent)


STARTS_THEN_WAITS = "import signal, sys; open(sys.argv[1], 'w').close(); signal.pause()"
SAYS_ITS_PID_THEN_WAITS = (
    "import os, signal, sys; open(sys.argv[1], 'w').write(str(os.getpid())); signal.pause()"
)


async def test_closing_the_gateway_waits_for_a_connection_it_is_replacing(
    settings: ConnectionSettings, tmp_path: Path
) -> None:
    """A server edited just before the window closes: its old connection is being stopped
    (the old process given its grace period) when the gateway closes. The close waits for it,
    so no server process outlives the app (the loop used to close under that stop)."""
    gateway = McpGateway(settings=settings)
    started = tmp_path / "started"
    slow_to_stop = stdio_definition(  # no MCP: it waits for the stop's signal, after a grace
        sys.executable, "-c", STARTS_THEN_WAITS, str(started)
    )
    old = await gateway.connect(slow_to_stop)
    await eventually(started.exists, bool)  # its process runs
    edited = dataclasses.replace(slow_to_stop, args=(*slow_to_stop.args, "edited"))
    replacing = asyncio.ensure_future(gateway.connect(edited))
    # The connect has taken the old connection out, and stops it (a fast stop may already
    # have let the new one in: the old one is what must be gone).
    await eventually(lambda: gateway.connection(slow_to_stop.id), lambda found: found is not old)
    with anyio.fail_after(30):
        await gateway.aclose()
        assert old.status.state is ConnectionState.STOPPED
        new = await replacing
    assert new.status.state is ConnectionState.STOPPED


async def test_a_replacement_cancelled_midway_still_leaves_the_close_to_wait_for_the_old_server(
    settings: ConnectionSettings, tmp_path: Path
) -> None:
    """The window closing just after a server was edited cancels its jobs first, the connect
    that is replacing the server among them, while the old server is still given its grace
    period. The gateway's close must still wait for that server: it ran on after the app under
    a loaded machine (a window test's teardown found the old demo server running)."""
    gateway = McpGateway(settings=settings)
    started = tmp_path / "started"
    slow_to_stop = stdio_definition(sys.executable, "-c", SAYS_ITS_PID_THEN_WAITS, str(started))
    old = await gateway.connect(slow_to_stop)
    pid = int(await eventually(lambda: started.exists() and started.read_text(), bool))
    edited = dataclasses.replace(slow_to_stop, args=(*slow_to_stop.args, "edited"))
    replacing = asyncio.ensure_future(gateway.connect(edited))
    await eventually(lambda: gateway.connection(slow_to_stop.id), lambda found: found is not old)
    replacing.cancel()  # the window's jobs are cancelled before the host stops
    with contextlib.suppress(asyncio.CancelledError):
        await replacing
    with anyio.fail_after(30):
        await gateway.aclose()
    assert old.status.state is ConnectionState.STOPPED
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_task_notifications_reach_gateway_listeners(
    demo: DemoServer, settings: ConnectionSettings, transport: str
) -> None:
    gateway = McpGateway(settings=settings)
    heard: list[tuple[str, str, Observation | None]] = []
    completed = anyio.Event()
    server = demo_definition(demo, transport)

    def listener(server_id: str, task_id: str, seen: Observation | None) -> None:
        heard.append((server_id, task_id, seen))
        if isinstance(seen, ServerTask) and seen.status == "completed":
            completed.set()

    gateway.add_task_listener(listener)
    gateway.want_task_notifications(True)  # a long-lived watcher runs
    try:
        connection = await gateway.connect(server)
        task_id = await created_task(connection, "slow_compute", {"seconds": 0.5})
        with anyio.fail_after(20):
            await completed.wait()
    finally:
        with anyio.fail_after(30):
            await gateway.aclose()

    assert {(s, t) for s, t, _ in heard} == {(server.id, task_id)}
    final = heard[-1][2]
    assert isinstance(final, ServerTask)
    assert final.result is not None  # the frame carries the whole task: no tasks/get needed
    task_listens = [
        e
        for e in demo.log.entries()
        if e["method"] == "subscriptions/listen" and "taskIds" in e.get("filters", [])
    ]
    assert len(task_listens) == 1
