"""Conversations with a model: the chat service against the real demo server as a subprocess,
a real SQLite file, the real tool runner and task monitor — only the model is scripted."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from markdown_it import MarkdownIt
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome, ApprovalRequest
from mooring.core.chat import ProviderFailure
from mooring.core.clock import SystemClock
from mooring.core.conversation import Message, MessageStatus, Role
from mooring.core.errors import KnownError
from mooring.core.events import (
    ConnectionDidChange,
    Event,
    EventBus,
    MessageDidAppend,
    ReplyDidStream,
    TaskDidChange,
    TurnDidEnd,
    TurnDidStart,
)
from mooring.core.ids import new_id
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.states import LocalState
from mooring.core.tools import ToolInfo
from mooring.services.chat import CHAT_TURN, FOLLOWUP_PREFIX, MODEL_CALL, ChatService
from mooring.storage.conversations import SqlConversations
from tests.core.tasks.factories import T0
from tests.helpers.scripted_model import CONFIG as SCRIPTED_CONFIG
from tests.helpers.scripted_model import ScriptedModel
from tests.services.conftest import SAMPLES, Host, HostFactory, demo_definition

# One tracer provider per process: share the tracing tests' exporter.
from tests.services.test_tracing import _EXPORTER, _provider  # noqa: F401

pytestmark = pytest.mark.anyio

CLEAN = str(SAMPLES / "suppliers_clean.csv")
AMBIGUOUS = str(SAMPLES / "suppliers_ambiguous_id.csv")
PEER = Path(__file__).resolve().parents[1] / "mcp" / "peers" / "fastmcp_tasks_server.py"


class Expect:
    """Waits (bounded) for the first event that satisfies a predicate; subscribe before acting."""

    def __init__(self, bus: EventBus, predicate: Callable[[Event], bool]) -> None:
        self._predicate = predicate
        self._seen = asyncio.Event()
        self.hit: Event | None = None
        self._unsubscribe = bus.subscribe(self._on)

    def _on(self, event: Event) -> None:
        if self.hit is None and self._predicate(event):
            self.hit = event
            self._seen.set()

    async def wait(self, limit: float = 60) -> Event:
        try:
            with anyio.fail_after(limit):
                await self._seen.wait()
        finally:
            self._unsubscribe()
        assert self.hit is not None
        return self.hit


@dataclass
class Chat:
    host: Host
    service: ChatService
    model: ScriptedModel
    demo: ServerDefinition
    tmp_path: Path
    seen: list[Event] = field(default_factory=list)

    def requests_to(self, server: ServerDefinition, tool: str) -> int:
        log = Path(server.env["MOORING_DEMO_REQUEST_LOG"])
        if not log.exists():
            return 0
        lines = [json.loads(line) for line in log.read_text().splitlines() if line]
        return sum(1 for r in lines if r.get("method") == "tools/call" and r.get("tool") == tool)

    async def add_server(
        self, alias: str, *, demo_settings: dict[str, str] | None = None, **changes: object
    ) -> ServerDefinition:
        server = demo_definition(
            self.tmp_path / f"{alias}-store.sqlite3",
            self.tmp_path / f"{alias}-requests.log",
            **(demo_settings or {}),
        )
        server = dataclasses.replace(server, alias=alias, **changes)  # type: ignore[arg-type]
        await self.host.store.add_server(server)
        return server


def build_chat(host: Host, model: ScriptedModel, *, max_rounds: int = 8) -> ChatService:
    """A second chat service on the same host, wired the way the host wires its own (model
    scripted), with a different limit of tool rounds per turn."""
    clock = SystemClock()
    service = ChatService(
        conversations=SqlConversations(host.db, clock),
        providers=model.resolve,
        provider_factory=model.factory,
        runner=host.runner,
        monitor=host.monitor,
        ledger=host.store,
        catalog=host.store,
        events=host.events,
        clock=clock,
        tools=host.host.offered_tools,
        max_rounds=max_rounds,
    )
    service.start()
    return service


@pytest.fixture
async def chat(
    hosts: HostFactory, tmp_path: Path, chat_model: ScriptedModel, request: pytest.FixtureRequest
) -> AsyncIterator[Chat]:
    """The host's chat on a scripted model, found by a scripted lookup; or, with the indirect
    parameter ``"stored"``, found in the provider book as the product finds it (a turn then
    starts in one database trip)."""
    model = chat_model
    stored = getattr(request, "param", "scripted") == "stored"
    host = await hosts(models=(None if stored else model.resolve, model.factory))
    if stored:
        assert host.host.providers is not None
        await host.host.providers.add_provider(SCRIPTED_CONFIG)
    demo = demo_definition(tmp_path / "demo-store.sqlite3", tmp_path / "demo-requests.log")
    await host.store.add_server(demo)
    service = host.host.chat  # the host's own chat service, talking to the scripted model
    assert service is not None
    scheduler = asyncio.create_task(host.monitor.run())
    made = Chat(host, service, model, demo, tmp_path)
    host.events.subscribe(made.seen.append)
    try:
        yield made
    finally:
        with anyio.fail_after(30):
            await service.aclose()
            await host.monitor.stop()
            scheduler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await scheduler


def roles(messages: list[Message]) -> list[str]:
    return [m.role.value + ("+followup" if m.followup else "") for m in messages]


async def test_a_plain_reply_streams_then_is_stored_and_names_the_conversation(chat: Chat) -> None:
    chat.model.reply("Hello! How can I help with your suppliers?")
    conversation = await chat.service.create()
    result = await chat.service.send(conversation.id, "Hi there\nsecond line")

    assert result.reply == "Hello! How can I help with your suppliers?"
    assert result.error is None
    stored = await chat.service.messages(conversation.id)
    assert [(m.role, m.content, m.status) for m in stored] == [
        (Role.USER, "Hi there\nsecond line", MessageStatus.COMPLETE),
        (Role.ASSISTANT, result.reply, MessageStatus.COMPLETE),
    ]
    deltas = [e for e in chat.seen if isinstance(e, ReplyDidStream)]
    assert len(deltas) > 1
    assert "".join(d.delta for d in deltas) == result.reply
    assert {d.message_id for d in deltas} == {result.reply_message_id}
    # Write, then tell: the reply is announced after the deltas, then the turn's end. (The
    # server may be connected while the message is stored: listing its tools overlaps that.)
    kinds = [
        type(e).__name__
        for e in chat.seen
        if not isinstance(e, TaskDidChange | ConnectionDidChange)
    ]
    assert kinds[0] == "MessageDidAppend"
    assert kinds[-2:] == ["MessageDidAppend", "TurnDidEnd"]
    [request] = chat.model.requests
    assert [m.content for m in request.messages] == ["Hi there\nsecond line"]
    assert request.system
    assert request.model == "scripted-model"
    assert "demo__import_suppliers" in {t.name for t in request.tools}
    assert (await chat.service.get(conversation.id)).title == "Hi there"


async def test_an_immediate_tool_result_goes_back_to_the_model(chat: Chat) -> None:
    chat.model.call("demo__list_sample_files", {}).reply("There are three sample files.")
    conversation = await chat.service.create()
    result = await chat.service.send(conversation.id, "Which sample files are there?")

    assert result.reply == "There are three sample files."
    stored = await chat.service.messages(conversation.id)
    assert roles(stored) == ["user", "assistant", "tool", "assistant"]
    call, tool_result = stored[1].tool_calls[0], stored[2]
    assert tool_result.tool_call_id == call.id
    assert "suppliers_clean.csv" in tool_result.content
    assert not tool_result.is_error
    # The model's second request carries the result, answering its call.
    second = chat.model.requests[1].messages
    assert second[-1].role is Role.TOOL
    assert second[-1].tool_call_id == call.id
    assert "suppliers_clean.csv" in second[-1].content
    # It went through the runner: approval asked, audited, recorded against the conversation.
    assert [r.tool for r in chat.host.asked] == ["list_sample_files"]
    [item] = await chat.service.rounds(conversation.id)
    assert item.round.approval == "approved"
    assert item.record is not None
    assert item.record.state is LocalState.COMPLETED
    assert item.record.conversation_id == conversation.id
    assert result.round_ids == (item.round.id,)
    assert chat.requests_to(chat.demo, "list_sample_files") == 1


async def test_a_task_is_reported_started_then_its_result_continues_the_conversation(
    chat: Chat,
) -> None:
    chat.model.call("demo__import_suppliers", {"path": CLEAN})
    chat.model.reply("I started the import; I will report when it is done.")
    chat.model.reply("The import finished: all suppliers saved.")
    conversation = await chat.service.create(auto_continue=True)
    followed = Expect(
        chat.host.events,
        lambda e: isinstance(e, TurnDidEnd) and not e.started_tasks,  # not the first turn
    )
    result = await chat.service.send(conversation.id, "Import the clean supplier file")
    assert result.reply == "I started the import; I will report when it is done."
    [record_id] = result.started_tasks
    started = (await chat.service.messages(conversation.id))[2]
    assert started.awaits_task
    assert "started as a background task" in started.content
    assert "server 'demo'" in started.content
    assert "import_suppliers" in started.content
    record = await chat.host.store.get(record_id)
    assert record is not None
    assert record.task_id is not None
    assert record.task_id in started.content
    assert chat.model.requests[1].messages[-1].content == started.content

    await followed.wait()  # the follow-up turn (continue automatically is on)
    [turn] = await chat.service.idle()
    assert turn.reply == "The import finished: all suppliers saved."
    stored = await chat.service.messages(conversation.id)
    assert roles(stored) == ["user", "assistant", "tool", "assistant", "tool+followup", "assistant"]
    followup = stored[4]
    assert followup.tool_round_id == started.tool_round_id
    assert "ended: completed" in followup.content
    last_request = chat.model.requests[-1].messages
    assert last_request[-1].role is Role.USER
    assert last_request[-1].content.startswith(FOLLOWUP_PREFIX)
    assert "completed" in last_request[-1].content
    assert chat.requests_to(chat.demo, "import_suppliers") == 1


async def test_with_continue_automatically_off_the_result_waits_for_the_user(chat: Chat) -> None:
    chat.model.call("demo__import_suppliers", {"path": CLEAN}).reply("Started.")
    conversation = await chat.service.create()
    stored_result = Expect(
        chat.host.events,
        lambda e: isinstance(e, MessageDidAppend) and e.message.followup,
    )
    await chat.service.send(conversation.id, "Import the clean file")
    await stored_result.wait()
    assert await chat.service.idle() == []
    assert len(chat.model.requests) == 2  # no turn started on its own

    chat.model.reply("All saved.")
    turn = await chat.service.continue_with_result(conversation.id)
    assert turn.reply == "All saved."
    assert chat.model.requests[-1].messages[-1].content.startswith(FOLLOWUP_PREFIX)
    with pytest.raises(KnownError, match="no new task result"):
        await chat.service.continue_with_result(conversation.id)


async def test_a_task_needing_input_waits_for_the_user_never_the_model(chat: Chat) -> None:
    chat.model.call("demo__import_suppliers", {"path": AMBIGUOUS}).reply("Started.")
    chat.model.reply("Imported with the column you chose.")
    conversation = await chat.service.create(auto_continue=True)
    asking = Expect(
        chat.host.events,
        lambda e: isinstance(e, TaskDidChange) and e.record.state is LocalState.INPUT_REQUIRED,
    )
    result = await chat.service.send(conversation.id, "Import the ambiguous file")
    waiting = await asking.wait()
    assert isinstance(waiting, TaskDidChange)
    before = len(chat.model.requests)
    stored_before = len(await chat.service.messages(conversation.id))
    [question] = await chat.host.store.inputs(waiting.record.id)
    assert await chat.service.idle() == []
    assert len(chat.model.requests) == before == 2  # the model was not asked
    assert len(await chat.service.messages(conversation.id)) == stored_before

    ended = Expect(
        chat.host.events,
        lambda e: isinstance(e, TurnDidEnd) and e.conversation_id == conversation.id,
    )
    delivered = await chat.service.answer_input(
        waiting.record.id, question.key, {"action": "accept", "content": {"column": "vendor_code"}}
    )
    assert delivered
    await ended.wait()
    [turn] = await chat.service.idle()
    assert turn.reply == "Imported with the column you chose."
    assert result.started_tasks == (waiting.record.id,)
    for request in chat.model.requests:
        assert all("Which column" not in m.content for m in request.messages)


async def test_a_denied_call_is_a_refusal_the_model_can_explain(chat: Chat) -> None:
    chat.host.answers.append(ApprovalAnswer(ApprovalOutcome.DENIED))
    chat.model.call("demo__list_sample_files", {}).reply("You declined, so I did not look.")
    conversation = await chat.service.create()
    result = await chat.service.send(conversation.id, "List the sample files")

    refusal = (await chat.service.messages(conversation.id))[2]
    assert refusal.is_error
    assert "refused and did not run" in refusal.content
    told = chat.model.requests[1].messages[-1]
    assert told.is_error
    assert told.content == refusal.content
    [item] = await chat.service.rounds(conversation.id)
    assert item.round.approval == "denied"
    assert item.record is not None
    assert item.record.state is LocalState.DENIED
    assert chat.requests_to(chat.demo, "list_sample_files") == 0
    assert result.reply == "You declined, so I did not look."


async def test_two_servers_with_the_same_tool_both_stay_usable(chat: Chat) -> None:
    other = await chat.add_server("demo.two")
    chat.model.calls(("demo__list_sample_files", {}), ("demo_two__list_sample_files", {})).reply(
        "Both listed."
    )
    conversation = await chat.service.create()
    await chat.service.send(conversation.id, "List files on both servers")

    names = [t.name for t in chat.model.requests[0].tools]
    assert len(names) == len(set(names))
    assert {"demo__list_sample_files", "demo_two__list_sample_files"} <= set(names)
    rounds = await chat.service.rounds(conversation.id)
    assert sorted((r.server_alias, r.round.tool) for r in rounds) == [
        ("demo", "list_sample_files"),
        ("demo.two", "list_sample_files"),
    ]
    assert chat.requests_to(chat.demo, "list_sample_files") == 1
    assert chat.requests_to(other, "list_sample_files") == 1


@pytest.mark.parametrize(
    ("kind", "partial", "words"),
    [
        (ProviderFailure.AUTH, "", "refused the API key"),
        (ProviderFailure.UNREACHABLE, "", "could not be reached"),
        (ProviderFailure.STREAM_BROKEN, "Half a sent", "broke off halfway"),
    ],
)
async def test_a_provider_failure_is_stored_readably(
    chat: Chat, kind: ProviderFailure, partial: str, words: str
) -> None:
    chat.model.fail(kind, "HTTP said no", partial=partial)
    conversation = await chat.service.create()
    result = await chat.service.send(conversation.id, "Hello?")

    assert result.error is not None
    assert words in result.error
    assert "Traceback" not in result.error
    user, reply = await chat.service.messages(conversation.id)
    assert user.content == "Hello?"
    assert reply.status is MessageStatus.ERROR
    assert reply.error_kind == kind.value
    assert reply.error == result.error
    assert reply.content == partial
    assert chat.model.closed == 1  # the provider was closed after the failed call

    # The conversation goes on: the partial text stays as context, the error text does not.
    chat.model.reply("Back again.")
    again = await chat.service.send(conversation.id, "Try again")
    assert again.reply == "Back again."
    contents = [m.content for m in chat.model.requests[-1].messages]
    assert contents == (["Hello?", partial, "Try again"] if partial else ["Hello?\n\nTry again"])


async def test_a_rate_limit_is_waited_out_once_then_reported(chat: Chat) -> None:
    chat.model.fail(ProviderFailure.RATE_LIMITED, "slow down", retry_after=0).reply("Fine now.")
    conversation = await chat.service.create()
    assert (await chat.service.send(conversation.id, "Hi")).reply == "Fine now."

    chat.model.fail(ProviderFailure.RATE_LIMITED, "slow down", retry_after=0)
    chat.model.fail(ProviderFailure.RATE_LIMITED, "still slow", retry_after=0)
    result = await chat.service.send(conversation.id, "Again")
    assert result.error is not None
    assert "rate limiting" in result.error


async def test_one_provider_client_serves_every_turn_until_shutdown(chat: Chat) -> None:
    model = ScriptedModel()
    service = build_chat(chat.host, model)
    try:
        model.reply("One.").reply("Two.").reply("Three.")
        first = await service.create()
        second = await service.create()
        assert (await service.send(first.id, "Hi")).reply == "One."
        assert (await service.send(second.id, "Hello")).reply == "Two."
        assert (await service.send(first.id, "Again")).reply == "Three."
        assert (model.built, model.closed) == (1, 0)  # kept open, as a script keeps its client
        model.fail(ProviderFailure.AUTH, "key refused").reply("With the new key.")
        assert (await service.send(first.id, "Now?")).error is not None
        assert (model.built, model.closed) == (1, 1)  # a failed client is not reused
        assert (await service.send(first.id, "And now?")).reply == "With the new key."
        assert model.built == 2  # built again, its secrets read again
    finally:
        await service.aclose()
    assert model.closed == 2  # closed at shutdown


async def test_stopping_mid_stream_keeps_the_partial_text_marked_interrupted(chat: Chat) -> None:
    chat.model.hang("The answer is partly here")
    conversation = await chat.service.create()
    streamed = Expect(chat.host.events, _streamed("The answer is partly here"))
    turn = asyncio.create_task(chat.service.send(conversation.id, "Tell me a long story"))
    await streamed.wait()  # every piece arrived; the model goes on "thinking"
    assert chat.service.is_busy(conversation.id)
    with pytest.raises(KnownError, match="stop it first"):
        await chat.service.delete(conversation.id)
    assert await chat.service.stop(conversation.id)
    with anyio.fail_after(30):
        result = await turn

    assert result.interrupted
    assert result.reply == "The answer is partly here"
    reply = (await chat.service.messages(conversation.id))[-1]
    assert reply.status is MessageStatus.INTERRUPTED
    assert reply.content == "The answer is partly here"
    assert not chat.service.is_busy(conversation.id)
    assert chat.model.closed == 1


async def test_a_stop_as_the_turn_starts_ends_it_before_the_model_writes(chat: Chat) -> None:
    # Stop pressed right after Send: the turn has started, its model request not yet. The stop
    # must not be lost (the reply would go on, here forever: the model never finishes).
    chat.model.hang("Once upon a time")
    conversation = await chat.service.create()
    started = Expect(chat.host.events, lambda e: isinstance(e, TurnDidStart))
    turn = asyncio.create_task(chat.service.send(conversation.id, "Tell me a long story"))
    await started.wait()
    assert await chat.service.stop(conversation.id)  # before the stream exists
    with anyio.fail_after(30):
        result = await turn
    assert result.interrupted
    reply = (await chat.service.messages(conversation.id))[-1]
    assert reply.status is MessageStatus.INTERRUPTED
    assert not chat.service.is_busy(conversation.id)


async def test_search_and_export_round_trip(chat: Chat, tmp_path: Path) -> None:
    chat.model.call("demo__list_sample_files", {}).reply("Found the pelican manifest.")
    conversation = await chat.service.create(title="Files")
    await chat.service.send(conversation.id, "Show me sample files")
    other = await chat.service.create(title="Something else")
    chat.model.reply("Nothing here.")
    await chat.service.send(other.id, "Unrelated")

    [hit] = await chat.service.search("pelican")
    assert hit.conversation.id == conversation.id
    assert "[pelican]" in hit.snippet
    assert [h.conversation.id for h in await chat.service.search("unrelated")] == [other.id]

    data = json.loads(await chat.service.export(conversation.id, "json"))
    assert data["conversation"]["id"] == conversation.id
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "tool", "assistant"]
    [tool_round] = data["tool_rounds"]
    assert tool_round["server"] == "demo"
    assert tool_round["tool"] == "list_sample_files"
    assert tool_round["approval"] == "approved"
    assert tool_round["state"] == "completed"
    assert data["messages"][2]["tool_round_id"] == tool_round["id"]
    assert data["messages"][1]["tool_calls"][0]["name"] == "demo__list_sample_files"

    markdown = await chat.service.export(conversation.id, "md")
    assert markdown.startswith("# Files")
    assert "| round | server | tool | approval | task | state |" in markdown
    assert "approved" in markdown
    assert "pelican" in markdown


async def test_the_markdown_export_shows_names_as_code_and_keeps_model_text_inert(
    chat: Chat,
) -> None:
    chat.model.calls(("demo__list_sample_files", {}), ("demo__odd``name`", {}))
    chat.model.reply("Found the <b>pelican</b> manifest.")
    conversation = await chat.service.create(title="Files <img src=x> *and* `more`")
    await chat.service.send(conversation.id, "Show me sample files")

    markdown = await chat.service.export(conversation.id, "md")
    lines = markdown.splitlines()
    # Names read as they are, in code spans (a longer fence around a name with backticks).
    assert "Tool call `demo__list_sample_files`:" in lines
    assert "Tool call ``` demo__odd``name` ```:" in lines
    assert "## Tool result (`demo/list_sample_files`)" in lines
    [row] = [line for line in lines if "`list_sample_files`" in line and line.startswith("| ")]
    assert row.split(" | ")[1:4] == ["`demo`", "`list_sample_files`", "`approved`"]
    assert "\\_" not in markdown
    # Text from people and models still cannot add structure or HTML.
    assert lines[0] == "# Files \\<img src=x\\> \\*and\\* \\`more\\`"
    assert "Found the <b>pelican</b> manifest." in lines
    assert lines[lines.index("Found the <b>pelican</b> manifest.") - 1] == "```text"


@pytest.mark.parametrize("chat", ["stored"], indirect=True)
async def test_a_turn_by_whole_id_reaches_the_model_after_one_database_trip(
    chat: Chat, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The conversation, its provider, the servers and the user's message: one write
    # transaction on the way to every model request (bench: first_token).
    conversation = await chat.service.create()
    trips: list[str] = []
    for name in ("run", "run_on_driver"):
        real = getattr(chat.host.db, name)

        def counted(fn: Any, real: Any = real, name: str = name) -> Any:
            trips.append(name)
            return real(fn)

        monkeypatch.setattr(chat.host.db, name, counted)
    before_model: list[list[str]] = []
    chat.model.on_request = lambda: before_model.append(list(trips))
    chat.model.reply("Hello.")

    await chat.service.send(conversation.id, "Hi")

    assert before_model == [["run_on_driver"]]
    stored = await chat.service.messages(conversation.id)
    assert [(m.role, m.content) for m in stored] == [(Role.USER, "Hi"), (Role.ASSISTANT, "Hello.")]
    # The servers came with that trip: the demo server's tools are offered.
    assert any(t.name == "demo__list_suppliers" for t in chat.model.requests[0].tools)


@pytest.mark.parametrize("chat", ["scripted", "stored"], indirect=True)
async def test_a_task_result_seen_elsewhere_is_caught_up_before_the_next_turn(
    chat: Chat,
) -> None:
    chat.model.call("demo__import_suppliers", {"path": CLEAN}).reply("Started.")
    conversation = await chat.service.create()
    # Subscribed before acting: the task may end while the chat service closes.
    done = Expect(
        chat.host.events,
        lambda e: isinstance(e, TaskDidChange) and e.record.is_terminal,
    )
    result = await chat.service.send(conversation.id, "Import it")
    [record_id] = result.started_tasks
    await chat.service.aclose()  # nobody in this process listens any more
    ended = await done.wait()
    assert isinstance(ended, TaskDidChange)
    assert ended.record.id == record_id
    assert not any(m.followup for m in await chat.service.messages(conversation.id))

    chat.model.reply("It completed.")
    await chat.service.send(conversation.id, "How did it go?")
    stored = await chat.service.messages(conversation.id)
    assert roles(stored)[-3:] == ["tool+followup", "user", "assistant"]
    sent = chat.model.requests[-1].messages[-1]
    assert sent.role is Role.USER
    assert sent.content.startswith(FOLLOWUP_PREFIX)
    assert sent.content.endswith("How did it go?")


async def test_unknown_and_hidden_tools_are_never_run(chat: Chat) -> None:
    await chat.add_server("guarded", hidden_tools=("list_*",))
    chat.model.calls(("guarded__list_sample_files", {}), ("nope", {})).reply("Could not.")
    conversation = await chat.service.create()
    await chat.service.send(conversation.id, "Try the hidden tool")

    assert "guarded__list_sample_files" not in {t.name for t in chat.model.requests[0].tools}
    assert "guarded__import_suppliers" in {t.name for t in chat.model.requests[0].tools}
    results = [m for m in await chat.service.messages(conversation.id) if m.role is Role.TOOL]
    assert all(m.is_error and "no tool called" in m.content for m in results)
    assert await chat.service.rounds(conversation.id) == []


async def test_a_model_that_keeps_calling_tools_is_stopped(chat: Chat) -> None:
    model = ScriptedModel()
    service = build_chat(chat.host, model, max_rounds=2)
    try:
        model.call("demo__list_sample_files", {}).call("demo__list_sample_files", {})
        conversation = await service.create()
        result = await service.send(conversation.id, "Loop")
        assert result.error is not None
        assert "2 times in a row" in result.error
        assert len(model.requests) == 2
        assert (await service.messages(conversation.id))[-1].error_kind == "too_many_tool_rounds"
    finally:
        await service.aclose()


async def test_without_a_provider_nothing_is_stored(chat: Chat) -> None:
    conversation = await chat.service.create()
    chat.model.configured = False
    with pytest.raises(KnownError, match="No model provider"):
        await chat.service.send(conversation.id, "Hello")
    assert await chat.service.messages(conversation.id) == []
    with pytest.raises(KnownError, match="No model provider"):
        await chat.service.create()


async def test_a_conversation_can_ask_another_model_than_the_providers_default(
    chat: Chat,
) -> None:
    chat.model.reply("From the big one.").reply("From the default.")
    conversation = await chat.service.create(model="bigger-model")
    await chat.service.send(conversation.id, "Hi")
    assert chat.model.requests[-1].model == "bigger-model"
    await chat.service.configure(conversation.id, provider="scripted")  # back to the default
    await chat.service.send(conversation.id, "Hi again")
    assert chat.model.requests[-1].model == "scripted-model"
    stored = await chat.service.messages(conversation.id)
    assert [m.model for m in stored if m.role is Role.ASSISTANT] == [
        "bigger-model",
        "scripted-model",
    ]


async def test_continuing_automatically_without_a_provider_says_so_in_the_conversation(
    chat: Chat,
) -> None:
    chat.model.call("demo__import_suppliers", {"path": CLEAN}).reply("Started.")
    conversation = await chat.service.create(auto_continue=True)
    await chat.service.send(conversation.id, "Import it")
    chat.model.configured = False  # e.g. the provider was removed meanwhile
    ended = Expect(chat.host.events, lambda e: isinstance(e, TurnDidEnd) and e.error is not None)
    await ended.wait()
    await chat.service.idle()
    stored = await chat.service.messages(conversation.id)
    assert roles(stored)[-2:] == ["tool+followup", "assistant"]
    assert stored[-1].status is MessageStatus.ERROR
    assert stored[-1].error == "Could not continue automatically: No model provider is configured."
    assert len(chat.model.requests) == 2


async def test_a_peers_results_and_failures_reach_the_model_in_plain_words(chat: Chat) -> None:
    """The fastmcp-tasks peer (a Tasks server nobody here wrote), over HTTP."""
    from tests.mcp.servers import start_peer, stop_processes

    process, url = start_peer(PEER)
    try:
        peer = ServerDefinition(
            id=new_id(), alias="peer", transport=Transport.HTTP, url=url, created_at=T0
        )
        await chat.host.store.add_server(peer)
        chat.model.calls(("peer__crunch", {"n": 5}), ("peer__malfunction", {}))
        chat.model.reply("Both are running.")
        conversation = await chat.service.create()
        both_ended = Expect(chat.host.events, _nth_followup(2))
        result = await chat.service.send(conversation.id, "Crunch 5, and try the broken one")
        assert len(result.started_tasks) == 2
        await both_ended.wait()
        await chat.service.idle()

        chat.model.reply("Crunching worked; the other tool failed because its backend is down.")
        await chat.service.continue_with_result(conversation.id)
        told = chat.model.requests[-1].messages[-1]
        assert told.role is Role.USER
        assert told.content.count(FOLLOWUP_PREFIX) == 2  # both results, one user-side turn
        assert "crunched 5" in told.content
        assert "It failed: the backend is down" in told.content
        states = {
            r.round.tool: r.record.state if r.record else None
            for r in await chat.service.rounds(conversation.id)
        }
        assert states == {"crunch": LocalState.COMPLETED, "malfunction": LocalState.FAILED}
    finally:
        stop_processes([process])


def _nth_followup(n: int) -> Callable[[Event], bool]:
    seen: list[Event] = []

    def predicate(event: Event) -> bool:
        if isinstance(event, MessageDidAppend) and event.message.followup:
            seen.append(event)
        return len(seen) >= n

    return predicate


def _streamed(text: str) -> Callable[[Event], bool]:
    pieces: list[str] = []

    def predicate(event: Event) -> bool:
        if isinstance(event, ReplyDidStream):
            pieces.append(event.delta)
        return "".join(pieces) == text

    return predicate


async def test_a_turn_is_traced_without_its_content(chat: Chat) -> None:
    spans: InMemorySpanExporter = _EXPORTER
    spans.clear()
    chat.model.call("demo__list_sample_files", {}).reply("Files: three, pelican-secret")
    conversation = await chat.service.create()
    await chat.service.send(conversation.id, "my words are pelican-secret")

    found = spans.get_finished_spans()
    [turn] = [s for s in found if s.name == CHAT_TURN]
    calls = [s for s in found if s.name == MODEL_CALL]
    assert turn.parent is None
    assert len(calls) == 2
    for call in calls:
        assert call.parent is not None
        assert call.parent.span_id == turn.context.span_id
    assert calls[0].attributes is not None
    assert calls[0].attributes["mooring.chat.tool_calls"] == 1
    assert "mooring.chat.first_token_ms" not in calls[0].attributes  # no text came
    assert calls[1].attributes is not None
    assert float(str(calls[1].attributes["mooring.chat.first_token_ms"])) >= 0
    assert turn.attributes is not None
    assert turn.attributes["mooring.chat.model_calls"] == 2
    assert turn.attributes["mooring.chat.tool_rounds"] == 1
    assert turn.attributes["gen_ai.request.model"] == "scripted-model"
    # The tool round is its own trace, as for `mooring call`.
    [tool_round] = [s for s in found if s.name.startswith("mooring.tool_round")]
    assert tool_round.parent is None
    assert tool_round.context.trace_id != turn.context.trace_id
    for span in found:
        for value in (span.attributes or {}).values():
            assert "pelican-secret" not in str(value)


async def test_stopping_while_tools_run_makes_no_further_calls(chat: Chat) -> None:
    chat.model.calls(("demo__list_sample_files", {}), ("demo__list_suppliers", {}))
    conversation = await chat.service.create()
    approve = chat.host.broker.ask
    assert approve is not None

    async def stop_then_approve(request: ApprovalRequest) -> ApprovalAnswer:
        await chat.service.stop(conversation.id)  # the user presses stop while being asked
        return await approve(request)

    chat.host.broker.ask = stop_then_approve
    result = await chat.service.send(conversation.id, "List files and suppliers")

    assert result.interrupted
    tools = [m for m in await chat.service.messages(conversation.id) if m.role is Role.TOOL]
    assert "suppliers_clean.csv" in tools[0].content  # the call already approved went on
    assert tools[1].content.startswith("Not run: the user stopped")
    assert chat.requests_to(chat.demo, "list_suppliers") == 0
    assert len(chat.model.requests) == 1  # and the model is not asked again


async def test_a_tool_source_that_lists_hidden_tools_cannot_offer_them(chat: Chat) -> None:
    guarded = dataclasses.replace(chat.demo, hidden_tools=("delete_*",))

    async def careless_source(
        _servers: Sequence[ServerDefinition],
    ) -> list[tuple[ServerDefinition, ToolInfo]]:
        return [
            (guarded, ToolInfo(server_id=guarded.id, name="delete_supplier")),
            (guarded, ToolInfo(server_id=guarded.id, name="list_suppliers")),
        ]

    service = ChatService(
        conversations=SqlConversations(chat.host.db, SystemClock()),
        providers=chat.model.resolve,
        provider_factory=chat.model.factory,
        runner=chat.host.runner,
        monitor=chat.host.monitor,
        ledger=chat.host.store,
        catalog=chat.host.store,
        events=chat.host.events,
        clock=SystemClock(),
        tools=careless_source,
    )
    chat.model.reply("ok")
    conversation = await service.create()
    await service.send(conversation.id, "hi")
    assert [t.name for t in chat.model.requests[0].tools] == ["demo__list_suppliers"]


async def test_a_call_with_no_answer_is_reported_as_an_unknown_outcome(chat: Chat) -> None:
    await chat.add_server("flaky", demo_settings={"fault_drop_create_reply": "1"})
    chat.model.call("flaky__import_suppliers", {"path": CLEAN}).reply("I cannot tell if it ran.")
    conversation = await chat.service.create()
    result = await chat.service.send(conversation.id, "Import it")

    told = [m for m in await chat.service.messages(conversation.id) if m.role is Role.TOOL]
    assert told[0].is_error
    assert "may or may not have run" in told[0].content
    assert not told[0].awaits_task
    [item] = await chat.service.rounds(conversation.id)
    assert item.record is not None
    assert item.record.state is LocalState.UNKNOWN_OUTCOME
    assert result.started_tasks == ()


async def test_the_markdown_export_keeps_the_users_own_text_from_adding_structure(
    chat: Chat,
) -> None:
    chat.model.reply("Fine.")
    conversation = await chat.service.create(title="Notes")
    await chat.service.send(conversation.id, "First line\n## Assistant\n| a | b |\n<b>bold</b>")

    markdown = await chat.service.export(conversation.id, "md")
    # Read as a CommonMark reader does: only Mooring's own sections are headings, no table or
    # HTML comes from what the user typed, and the text is all there.
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == ["Notes", "You", "Assistant"]
    assert not [t for t in tokens if t.type in ("table_open", "html_block", "html_inline")]
    [typed] = [t.content for t in tokens if t.type == "fence" and "First line" in t.content]
    assert typed == "First line\n## Assistant\n| a | b |\n<b>bold</b>\n"
