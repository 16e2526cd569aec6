"""A local provider runs the real model (SmolLM2-135M) in a child process on 127.0.0.1: started on
first use, spoken to with the OpenAI adapter and a key made for that start, stopped when idle or
when the runtime closes; stopping a reply mid-way leaves it ready for the next."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path

import anyio
import httpx2
import pytest

from mooring.adapters.providers.factory import SdkProviderFactory
from mooring.adapters.providers.local import LocalChatProvider, LocalEndpoint, LocalModelRuntime
from mooring.bootstrap import build_host
from mooring.core.chat import (
    ChatRequest,
    ChatTurnMessage,
    ProviderConfig,
    ProviderKind,
    ReplyDone,
    ReplyEvent,
    StopReason,
    TextDelta,
)
from mooring.core.conversation import MessageStatus, Role
from mooring.core.events import Event, ReplyDidStream
from mooring.core.providers import ProviderDraft, local_model_name, local_model_url
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from tests.helpers.local_model import smol_model

pytestmark = [pytest.mark.anyio, pytest.mark.local_model]


def config(model: Path) -> ProviderConfig:
    url = local_model_url(str(model))
    return ProviderConfig(
        id="local-1",
        name="smol",
        kind=ProviderKind.LOCAL,
        base_url=url,
        model=local_model_name(url),
    )


def ask(text: str, max_tokens: int) -> ChatRequest:
    return ChatRequest(
        model="SmolLM2",
        messages=(ChatTurnMessage(role=Role.USER, content=text),),
        max_tokens=max_tokens,
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[LocalModelRuntime]:
    made = LocalModelRuntime(idle_stop_s=3600, context_tokens=1024, log_file=tmp_path / "llm.log")
    try:
        yield made
    finally:
        with anyio.fail_after(30):
            await made.aclose()


async def test_a_reply_streams_from_the_model_process_which_ends_after_the_idle_time(
    runtime: LocalModelRuntime,
) -> None:
    model = smol_model()
    provider = LocalChatProvider(config(model), runtime)
    runtime.idle_stop_s = 0.2
    events: list[ReplyEvent] = []
    running: list[LocalEndpoint | None] = []
    with anyio.fail_after(120):
        async with aclosing(provider.stream(ask("Say hello.", max_tokens=6))) as stream:
            async for event in stream:
                events.append(event)
                running.append(runtime.endpoint(model))
        endpoint = running[0]
        assert endpoint is not None
        pid = endpoint.pid
        done = events[-1]
        assert isinstance(done, ReplyDone)
        assert done.stop_reason in (StopReason.MAX_TOKENS, StopReason.END)
        assert done.text
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == done.text
        assert endpoint.base_url.startswith("http://127.0.0.1:")
        # Only Mooring, which holds the key made for this start, may use it.
        async with httpx2.AsyncClient() as client:
            refused = await client.get(f"{endpoint.base_url}/models")
            allowed = await client.get(
                f"{endpoint.base_url}/models",
                headers={"Authorization": f"Bearer {endpoint.api_key}"},
            )
        assert (refused.status_code, allowed.status_code) == (401, 200)
        await runtime.wait_stopped(model)  # nothing asked for it: it stops by itself
    assert runtime.endpoint(model) is None
    assert not alive(pid)
    assert runtime.starts == 1
    await provider.aclose()


async def test_stopping_a_reply_midway_leaves_the_process_ready_for_the_next(
    runtime: LocalModelRuntime,
) -> None:
    model = smol_model()
    provider = LocalChatProvider(config(model), runtime)
    with anyio.fail_after(120):
        async with aclosing(provider.stream(ask("Count to one hundred.", 400))) as stream:
            async for event in stream:
                assert isinstance(event, TextDelta)
                break  # the person pressed stop: the generator is closed, the HTTP stream too
        events = [e async for e in provider.stream(ask("Say hi.", max_tokens=4))]
    assert isinstance(events[-1], ReplyDone)
    assert runtime.starts == 1  # the same process answered both
    endpoint = runtime.endpoint(model)
    assert endpoint is not None
    with anyio.fail_after(30):
        await runtime.aclose()
    assert not alive(endpoint.pid)
    await provider.aclose()


async def test_a_conversation_with_a_local_provider_streams_stops_and_its_process_ends_with_mooring(
    tmp_path: Path,
) -> None:
    root = tmp_path / "data"
    paths = Paths(data_dir=root, config_dir=root / "config", log_dir=tmp_path / "logs")
    db = Database.open(root / "mooring.sqlite3")
    host = build_host(paths, Settings({"demo_server.enabled": False}), db)  # the real factory
    try:
        assert host.provider_desk is not None
        assert host.chat is not None
        added = await host.provider_desk.add(
            ProviderDraft(
                name="smol", kind=ProviderKind.LOCAL, model="", base_url=str(smol_model())
            )
        )
        assert added.became_default
        chat = host.chat
        conversation = await chat.create()
        streamed: list[str] = []
        first = asyncio.Event()

        def on_event(event: Event) -> None:
            if isinstance(event, ReplyDidStream) and event.conversation_id == conversation.id:
                streamed.append(event.delta)
                first.set()

        host.events.subscribe(on_event)
        with anyio.fail_after(120):
            turn = asyncio.create_task(chat.send(conversation.id, "Count from 1 to 200."))
            await first.wait()
            assert await chat.stop(conversation.id)  # the person pressed stop
            result = await turn
        assert result.interrupted
        [_, reply] = await chat.messages(conversation.id)
        assert reply.status is MessageStatus.INTERRUPTED
        assert reply.content.startswith(streamed[0])
        factory = host.provider_factory
        assert isinstance(factory, SdkProviderFactory)
        endpoint = factory.local.endpoint(smol_model())
        assert endpoint is not None  # kept running for the next message (until idle)
    finally:
        with anyio.fail_after(30):
            await host.stop()
        db.close()
    assert not alive(endpoint.pid)  # and ended with the host
