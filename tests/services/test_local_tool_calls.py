"""A local model's tool call written as ``<tool_call>`` text enters the chat loop as any tool call:
asked about first, sent to the server only once approved, audited as a tool round; a malformed
one is told back to the model and never sent. The model's output is scripted (the scripted
OpenAI endpoint stands in for the model's process); everything else is real: the local adapter,
the OpenAI SDK, the chat engine, the approval broker, the demo server over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from mooring.adapters.providers.local import LocalChatProvider, LocalEndpoint, LocalModelRuntime
from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome
from mooring.core.chat import ChatProvider, ProviderConfig, ProviderKind
from mooring.core.conversation import Role
from mooring.core.events import Event, ReplyDidStream
from mooring.core.servers import ServerDefinition
from tests.helpers.model_endpoints import ModelEndpoint, Text
from tests.services.conftest import Host, HostFactory, demo_definition

pytestmark = pytest.mark.anyio

LOCAL = ProviderConfig(
    id="local-1",
    name="local",
    kind=ProviderKind.LOCAL,
    base_url="file:///models/small.gguf",
    model="small",
)
LIST_CALL = '<tool_call>\n{"name": "demo__list_sample_files", "arguments": {}}\n</tool_call>'


class EndpointRuntime(LocalModelRuntime):
    """The model's process, stood in for by the scripted endpoint (only the model is faked)."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url

    async def acquire(self, model: Path) -> LocalEndpoint:
        return LocalEndpoint(self.url, "per-start-key", os.getpid())

    def release(self, model: Path) -> None:
        pass


def tool_calls_sent(server: ServerDefinition) -> int:
    log = Path(server.env["MOORING_DEMO_REQUEST_LOG"])
    lines = log.read_text().splitlines() if log.exists() else []
    return sum(1 for line in lines if json.loads(line).get("method") == "tools/call")


class WatchedAnswers(list[ApprovalAnswer]):
    """The asker's queued answers; taking one notes how many calls the server had seen then."""

    def __init__(self, server: ServerDefinition, *answers: ApprovalAnswer) -> None:
        super().__init__(answers)
        self.server = server
        self.calls_seen_when_asked: list[int] = []

    def pop(self, index: int = -1) -> ApprovalAnswer:  # type: ignore[override]
        self.calls_seen_when_asked.append(tool_calls_sent(self.server))
        return super().pop(index)


@dataclass
class LocalChat:
    host: Host
    demo: ServerDefinition
    streamed: list[str]


@pytest.fixture
async def local_chat(
    hosts: HostFactory, tmp_path: Path, model_endpoint: ModelEndpoint
) -> AsyncIterator[LocalChat]:
    async def resolve(key: str | None) -> ProviderConfig:
        return LOCAL

    def factory(config: ProviderConfig) -> ChatProvider:
        return LocalChatProvider(config, EndpointRuntime(model_endpoint.openai_url))

    host = await hosts(models=(resolve, factory))
    demo = demo_definition(tmp_path / "demo-store.sqlite3", tmp_path / "demo-requests.log")
    await host.store.add_server(demo)
    streamed: list[str] = []

    def on_event(event: Event) -> None:
        if isinstance(event, ReplyDidStream):
            streamed.append(event.delta)

    host.events.subscribe(on_event)
    scheduler = asyncio.create_task(host.monitor.run())
    try:
        yield LocalChat(host, demo, streamed)
    finally:
        chat = host.host.chat
        assert chat is not None
        with anyio.fail_after(30):
            await chat.aclose()
            await host.monitor.stop()
            scheduler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await scheduler


@pytest.mark.parametrize("outcome", [ApprovalOutcome.APPROVED, ApprovalOutcome.DENIED])
async def test_a_tool_call_written_as_text_is_asked_about_before_the_server_sees_it(
    local_chat: LocalChat, model_endpoint: ModelEndpoint, outcome: ApprovalOutcome
) -> None:
    host, demo = local_chat.host, local_chat.demo
    answers = WatchedAnswers(demo, ApprovalAnswer(outcome))
    host.answers = answers
    model_endpoint.script(Text(f"I will list them.\n{LIST_CALL}"), Text("Done."))
    chat = host.host.chat
    assert chat is not None
    conversation = await chat.create()
    with anyio.fail_after(60):
        result = await chat.send(conversation.id, "Which sample files are there?")

    assert result.error is None
    assert [r.tool for r in host.asked] == ["list_sample_files"]
    assert answers.calls_seen_when_asked == [0]  # asked before anything was sent
    assert tool_calls_sent(demo) == (1 if outcome is ApprovalOutcome.APPROVED else 0)
    stored = await chat.messages(conversation.id)
    assert [m.role for m in stored] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    assert stored[1].content == "I will list them."
    [call] = stored[1].tool_calls
    assert (call.name, call.arguments) == ("demo__list_sample_files", {})
    assert stored[2].tool_call_id == call.id
    assert stored[2].is_error is (outcome is ApprovalOutcome.DENIED)
    [item] = await chat.rounds(conversation.id)
    assert item.round.approval == outcome.value  # audited as any tool round
    # The person saw what the model said, never the markup.
    assert "<tool_call>" not in "".join(local_chat.streamed)
    # The model heard its call as a real tool call, and the result answering it.
    second = model_endpoint.requests[1].body["messages"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "demo__list_sample_files"
    assert second[-1]["role"] == "tool"
    assert second[-1]["tool_call_id"] == call.id


async def test_a_malformed_tool_call_is_told_back_to_the_model_and_never_run(
    local_chat: LocalChat, model_endpoint: ModelEndpoint
) -> None:
    host, demo = local_chat.host, local_chat.demo
    model_endpoint.script(
        Text('<tool_call>{"name": "demo__list_sample_files", "arguments": {"path": </tool_call>'),
        Text("Sorry."),
    )
    chat = host.host.chat
    assert chat is not None
    conversation = await chat.create()
    with anyio.fail_after(60):
        result = await chat.send(conversation.id, "Which sample files are there?")

    assert result.reply == "Sorry."
    assert host.asked == []
    assert tool_calls_sent(demo) == 0
    stored = await chat.messages(conversation.id)
    tool = stored[2]
    assert tool.role is Role.TOOL
    assert tool.is_error
    assert tool.content.startswith("Not run: the tool call is not valid JSON")
    told = model_endpoint.requests[1].body["messages"][-1]
    assert told["role"] == "tool"
    assert "Not run" in told["content"]
