"""The model providers on the real openai / anthropic SDKs against scripted endpoints.

Every test runs on both wires: what the user sees must not depend on which one a model speaks.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import openai
import pytest

from mooring.adapters.providers import openai_chat
from mooring.adapters.providers.common import ProviderOptions
from mooring.adapters.providers.factory import SdkProviderFactory
from mooring.adapters.secrets import KeyringSecrets
from mooring.core.chat import (
    PROVIDER_SECRET_SCOPE,
    ChatProvider,
    ChatRequest,
    ChatTurnMessage,
    ProviderConfig,
    ProviderError,
    ProviderFailure,
    ProviderKind,
    ReplyDone,
    StopReason,
    TextDelta,
    ToolCallRequest,
    ToolOffer,
    failure_remedy,
)
from mooring.core.conversation import Role
from mooring.core.errors import Remedy
from mooring.core.providers import api_key_name, header_name
from tests.helpers.model_endpoints import (
    Broken,
    HttpError,
    ModelEndpoint,
    Slow,
    StreamError,
    Text,
    ToolCall,
    ToolCalls,
)

pytestmark = pytest.mark.anyio

KEY = "sk-canary-test-4471"
LOOKUP = ToolOffer(
    name="suppliers__lookup",
    description="Find a supplier",
    input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
)


class Sleeps:
    """Records how long a provider asked to wait (no real waiting)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture(params=[ProviderKind.OPENAI, ProviderKind.ANTHROPIC], ids=["openai", "anthropic"])
def kind(request: pytest.FixtureRequest) -> ProviderKind:
    kind: ProviderKind = request.param
    return kind


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def config_for(
    kind: ProviderKind,
    endpoint: ModelEndpoint,
    *,
    headers: tuple[str, ...] = (),
    has_key: bool = True,
    base_url: str | None = None,
) -> ProviderConfig:
    url = endpoint.openai_url if kind is ProviderKind.OPENAI else endpoint.anthropic_url
    return ProviderConfig(
        id="prov1",
        name="scripted",
        kind=kind,
        base_url=base_url or url,
        model="model-small",
        header_names=headers,
        has_api_key=has_key,
    )


@pytest.fixture
async def build(sleeps: Sleeps) -> AsyncIterator[Any]:
    """Build providers through the real factory and keyring adapter; close them after."""
    made: list[ChatProvider] = []

    def make(config: ProviderConfig, headers: dict[str, str] | None = None) -> ChatProvider:
        secrets = KeyringSecrets()
        if config.has_api_key:
            secrets.set(PROVIDER_SECRET_SCOPE, api_key_name(config.id), KEY)
        for name, value in (headers or {}).items():
            secrets.set(PROVIDER_SECRET_SCOPE, header_name(config.id, name), value)
        options = ProviderOptions(sleep=sleeps, read_timeout=20)
        provider = SdkProviderFactory(secrets, options)(config)
        made.append(provider)
        return provider

    yield make
    for provider in made:
        await provider.aclose()


@pytest.fixture
def provider(kind: ProviderKind, model_endpoint: ModelEndpoint, build: Any) -> ChatProvider:
    made: ChatProvider = build(config_for(kind, model_endpoint))
    return made


def ask(text: str = "hello", *, tools: tuple[ToolOffer, ...] = ()) -> ChatRequest:
    return ChatRequest(
        model="model-small",
        messages=(ChatTurnMessage(role=Role.USER, content=text),),
        tools=tools,
        system="You are terse.",
    )


async def collect(provider: ChatProvider, request: ChatRequest) -> tuple[list[str], ReplyDone]:
    deltas: list[str] = []
    done: ReplyDone | None = None
    async with asyncio.timeout(30):
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                deltas.append(event.text)
            else:
                assert done is None, "exactly one ReplyDone"
                done = event
    assert done is not None
    return deltas, done


