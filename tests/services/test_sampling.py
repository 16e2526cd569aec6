"""A server's sampling and form requests during a plain call, through the services.

The server is a real process (the durable 2025-11-25 peer's ``sample_job`` / ``form_job``); the
person is scripted; the model provider is the injected callable (providers are faked, as the
model is everywhere in the suite)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mooring.core.approval.rules import ApprovalRule, Decision, Scope
from mooring.core.chat import (
    ChatRequest,
    ProviderError,
    ProviderFailure,
    ReplyDone,
    ReplyEvent,
    StopReason,
    TextDelta,
)
from mooring.core.ids import new_id
from mooring.core.sampling import (
    SAMPLING_RULE,
    SampledMessage,
    SamplingAnswer,
    SamplingChoice,
    SamplingReply,
    SamplingRequest,
)
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.states import LocalState
from mooring.services.sampling import InputBroker, sampling_provider
from tests.services.conftest import Host, HostFactory, run_until

pytestmark = pytest.mark.anyio

PEER = Path(__file__).resolve().parents[1] / "mcp" / "peers" / "legacy_tasks_server.py"


def peer(tmp_path: Path) -> ServerDefinition:
    return ServerDefinition(
        id=new_id(),
        alias="poet",
        transport=Transport.STDIO,
        command=sys.executable,
        args=(str(PEER), f"--store={tmp_path / 'store.json'}"),
        created_at=datetime.now(UTC),
    )


class Person:
    """Scripted answers, and what the person was shown."""

    def __init__(self, *answers: SamplingAnswer, accept_reply: bool = True) -> None:
        self.answers = list(answers)
        self.shown: list[tuple[SamplingRequest, bool]] = []
        self.replies: list[SamplingReply] = []
        self.accept_reply = accept_reply

    async def ask(self, request: SamplingRequest, has_provider: bool) -> SamplingAnswer:
        self.shown.append((request, has_provider))
        answer = self.answers.pop(0)
        return (
            answer
            if answer.request is not None
            else SamplingAnswer(answer.choice, request, answer.typed_reply)
        )

    async def review(self, _request: SamplingRequest, reply: SamplingReply) -> bool:
        self.replies.append(reply)
        return self.accept_reply


class Model:
    def __init__(self) -> None:
        self.sent: list[SamplingRequest] = []

    async def __call__(self, request: SamplingRequest) -> SamplingReply:
        self.sent.append(request)
        return SamplingReply(f"waves on {request.messages[-1].text}", model="fake-model-1")


async def setup(
    hosts: HostFactory, tmp_path: Path, person: Person, model: Model | None
) -> tuple[Host, InputBroker, ServerDefinition]:
    host = await hosts()
    assert host.inputs is not None
    host.inputs.ask_sampling = person.ask
    host.inputs.review_reply = person.review
    host.inputs.provider = model
    server = peer(tmp_path)
    await host.store.add_server(server)
    return host, host.inputs, server


async def result_text(host: Host, server: ServerDefinition, tool: str) -> str:
    record = await host.runner.call(server, tool, {"topic": "tides"})
    assert record.state is LocalState.COMPLETED, record.reason
    assert record.tool_round_id is not None
    tool_round = await host.store.tool_round(record.tool_round_id)
    assert tool_round is not None
    assert tool_round.result is not None
    return str(tool_round.result["content"][0]["text"])


async def test_an_approved_and_edited_request_goes_to_the_model_and_its_reply_back(
    hosts: HostFactory, tmp_path: Path
) -> None:
    model = Model()
    person = Person(SamplingAnswer(SamplingChoice.APPROVE))
    host, _inputs, server = await setup(hosts, tmp_path, person, model)

    async def edit(request: SamplingRequest, has_provider: bool) -> SamplingAnswer:
        person.shown.append((request, has_provider))
        changed = request.edited(messages=[SampledMessage("user", "the moon")], max_tokens=20)
        return SamplingAnswer(SamplingChoice.APPROVE, changed)

    assert host.inputs is not None
    host.inputs.ask_sampling = edit
    text = await result_text(host, server, "sample_job")
    [(shown, has_provider)] = person.shown
    assert has_provider
    assert shown.server_alias == "poet"
    assert shown.messages[0].text == "A haiku about tides"
    assert shown.system_prompt == "You are a poet."
    assert shown.model_hints == ("claude",)
    assert shown.speed_priority == 0.5
    assert shown.max_tokens == 64
    [sent] = model.sent
    assert sent.messages[0].text == "the moon"  # the edit, not the original
    assert sent.max_tokens == 20
    assert [r.text for r in person.replies] == ["waves on the moon"]
    assert text == "model fake-model-1 wrote: waves on the moon"


async def test_a_declined_request_never_reaches_the_model(
    hosts: HostFactory, tmp_path: Path
) -> None:
    model = Model()
    host, _inputs, server = await setup(
        hosts, tmp_path, Person(SamplingAnswer(SamplingChoice.DECLINE)), model
    )
    text = await result_text(host, server, "sample_job")
    assert model.sent == []
    assert text == "declined: -1 User rejected sampling request"
    audit = await host.store.rules.audit()
    assert [(a.tool, a.outcome, a.actor) for a in audit if a.tool == "sampling/createMessage"] == [
        ("sampling/createMessage", "denied", "user")
    ]


async def test_a_rejected_model_reply_is_not_sent_back(hosts: HostFactory, tmp_path: Path) -> None:
    model = Model()
    person = Person(SamplingAnswer(SamplingChoice.APPROVE), accept_reply=False)
    host, _inputs, server = await setup(hosts, tmp_path, person, model)
    text = await result_text(host, server, "sample_job")
    assert len(model.sent) == 1
    assert text == "declined: -1 User rejected sampling request"


async def test_without_a_provider_the_person_types_the_reply(
    hosts: HostFactory, tmp_path: Path
) -> None:
    person = Person(SamplingAnswer(SamplingChoice.APPROVE, typed_reply="salt and silver"))
    host, _inputs, server = await setup(hosts, tmp_path, person, None)
    text = await result_text(host, server, "sample_job")
    [(_shown, has_provider)] = person.shown
    assert not has_provider
    assert text == "model typed by the user wrote: salt and silver"


async def test_always_allow_sampling_for_this_server_skips_the_question_next_time(
    hosts: HostFactory, tmp_path: Path
) -> None:
    model = Model()
    person = Person(SamplingAnswer(SamplingChoice.APPROVE_ALWAYS))
    host, _inputs, server = await setup(hosts, tmp_path, person, model)
    await result_text(host, server, "sample_job")
    rules = [r for r in await host.store.rules.list_rules() if r.tool_pattern == SAMPLING_RULE]
    assert len(rules) == 1
    second = await result_text(host, server, "sample_job")
    assert len(person.shown) == 1  # not asked again
    assert len(model.sent) == 2
    assert len(person.replies) == 2  # the reply is still shown before it goes back
    assert second.startswith("model fake-model-1 wrote:")


async def test_a_tool_wildcard_rule_does_not_let_sampling_through(
    hosts: HostFactory, tmp_path: Path
) -> None:
    model = Model()
    person = Person(SamplingAnswer(SamplingChoice.DECLINE))
    host, _inputs, server = await setup(hosts, tmp_path, person, model)
    await host.store.rules.add_rule(
        ApprovalRule(
            id=new_id(),
            server_identity=server.identity,
            tool_pattern="*",
            decision=Decision.ALLOW,
            scope=Scope.ALWAYS,
            created_at=datetime.now(UTC),
        )
    )
    text = await result_text(host, server, "sample_job")
    assert len(person.shown) == 1
    assert model.sent == []
    assert text.startswith("declined")


async def test_a_form_request_outside_a_task_uses_the_form_asker(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host, inputs, server = await setup(hosts, tmp_path, Person(), None)
    asked: list[dict[str, Any]] = []

    async def form(
        _server: ServerDefinition, method: str, params: dict[str, Any]
    ) -> dict[str, Any] | None:
        assert method == "elicitation/create"
        asked.append(params)
        return {"action": "accept", "content": {"colour": "teal"}}

    inputs.ask_form = form
    text = await result_text(host, server, "form_job")
    assert asked[0]["message"] == "Which colour?"
    assert '"teal"' in text
    inputs.ask_form = None  # no one to ask: declined, the call still completes
    assert '"decline"' in await result_text(host, server, "form_job")


class ScriptedChat:
    """A ``ChatProvider`` that streams a fixed reply (the model is the one thing we fake)."""

    def __init__(self, *, fail: bool = False) -> None:
        self.requests: list[ChatRequest] = []
        self.fail = fail

    async def stream(self, request: ChatRequest) -> AsyncIterator[ReplyEvent]:
        self.requests.append(request)
        if self.fail:
            raise ProviderError(ProviderFailure.RATE_LIMITED, "slow down")
        yield TextDelta("ebb ")
        yield ReplyDone(text="ebb and flow", stop_reason=StopReason.MAX_TOKENS)

    async def list_models(self) -> list[str]:
        return ["scripted"]

    async def aclose(self) -> None:
        return None


async def test_the_chat_provider_answers_an_approved_request_with_its_limits(
    hosts: HostFactory, tmp_path: Path
) -> None:
    chat = ScriptedChat()
    person = Person(SamplingAnswer(SamplingChoice.APPROVE))
    host, inputs, server = await setup(hosts, tmp_path, person, None)
    inputs.provider = sampling_provider(chat, "scripted")
    text = await result_text(host, server, "sample_job")
    [sent] = chat.requests
    assert sent.model == "scripted"
    assert sent.system == "You are a poet."
    assert sent.max_tokens == 64
    assert sent.tools == ()
    assert [m.content for m in sent.messages] == ["A haiku about tides"]
    assert [(r.text, r.stop_reason) for r in person.replies] == [("ebb and flow", "maxTokens")]
    assert text == "model scripted wrote: ebb and flow"


async def test_a_failing_model_declines_the_request(hosts: HostFactory, tmp_path: Path) -> None:
    person = Person(SamplingAnswer(SamplingChoice.APPROVE))
    host, inputs, server = await setup(hosts, tmp_path, person, None)
    inputs.provider = sampling_provider(ScriptedChat(fail=True), "scripted")
    text = await result_text(host, server, "sample_job")
    assert text == "declined: -1 User rejected sampling request"
    assert person.replies == []


async def test_a_legacy_task_s_sampling_question_is_answered_through_the_ledger(
    hosts: HostFactory, tmp_path: Path
) -> None:
    model = Model()
    person = Person(SamplingAnswer(SamplingChoice.APPROVE))
    host, inputs, server = await setup(hosts, tmp_path, person, model)
    record = await host.runner.call(server, "muse_job", {})
    assert record.wire is not None
    waiting = await run_until(host, record.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    [question] = await host.store.inputs(waiting.id)
    assert question.method == "sampling/createMessage"
    # What the CLI does for a task's sampling question: the same approval, then tasks/update.
    answer = await inputs.sample(server, question.params, task_tool="muse_job")
    assert answer is not None
    [(shown, _provider)] = person.shown
    assert shown.task_tool == "muse_job"
    settled = await host.monitor.answer(waiting.id, question.key, answer)
    assert settled.delivered
    final = await run_until(host, record.id, lambda r: r.is_terminal)
    assert final.state is LocalState.COMPLETED
    assert final.tool_round_id is not None
    tool_round = await host.store.tool_round(final.tool_round_id)
    assert tool_round is not None
    assert tool_round.result is not None
    assert "waves on A line on rain" in tool_round.result["content"][0]["text"]


MRTR = Path(__file__).resolve().parents[1] / "mcp" / "peers" / "mrtr_server.py"


def mrtr_peer() -> ServerDefinition:
    return ServerDefinition(
        id=new_id(),
        alias="mrtr",
        transport=Transport.STDIO,
        command=sys.executable,
        args=(str(MRTR),),
        created_at=datetime.now(UTC),
    )


async def test_a_2026_server_s_multi_round_trip_sampling_is_approved_then_retried(
    hosts: HostFactory, tmp_path: Path
) -> None:
    model = Model()
    person = Person(SamplingAnswer(SamplingChoice.APPROVE))
    host, _inputs, _server = await setup(hosts, tmp_path, person, model)
    server = mrtr_peer()
    await host.store.add_server(server)
    text = await result_text(host, server, "haiku")
    [(shown, _provider)] = person.shown
    assert shown.server_alias == "mrtr"
    assert shown.messages[0].text == "A line on tides"
    assert shown.system_prompt == "Be brief."
    assert text == "tides: waves on A line on tides (fake-model-1)"


async def test_a_declined_multi_round_trip_request_fails_the_call_before_it_ran(
    hosts: HostFactory, tmp_path: Path
) -> None:
    model = Model()
    host, _inputs, _server = await setup(
        hosts, tmp_path, Person(SamplingAnswer(SamplingChoice.DECLINE)), model
    )
    server = mrtr_peer()
    await host.store.add_server(server)
    record = await host.runner.call(server, "haiku", {"topic": "tides"})
    assert record.state is LocalState.FAILED
    assert model.sent == []
    assert record.tool_round_id is not None
    tool_round = await host.store.tool_round(record.tool_round_id)
    assert tool_round is not None
    assert tool_round.error == {"code": -1, "message": "User rejected sampling request"}


async def test_a_2026_server_s_form_uses_the_form_asker(hosts: HostFactory, tmp_path: Path) -> None:
    host, inputs, _server = await setup(hosts, tmp_path, Person(), None)

    async def form(
        _server: ServerDefinition, _method: str, params: dict[str, Any]
    ) -> dict[str, Any] | None:
        assert params["message"] == "Which colour?"
        return {"action": "accept", "content": {"colour": "ochre"}}

    inputs.ask_form = form
    server = mrtr_peer()
    await host.store.add_server(server)
    record = await host.runner.call(server, "paint", {})
    assert record.state is LocalState.COMPLETED
    assert record.tool_round_id is not None
    tool_round = await host.store.tool_round(record.tool_round_id)
    assert tool_round is not None
    assert tool_round.result is not None
    assert tool_round.result["content"][0]["text"] == "painted ochre"
