"""One ``subscriptions/listen`` stream per connection, against the real demo server.

The server counts the listen requests it receives (its request log); notifications are what the
gateway's listeners hear. A listen request cannot be amended, so tasks seen later join when the
stream is reopened, at most once per ``listen_reopen_after`` — sooner while so few tasks are
watched that the server's replay of them is cheap (``listen_replay_per_second``).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from itertools import pairwise

import anyio
import pytest

from mooring.core.tasks.reconcile import Observation, ServerTask
from mooring.mcp.connection import ConnectionSettings
from mooring.mcp.gateway import McpGateway
from tests.mcp.servers import DemoServer, eventually, http_definition
from tests.mcp.test_demo_wire import created_task, demo_definition

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Heard:
    """What the gateway's listeners were told, per task; an event per completed task."""

    def __init__(self) -> None:
        self.by_task: dict[str, list[Observation | None]] = defaultdict(list)
        self.completed: dict[str, anyio.Event] = defaultdict(anyio.Event)

    def __call__(self, server_id: str, task_id: str, seen: Observation | None) -> None:
        self.by_task[task_id].append(seen)
        if isinstance(seen, ServerTask) and seen.status == "completed":
            self.completed[task_id].set()

    def repeats(self) -> list[str]:
        """Tasks for which the same state was passed on twice in a row."""
        return [
            task_id
            for task_id, seen in self.by_task.items()
            if any(a == b for a, b in pairwise(seen))
        ]


def task_listens(demo: DemoServer) -> int:
    """``subscriptions/listen`` requests for task ids the server received (a long-lived
    connection also holds one for tool list changes)."""
    return sum(
        1
        for entry in demo.log.entries()
        if entry["method"] == "subscriptions/listen" and "taskIds" in entry.get("filters", [])
    )


def gateway_with(
    settings: ConnectionSettings, reopen_after: float, replay_per_second: float = 1e-9
) -> tuple[McpGateway, Heard]:
    """A gateway whose stream is reopened at most once per ``reopen_after`` (by default
    whatever the number of tasks watched: the replay budget then never shortens it)."""
    gateway = McpGateway(
        settings=dataclasses.replace(
            settings,
            listen_reopen_after=reopen_after,
            listen_replay_per_second=replay_per_second,
        )
    )
    heard = Heard()
    gateway.add_task_listener(heard)
    return gateway, heard


async def test_tasks_added_while_listening_share_one_listen_request(
    demo: DemoServer, settings: ConnectionSettings, transport: str
) -> None:
    gateway, heard = gateway_with(settings, reopen_after=3600)
    gateway.want_task_notifications(True)
    try:
        connection = await gateway.connect(demo_definition(demo, transport))
        first = await created_task(connection, "slow_compute", {"seconds": 0.5})
        later = [await created_task(connection, "slow_compute", {"seconds": 120}) for _ in range(6)]
        with anyio.fail_after(20):
            await heard.completed[first].wait()  # the stream is up and delivering
        assert connection.subscription.watched == frozenset(later)
        assert task_listens(demo) == 1
        assert connection.subscription.opened == 1
    finally:
        with anyio.fail_after(30):
            await gateway.aclose()
    assert heard.repeats() == []


async def test_a_watcher_starting_later_listens_once_for_every_running_task(
    demo: DemoServer, settings: ConnectionSettings
) -> None:
    gateway, heard = gateway_with(settings, reopen_after=3600)
    try:
        connection = await gateway.connect(demo_definition(demo, "stdio"))
        tasks = [await created_task(connection, "slow_compute", {"seconds": 1.5}) for _ in range(4)]
        # A one-shot user of the connection (call --detach, reconcile) opens no stream.
        seen = await connection.get_task(tasks[0])
        assert isinstance(seen, ServerTask)
        assert task_listens(demo) == 0

        gateway.want_task_notifications(True)
        with anyio.fail_after(30):
            for task_id in tasks:
                await heard.completed[task_id].wait()
        assert task_listens(demo) == 1
    finally:
        with anyio.fail_after(30):
            await gateway.aclose()
    # The server replays every listed task's state when a stream opens: a state the connection
    # already knew is not passed on, so no task is reported twice in the same state.
    assert heard.repeats() == []
    for task_id in tasks:
        final = heard.by_task[task_id][-1]
        assert isinstance(final, ServerTask)
        assert final.result is not None


async def test_a_task_seen_later_joins_when_the_stream_is_reopened(
    demo: DemoServer, settings: ConnectionSettings
) -> None:
    gateway, heard = gateway_with(settings, reopen_after=0.2)
    gateway.want_task_notifications(True)
    try:
        connection = await gateway.connect(demo_definition(demo, "stdio"))
        running = await created_task(connection, "slow_compute", {"seconds": 120})
        await eventually(lambda: connection.subscription.opened, lambda n: n >= 1)
        joined = await created_task(connection, "slow_compute", {"seconds": 1})
        with anyio.fail_after(30):
            await heard.completed[joined].wait()  # only a reopened stream lists it
        assert task_listens(demo) == 2
    finally:
        with anyio.fail_after(30):
            await gateway.aclose()
    # The reopen replayed the running task's unchanged state: not passed on again.
    assert heard.repeats() == []
    assert all(isinstance(seen, ServerTask) for seen in heard.by_task[running])


async def test_with_few_tasks_watched_a_new_task_joins_the_stream_without_waiting_long(
    demo: DemoServer, settings: ConnectionSettings
) -> None:
    # A reopen replays every watched task: with two watched it costs two frames, so the
    # coalescing window shrinks to a fraction of a second (here the cap is an hour).
    gateway, heard = gateway_with(settings, reopen_after=3600, replay_per_second=200)
    gateway.want_task_notifications(True)
    try:
        connection = await gateway.connect(demo_definition(demo, "stdio"))
        await created_task(connection, "slow_compute", {"seconds": 120})
        await eventually(lambda: connection.subscription.opened, lambda n: n >= 1)
        joined = await created_task(connection, "slow_compute", {"seconds": 1})
        with anyio.fail_after(30):
            await heard.completed[joined].wait()  # heard on the stream, not by a poll
        assert task_listens(demo) == 2
    finally:
        with anyio.fail_after(30):
            await gateway.aclose()
    assert heard.repeats() == []


async def test_listening_connections_share_one_replay_budget(
    demo: DemoServer, settings: ConnectionSettings
) -> None:
    # Every reopen makes a server replay each listed task: ten servers reconciling at launch
    # replayed ten times the budget between them. Streams that listen at once split it, so
    # each waits longer before a reopen, and a stream left alone has it all again.
    gateway, _heard = gateway_with(settings, reopen_after=3600, replay_per_second=200)
    gateway.want_task_notifications(True)
    url = demo.start_http()
    try:
        first = await gateway.connect(http_definition(url, alias="first"))
        for _ in range(2):
            await created_task(first, "slow_compute", {"seconds": 120})
        await eventually(lambda: first.subscription.opened, lambda n: n >= 1)
        alone = first.subscription.reopen_window
        assert alone == pytest.approx(2 / 200)

        second = await gateway.connect(http_definition(url, alias="second"))
        for _ in range(4):
            await created_task(second, "slow_compute", {"seconds": 120})
        await eventually(lambda: second.subscription.opened, lambda n: n >= 1)
        assert first.subscription.reopen_window == pytest.approx(2 * alone)
        assert second.subscription.reopen_window == pytest.approx(4 / 100)

        with anyio.fail_after(30):
            await second.aclose()
        assert first.subscription.reopen_window == pytest.approx(alone)
    finally:
        with anyio.fail_after(30):
            await gateway.aclose()