async def failure(provider: ChatProvider, request: ChatRequest | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await collect(provider, request or ask())
    return caught.value


# -- replies --------------------------------------------------------------------------------


async def test_a_text_reply_streams_in_pieces_and_ends_once(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.script(Text("The supplier list is up to date.", chunk=5))
    deltas, done = await collect(provider, ask())
    assert len(deltas) > 3
    assert "".join(deltas) == done.text == "The supplier list is up to date."
    assert done.stop_reason is StopReason.END
    assert done.tool_calls == ()
    assert done.usage["input_tokens"] == 12


async def test_a_reply_cut_off_by_the_token_limit_says_so(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.script(Text("It was a long", truncated=True))
    _, done = await collect(provider, ask())
    assert done.text == "It was a long"
    assert done.stop_reason is StopReason.MAX_TOKENS


async def test_an_openai_endpoint_that_wants_max_completion_tokens_gets_it_from_then_on(
    model_endpoint: ModelEndpoint, build: Any
) -> None:
    provider = build(config_for(ProviderKind.OPENAI, model_endpoint))
    model_endpoint.script(
        HttpError(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            code="unsupported_parameter",
        ),
        Text("first"),
        Text("second"),
    )
    assert (await collect(provider, ask()))[1].text == "first"
    assert (await collect(provider, ask()))[1].text == "second"
    first, retried, later = (r.body for r in model_endpoint.model_requests)
    assert first["max_tokens"] == 4096
    assert "max_tokens" not in retried
    assert retried["max_completion_tokens"] == 4096
    assert later["max_completion_tokens"] == 4096


async def test_an_openai_request_is_what_the_sdks_create_sends_for_it(
    model_endpoint: ModelEndpoint, build: Any
) -> None:
    """The adapter sends its body through the client's ``post``, skipping ``create``'s
    parameter transform: the endpoint must get what ``create`` would send for it (a richer
    request than a chat's first: tool calls, results, an error flag, a tool offer)."""
    call = ToolCallRequest(
        id="call_9", name="suppliers__lookup", arguments={"q": "x"}, raw_arguments='{"q": "x"}'
    )
    request = ChatRequest(
        model="model-small",
        messages=(
            ChatTurnMessage(role=Role.USER, content="look up x «and» y"),
            ChatTurnMessage(role=Role.ASSISTANT, content="Looking.", tool_calls=(call,)),
            ChatTurnMessage(
                role=Role.TOOL, content="no such supplier", tool_call_id="call_9", is_error=True
            ),
        ),
        tools=(LOOKUP,),
        system="You are terse.",
    )
    model_endpoint.script(Text("Done."), Text("Done."))
    await collect(build(config_for(ProviderKind.OPENAI, model_endpoint)), request)
    client = openai.AsyncOpenAI(api_key=KEY, base_url=model_endpoint.openai_url, max_retries=0)
    try:
        stream = await client.chat.completions.create(**openai_chat.request_body(request))
        async for _ in stream:
            pass
    finally:
        await client.close()
    ours, sdks = model_endpoint.model_requests[-2:]
    assert (ours.method, ours.path) == (sdks.method, sdks.path)
    assert ours.body == sdks.body
    assert ours.body["messages"][3]["content"].startswith("ERROR: ")
    same = ("authorization", "content-type", "content-length", "accept", "user-agent")
    assert {h: ours.headers.get(h) for h in same} == {h: sdks.headers.get(h) for h in same}


async def test_the_model_is_sent_the_system_prompt_messages_and_key(
    provider: ChatProvider, model_endpoint: ModelEndpoint, kind: ProviderKind
) -> None:
    model_endpoint.script(Text("ok"))
    await collect(provider, ask("what is new?"))
    sent = model_endpoint.last
    assert sent.body["stream"] is True
    assert sent.body["model"] == "model-small"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    if kind is ProviderKind.OPENAI:
        assert sent.body["messages"] == [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "what is new?"},
        ]
    else:
        assert sent.body["system"] == "You are terse."
        assert sent.body["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": "what is new?"}]}
        ]


