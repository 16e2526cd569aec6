"""The engine and its faces: one host, one connection per server, many faces over a real
Unix socket, every value crossing as a real pickle.

The demo server runs in-process (its real code over the SDK's memory transport), so each
test counts exactly how many connections the engine opened and how many ``tools/call``
requests the server saw.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from mooring.bootstrap import build_host
from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome, ApprovalRequest
from mooring.core.errors import KnownError, NotFound
from mooring.core.events import Event, TaskDidChange
from mooring.core.faces import HOST_PARTS, NOBODY, Askers
from mooring.core.host_api import PART_CALLS
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.engine.engine import Engine
from mooring.link.address import socket_path
from mooring.link.blocking import BlockingLink
from mooring.link.client import EngineLink, Remote
from mooring.link.wire import Hello, LinkClosed
from mooring.services.host import Host
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from tests.helpers.inprocess import SAMPLES, InProcessServers, inprocess_definition, running_demo

pytestmark = pytest.mark.anyio


@dataclass
class Face:
    """One connected face: its link, the host through it, and what it heard and was asked."""

    link: EngineLink
    host: Host
    asked: list[ApprovalRequest] = field(default_factory=list)
    heard: list[Event] = field(default_factory=list)


@dataclass
class Rig:
    engine: Engine
    data_dir: Path
    servers: InProcessServers
    request_log: Path
    faces: list[Face] = field(default_factory=list)

    def calls(self) -> int:
        """How many ``tools/call`` requests the demo server saw."""
        if not self.request_log.exists():
            return 0
        lines = self.request_log.read_text().splitlines()
        return sum(1 for line in lines if json.loads(line).get("method") == "tools/call")

    async def face(self, kind: str = "cli", *, approve: bool | None = True) -> Face:
        """A face that approves (or denies) what it is asked; ``None``: it cannot ask."""
        asked: list[ApprovalRequest] = []

        async def ask(request: ApprovalRequest) -> ApprovalAnswer:
            asked.append(request)
            outcome = ApprovalOutcome.APPROVED if approve else ApprovalOutcome.DENIED
            return ApprovalAnswer(outcome)

        askers = NOBODY if approve is None else Askers(approval=ask)
        link = await EngineLink.connect(
            socket_path(self.data_dir), Hello(kind, os.getpid(), "test", askers)
        )
        face = Face(link, cast(Host, Remote(link, parts=HOST_PARTS)), asked)
        link.events.subscribe(face.heard.append)
        self.faces.append(face)
        return face


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    data = tmp_path / "data"
    data.mkdir()
    paths = Paths(data_dir=data, config_dir=data / "config", log_dir=data / "logs", overridden=True)
    db = Database.open(paths.database)
    log = tmp_path / "requests.log"
    servers = InProcessServers()
    definition = inprocess_definition()
    async with AsyncExitStack() as stack:
        demo = await stack.enter_async_context(
            running_demo(tmp_path / "demo-store.sqlite3", request_log=log)
        )
        servers.serve(definition, demo.mcp)
        host = build_host(
            paths, Settings({"mcp.request_timeout_ms": 10_000}), db, open_transport=servers
        )
        await host.catalog.add_server(definition)
        host.start_monitoring()
        engine = Engine(host, data_dir=data, version="test", idle_after=3600)
        await engine.start()
        rig = Rig(engine, data, servers, log)
        try:
            yield rig
        finally:
            for face in rig.faces:
                await face.link.aclose()
            with anyio.fail_after(30):
                await engine.aclose()
            db.close()


async def until_state(
    face: Face, record_id: str, done: Callable[[TaskRecord], bool], limit: float = 60
) -> TaskRecord:
    """What the face hears of one record until ``done`` holds (the engine follows it)."""
    reached: asyncio.Queue[TaskRecord] = asyncio.Queue()

    def listen(event: Event) -> None:
        if isinstance(event, TaskDidChange) and event.record.id == record_id:
            reached.put_nowait(event.record)

    unsubscribe = face.link.events.subscribe(listen)
    try:
        [current] = await face.host.watch([record_id], soon=True)
        async with asyncio.timeout(limit):
            while not done(current):
                current = await reached.get()
        return current
    finally:
        unsubscribe()


async def demo_server(face: Face) -> Any:
    return await face.host.server("demo")


async def test_a_task_one_face_started_is_answered_by_another_through_the_same_connection(
    rig: Rig,
) -> None:
    first, second = await rig.face(), await rig.face()
    record = await first.host.call(
        await demo_server(first),
        "import_suppliers",
        {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")},
    )
    asking = await until_state(second, record.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    [view] = await second.host.task_views([asking])
    [question] = view.open_questions
    settled = await second.host.answer(
        record.id, question.key, {"action": "accept", "content": {"column": "vendor_code"}}
    )
    assert settled.delivered
    done = await until_state(first, record.id, lambda r: r.is_terminal)
    assert done.state is LocalState.COMPLETED
    assert rig.calls() == 1
    assert rig.servers.opened == 1  # one connection, the engine's, for both faces


async def test_the_approval_question_goes_to_the_face_whose_call_it_is(rig: Rig) -> None:
    asking, watching = await rig.face(), await rig.face(approve=False)
    record = await asking.host.call(await demo_server(asking), "greet", {"name": "Ada"})
    assert record.state is LocalState.COMPLETED
    assert [r.tool for r in asking.asked] == ["greet"]
    assert watching.asked == []


async def test_a_face_that_cannot_ask_has_its_call_refused_before_it_is_sent(rig: Rig) -> None:
    script = await rig.face(approve=None)
    record = await script.host.call(await demo_server(script), "greet", {"name": "Ada"})
    assert record.state is LocalState.DENIED
    view = await script.host.task_view(record)
    assert view.tool_round is not None
    assert view.tool_round.approval == "aborted"
    assert rig.calls() == 0


async def test_a_face_that_leaves_while_asked_withdraws_the_question_and_nothing_is_sent(
    rig: Rig,
) -> None:
    asked = asyncio.Event()

    async def never_answers(request: ApprovalRequest) -> ApprovalAnswer:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    leaving = await EngineLink.connect(
        socket_path(rig.data_dir), Hello("cli", os.getpid(), "test", Askers(never_answers))
    )
    host = cast(Host, Remote(leaving, parts=HOST_PARTS))
    watcher = await rig.face()
    server = await demo_server(watcher)
    call = asyncio.ensure_future(host.call(server, "greet", {"name": "Ada"}))
    async with asyncio.timeout(30):
        await asked.wait()
    await leaving.aclose()
    with pytest.raises(LinkClosed):
        await call
    [started] = await watcher.host.tasks()
    ended = await until_state(watcher, started.record.id, lambda r: r.is_terminal)
    [view] = await watcher.host.task_views([ended])
    assert view.record.state is LocalState.DENIED
    assert view.tool_round is not None
    assert view.tool_round.approval == "aborted"
    assert rig.calls() == 0


async def test_every_face_hears_what_another_started_once_it_is_stored(rig: Rig) -> None:
    starting, listening = await rig.face(), await rig.face()
    persisted: list[TaskRecord] = []
    record = await starting.host.call(
        await demo_server(starting), "greet", {"name": "Ada"}, on_persisted=persisted.append
    )
    assert [r.id for r in persisted] == [record.id]  # called back across the link, first
    stored = await listening.host.record(record.id)
    assert stored is not None
    assert stored.state is LocalState.COMPLETED
    heard = [e.record.id for e in listening.heard if isinstance(e, TaskDidChange)]
    assert record.id in heard


async def test_a_blocking_face_calls_is_asked_and_hears_only_the_events_it_asked_for(
    rig: Rig,
) -> None:
    # The narrow client of `mooring call --detach` (mooring.link.blocking): the same frames
    # over a plain socket, in a thread of its own here (the engine runs on this loop).
    asked: list[ApprovalRequest] = []
    persisted: list[TaskRecord] = []
    heard: list[Event] = []

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(ApprovalOutcome.APPROVED)

    listening = await rig.face()
    hello = Hello(
        "cli", os.getpid(), "test", Askers(approval=ask), events=frozenset({"ToolRoundDidFinish"})
    )

    def session() -> TaskRecord:
        link = BlockingLink.connect(socket_path(rig.data_dir), hello)
        link.on_event = heard.append
        try:
            with pytest.raises(NotFound):
                link.call("find_task", "no-such-task")
            server = link.call("server", "demo")
            record: TaskRecord = link.call(
                "call", server, "greet", {"name": "Ada"}, on_persisted=persisted.append
            )
            return record
        finally:
            link.close()

    record = await asyncio.to_thread(session)
    assert record.state is LocalState.COMPLETED
    assert [r.tool for r in asked] == ["greet"]
    assert [r.id for r in persisted] == [record.id]
    assert [type(e).__name__ for e in heard] == ["ToolRoundDidFinish"]  # before the result
    # A face that asked for every event heard the record's changes too (told before the
    # result of its own next call).
    await listening.host.record(record.id)
    assert any(isinstance(e, TaskDidChange) and e.record.id == record.id for e in listening.heard)
    assert rig.calls() == 1


async def test_a_known_error_crosses_with_its_words_and_kind(rig: Rig) -> None:
    face = await rig.face()
    with pytest.raises(NotFound) as raised:
        await face.host.find_task("no-such-task")
    assert raised.value.key == "no-such-task"
    assert raised.value.code == "not_found"


@pytest.mark.parametrize(
    "path",
    [
        "ledger.get",
        "_prepared",
        "gateway",
        "chat._active",
        "stop",
        "start_monitoring",
        "chat.aclose",
        "chat.start",
        "rule_desk.__init__",
        "server_desk.add_definition",
        "account_desk._setup",
    ],
)
async def test_a_face_reaches_nothing_but_the_host_s_views_and_actions(rig: Rig, path: str) -> None:
    face = await rig.face()
    with pytest.raises(KnownError) as raised:
        await face.link.call(path)
    assert raised.value.code == "engine_bug"


async def test_the_socket_is_private_to_its_user(rig: Rig) -> None:
    mode = stat.S_IMODE(os.stat(socket_path(rig.data_dir)).st_mode)
    assert mode == 0o600


async def test_an_engine_is_busy_while_a_face_is_connected(rig: Rig) -> None:
    assert not rig.engine.busy()
    await rig.face()
    assert rig.engine.busy()


async def test_an_engine_with_nothing_to_do_ends_by_itself(rig: Rig) -> None:
    idle = Engine(
        rig.engine.host, data_dir=rig.data_dir, version="test", idle_after=0.05, idle_check=0.01
    )
    async with asyncio.timeout(30):
        await idle.run()  # no face, no call, no task to follow: it returns


def test_the_parts_a_face_proxies_are_the_parts_the_engine_serves() -> None:
    assert frozenset(PART_CALLS) == HOST_PARTS