async def test_one_tool_call_arrives_with_parsed_arguments_and_the_offer_was_sent(
    provider: ChatProvider, model_endpoint: ModelEndpoint, kind: ProviderKind
) -> None:
    model_endpoint.script(
        ToolCalls([ToolCall("suppliers__lookup", {"q": "Canary GmbH"}, id="call_1")], text="Hm.")
    )
    deltas, done = await collect(provider, ask(tools=(LOOKUP,)))
    assert "".join(deltas) == "Hm."
    assert done.stop_reason is StopReason.TOOL_CALLS
    (call,) = done.tool_calls
    assert call.id == "call_1"
    assert call.name == "suppliers__lookup"
    assert call.arguments == {"q": "Canary GmbH"}
    assert json.loads(call.raw_arguments) == {"q": "Canary GmbH"}
    assert call.arguments_error == ""
    tools = model_endpoint.last.body["tools"]
    if kind is ProviderKind.OPENAI:
        assert tools == [
            {
                "type": "function",
                "function": {
                    "name": LOOKUP.name,
                    "description": LOOKUP.description,
                    "parameters": dict(LOOKUP.input_schema),
                },
            }
        ]
    else:
        assert tools == [
            {
                "name": LOOKUP.name,
                "description": LOOKUP.description,
                "input_schema": dict(LOOKUP.input_schema),
            }
        ]


async def test_several_tool_calls_with_finely_fragmented_arguments_are_assembled_in_order(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    big = {"path": "/data/suppliers.csv", "options": {"dry_run": True, "limit": 250}}
    model_endpoint.script(
        ToolCalls(
            [
                ToolCall("a_first", big, id="c1", fragments=40),
                ToolCall("b_second", {"n": 2}, id="c2", fragments=5),
                ToolCall("c_third", {}, id="c3", fragments=1),
            ]
        )
    )
    _, done = await collect(provider, ask(tools=(LOOKUP,)))
    assert [(c.id, c.name, c.arguments) for c in done.tool_calls] == [
        ("c1", "a_first", big),
        ("c2", "b_second", {"n": 2}),
        ("c3", "c_third", {}),
    ]


@pytest.mark.parametrize(
    ("raw", "why"),
    [('{"q": "unterminated', "not valid JSON"), ("[1, 2]", "not a JSON object")],
)
async def test_malformed_arguments_are_kept_raw_and_explained_not_guessed(
    provider: ChatProvider, model_endpoint: ModelEndpoint, raw: str, why: str
) -> None:
    model_endpoint.script(ToolCalls([ToolCall("suppliers__lookup", raw, id="bad")]))
    _, done = await collect(provider, ask(tools=(LOOKUP,)))
    (call,) = done.tool_calls
    assert call.arguments == {}
    assert call.raw_arguments == raw
    assert why in call.arguments_error


async def test_tool_results_go_back_in_each_wires_shape_with_the_error_flag(
    provider: ChatProvider, model_endpoint: ModelEndpoint, kind: ProviderKind
) -> None:
    model_endpoint.script(Text("Done."))
    call = ToolCallRequest(
        id="call_9", name="suppliers__lookup", arguments={"q": "x"}, raw_arguments='{"q": "x"}'
    )
    refused = ToolCallRequest(id="call_10", name="suppliers__lookup", arguments={"q": "y"})
    request = ChatRequest(
        model="model-small",
        messages=(
            ChatTurnMessage(role=Role.USER, content="look up x and y"),
            ChatTurnMessage(role=Role.ASSISTANT, content="", tool_calls=(call, refused)),
            ChatTurnMessage(role=Role.TOOL, content="found x", tool_call_id="call_9"),
            ChatTurnMessage(
                role=Role.TOOL, content="denied by the user", tool_call_id="call_10", is_error=True
            ),
        ),
        tools=(LOOKUP,),
    )
    await collect(provider, request)
    messages = model_endpoint.last.body["messages"]
    if kind is ProviderKind.OPENAI:
        assert messages[1]["tool_calls"][0] == {
            "id": "call_9",
            "type": "function",
            "function": {"name": "suppliers__lookup", "arguments": '{"q": "x"}'},
        }
        assert messages[2] == {"role": "tool", "tool_call_id": "call_9", "content": "found x"}
        assert messages[3]["tool_call_id"] == "call_10"
        assert messages[3]["content"].startswith("ERROR: ")
    else:
        assert [m["role"] for m in messages] == ["user", "assistant", "user"]
        assert messages[1]["content"] == [
            {"type": "tool_use", "id": "call_9", "name": "suppliers__lookup", "input": {"q": "x"}},
            {"type": "tool_use", "id": "call_10", "name": "suppliers__lookup", "input": {"q": "y"}},
        ]
        assert messages[2]["content"] == [
            {
                "type": "tool_result",
                "tool_use_id": "call_9",
                "content": "found x",
                "is_error": False,
            },
            {
                "type": "tool_result",
                "tool_use_id": "call_10",
                "content": "denied by the user",
                "is_error": True,
            },
        ]


async def test_custom_headers_arrive_with_their_keyring_values(
    kind: ProviderKind, model_endpoint: ModelEndpoint, build: Any
) -> None:
    config = config_for(kind, model_endpoint, headers=("X-Team", "HTTP-Referer"))
    provider = build(config, {"X-Team": "team-secret-77", "HTTP-Referer": "https://mooring.app"})
    model_endpoint.script(Text("ok"))
    try:
        await collect(provider, ask())
        assert await provider.list_models() == ["model-small", "model-large"]
    finally:
        await provider.aclose()
    for sent in model_endpoint.requests:
        assert sent.headers["x-team"] == "team-secret-77"
        assert sent.headers["http-referer"] == "https://mooring.app"


async def test_the_model_list_comes_from_the_endpoint(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    assert await provider.list_models() == ["model-small", "model-large"]
    model_endpoint.models = None  # an endpoint without a model list
    assert await provider.list_models() == []


# -- failures -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refused_key_is_an_auth_failure(
    provider: ChatProvider, model_endpoint: ModelEndpoint, status: int
) -> None:
    model_endpoint.script(HttpError(status, "Incorrect API key provided: sk-canary-test-4471"))
    error = await failure(provider)
    assert error.kind is ProviderFailure.AUTH
    assert error.status == status
    assert "API key" in error.message
    assert KEY not in error.message  # the endpoint echoed the key; the message does not


async def test_a_refused_key_on_the_model_list_is_an_auth_failure(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.models = None
    # /v1/models answers 404 when there is no list; a 401 comes through the chat request
    model_endpoint.script(HttpError(401, "bad key"))
    assert (await failure(provider)).kind is ProviderFailure.AUTH


async def test_a_closed_port_is_unreachable(kind: ProviderKind, build: Any) -> None:
    with ModelEndpoint.running() as gone:
        config = config_for(kind, gone)
    provider = build(config)  # the endpoint has stopped: nothing listens on its port
    try:
        error = await failure(provider)
        assert error.kind is ProviderFailure.UNREACHABLE
        assert "refused" in error.message
        with pytest.raises(ProviderError) as listing:
            await provider.list_models()
        assert listing.value.kind is ProviderFailure.UNREACHABLE
    finally:
        await provider.aclose()


async def test_an_unknown_host_is_unreachable(
    kind: ProviderKind, model_endpoint: ModelEndpoint, build: Any
) -> None:
    config = config_for(kind, model_endpoint, base_url="http://no-such-host.invalid/v1")
    provider = build(config)
    try:
        error = await failure(provider)
    finally:
        await provider.aclose()
    assert error.kind is ProviderFailure.UNREACHABLE
    assert "no-such-host.invalid" in error.message


async def test_a_stream_that_goes_silent_is_broken_after_the_read_timeout(
    kind: ProviderKind, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.script(Slow("Thinking"))  # some text, then nothing
    config = config_for(kind, model_endpoint)
    provider = SdkProviderFactory(KeyringSecrets(), ProviderOptions(read_timeout=0.3))(config)
    try:
        error = await failure(provider)
    finally:
        await provider.aclose()
    assert error.kind is ProviderFailure.STREAM_BROKEN
    assert error.partial_text == "Thinking"
    assert "nothing arrived" in error.message


async def test_a_429_with_retry_after_is_waited_out_once(
    provider: ChatProvider, model_endpoint: ModelEndpoint, sleeps: Sleeps
) -> None:
    model_endpoint.script(
        HttpError(429, "Rate limit reached", headers={"retry-after": "7"}), Text("second try")
    )
    _, done = await collect(provider, ask())
    assert done.text == "second try"
    assert sleeps.waits == [7.0]
    assert len(model_endpoint.model_requests) == 2


async def test_a_second_429_is_reported_with_its_retry_after(
    provider: ChatProvider, model_endpoint: ModelEndpoint, sleeps: Sleeps
) -> None:
    model_endpoint.script(
        HttpError(429, "slow down", headers={"retry-after": "3"}),
        HttpError(429, "slow down", headers={"retry-after": "11"}),
        Text("never sent"),
    )
    error = await failure(provider)
    assert error.kind is ProviderFailure.RATE_LIMITED
    assert error.retry_after == 11.0
    assert "11 s" in error.message
    assert sleeps.waits == [3.0]
    assert len(model_endpoint.model_requests) == 2
    assert model_endpoint.pending == 1


async def test_a_429_without_retry_after_is_reported_at_once(
    provider: ChatProvider, model_endpoint: ModelEndpoint, sleeps: Sleeps
) -> None:
    model_endpoint.script(HttpError(429, "Too many requests"), Text("never sent"))
    error = await failure(provider)
    assert error.kind is ProviderFailure.RATE_LIMITED
    assert error.retry_after is None
    assert sleeps.waits == []
    assert len(model_endpoint.model_requests) == 1


async def test_a_429_asking_for_a_long_wait_is_reported_at_once(
    provider: ChatProvider, model_endpoint: ModelEndpoint, sleeps: Sleeps
) -> None:
    model_endpoint.script(HttpError(429, "later", headers={"retry-after": "3600"}))
    error = await failure(provider)
    assert error.kind is ProviderFailure.RATE_LIMITED
    assert error.retry_after == 3600.0
    assert sleeps.waits == []


@pytest.mark.parametrize(
    "reply",
    [
        # Ollama
        HttpError(400, "registry.ollama.ai/library/gemma:2b does not support tools"),
        # OpenAI-style
        HttpError(400, "tools is not supported in this model", code="unsupported_parameter"),
        # llama.cpp without --jinja
        HttpError(500, "tools param requires --jinja flag"),
    ],
    ids=["ollama", "openai", "llama.cpp"],
)
async def test_a_model_without_tool_support_says_so(
    provider: ChatProvider, model_endpoint: ModelEndpoint, reply: HttpError
) -> None:
    model_endpoint.script(reply)
    error = await failure(provider, ask(tools=(LOOKUP,)))
    assert error.kind is ProviderFailure.NO_TOOL_SUPPORT
    assert "cannot call tools" in error.message


@pytest.mark.parametrize(
    "reply",
    [
        HttpError(
            400,
            "This model's maximum context length is 8192 tokens.",
            code="context_length_exceeded",
        ),
        HttpError(400, "prompt is too long: 208000 tokens > 200000 maximum"),
    ],
    ids=["openai", "anthropic"],
)
async def test_a_context_too_long_says_so(
    provider: ChatProvider, model_endpoint: ModelEndpoint, reply: HttpError
) -> None:
    model_endpoint.script(reply)
    error = await failure(provider)
    assert error.kind is ProviderFailure.CONTEXT_TOO_LONG
    assert "too long" in error.message


@pytest.mark.parametrize(
    "reply",
    [
        HttpError(404, 'model "model-small" not found, try pulling it first'),  # Ollama
        HttpError(404, "The model `model-small` does not exist", code="model_not_found"),
        HttpError(400, "model 'model-small' not found"),  # some compatible servers
    ],
    ids=["ollama", "openai", "400"],
)
async def test_an_unknown_model_is_model_not_found(
    provider: ChatProvider, model_endpoint: ModelEndpoint, reply: HttpError
) -> None:
    model_endpoint.script(reply)
    error = await failure(provider)
    assert error.kind is ProviderFailure.MODEL_NOT_FOUND
    assert "model-small" in error.message


async def test_a_server_error_is_classified_with_a_cleaned_detail(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.script(HttpError(500, "boom\x1b[31m\n" + "x" * 1000))
    error = await failure(provider)
    assert error.kind is ProviderFailure.SERVER_ERROR
    assert "\x1b" not in error.message
    assert "\n" not in error.message
    assert len(error.message) < 400


async def test_a_stream_broken_halfway_keeps_the_partial_text(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.script(Broken("Importing the first forty suppl"))
    error = await failure(provider)
    assert error.kind is ProviderFailure.STREAM_BROKEN
    assert error.partial_text == "Importing the first forty suppl"
    assert "halfway" in error.message


async def test_a_stream_that_ends_without_its_finish_is_broken_not_complete(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.script(Broken("Half a", clean=True))
    error = await failure(provider)
    assert error.kind is ProviderFailure.STREAM_BROKEN
    assert error.partial_text == "Half a"


async def test_an_error_event_mid_stream_is_broken_with_the_partial_text(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.script(StreamError("Partly th"))
    error = await failure(provider)
    assert error.kind is ProviderFailure.STREAM_BROKEN
    assert error.partial_text == "Partly th"


async def test_an_error_event_before_any_text_is_classified_by_its_type(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.script(StreamError(""))
    error = await failure(provider)
    assert error.kind is ProviderFailure.SERVER_ERROR


async def test_no_key_configured_says_so_and_leaves_the_remedy_to_each_face(
    kind: ProviderKind, model_endpoint: ModelEndpoint, build: Any
) -> None:
    provider = build(config_for(kind, model_endpoint, has_key=False))
    model_endpoint.script(HttpError(401, "missing key"))
    try:
        error = await failure(provider)
    finally:
        await provider.aclose()
    assert error.kind is ProviderFailure.AUTH
    assert "No API key is configured" in error.message
    assert "mooring " not in error.message  # a command line is the CLI's to say, not the window's
    assert failure_remedy(error.kind) is Remedy.PROVIDER_KEY


async def test_a_key_named_by_an_environment_variable_is_read_at_each_use(
    model_endpoint: ModelEndpoint, build: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_endpoint.api_key = KEY
    config = replace(
        config_for(ProviderKind.OPENAI, model_endpoint, has_key=False), api_key_env="THE_KEY"
    )
    monkeypatch.setenv("THE_KEY", KEY)
    model_endpoint.script(Text("first"))
    deltas, _done = await collect(build(config), ask())
    assert "".join(deltas) == "first"
    assert model_endpoint.last.headers["authorization"] == f"Bearer {KEY}"

    monkeypatch.delenv("THE_KEY")  # gone: the next client built goes without, and says why
    model_endpoint.script(HttpError(401, "missing key"))
    error = await failure(build(config))
    assert error.kind is ProviderFailure.AUTH
    assert "$THE_KEY, which is not set" in error.message


# -- stop -----------------------------------------------------------------------------------


async def test_stopping_mid_stream_closes_the_connection_and_keeps_what_arrived(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    reply = Slow("Working through the", after=" rest that never comes")
    model_endpoint.script(reply)
    received: list[str] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(ask()):
            if isinstance(event, TextDelta):
                received.append(event.text)
                if "".join(received) == "Working through the":
                    first.set()

    task = asyncio.create_task(consume())
    async with asyncio.timeout(30):
        await first.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The endpoint sees the connection closed while it still holds the stream open.
        closed = await asyncio.to_thread(model_endpoint.disconnected.wait, 20)
    assert closed, "the HTTP stream was not closed on stop"
    assert not reply.gate.is_set()
    assert "".join(received) == "Working through the"


async def test_a_key_echoed_by_the_endpoint_is_masked_in_the_message(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.script(HttpError(400, f"unsupported value in request made with {KEY}"))
    error = await failure(provider)
    assert error.kind is ProviderFailure.BAD_REQUEST
    assert KEY not in error.message
    assert "[redacted]" in error.message


async def test_the_endpoint_requiring_a_key_accepts_the_stored_one(
    provider: ChatProvider, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.api_key = KEY
    model_endpoint.script(Text("fine"))
    _, done = await collect(provider, ask())
    assert done.text == "fine"
    assert await provider.list_models() == ["model-small", "model-large"]
