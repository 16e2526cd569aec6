"""The chat engine on the real provider SDKs: a host built by the composition root, its provider
book naming a scripted OpenAI / Anthropic endpoint on 127.0.0.1 (no scripted model in between)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from mooring.bootstrap import build_host
from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.conversation import MessageStatus, Role
from mooring.core.events import Event, ReplyDidStream
from mooring.core.ids import new_id
from mooring.services.host import Host
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from tests.helpers.model_endpoints import ModelEndpoint, Slow

pytestmark = pytest.mark.anyio


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    root = tmp_path / "data"
    paths = Paths(data_dir=root, config_dir=root / "config", log_dir=tmp_path / "logs")
    db = Database.open(root / "mooring.sqlite3")
    host = build_host(paths, Settings({"demo_server.enabled": False}), db)  # the real factory
    try:
        yield host
    finally:
        with anyio.fail_after(30):
            await host.stop()
        db.close()


@pytest.mark.parametrize("kind", [ProviderKind.OPENAI, ProviderKind.ANTHROPIC])
async def test_stopping_mid_stream_closes_the_sdk_stream_and_keeps_the_partial_text(
    host: Host, model_endpoint: ModelEndpoint, kind: ProviderKind
) -> None:
    assert host.providers is not None
    url = model_endpoint.openai_url if kind is ProviderKind.OPENAI else model_endpoint.anthropic_url
    await host.providers.add_provider(
        ProviderConfig(
            id=new_id(),
            name="scripted",
            kind=kind,
            base_url=url,
            model="model-small",
        )
    )
    held = Slow("The import has saved 40 suppliers so", after=" far, and then some.")
    model_endpoint.script(held)
    chat = host.chat
    assert chat is not None
    conversation = await chat.create()

    streamed: list[str] = []
    all_before = asyncio.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, ReplyDidStream) and event.conversation_id == conversation.id:
            streamed.append(event.delta)
            if "".join(streamed) == held.before:
                all_before.set()

    host.events.subscribe(on_event)
    with anyio.fail_after(30):
        turn = asyncio.create_task(chat.send(conversation.id, "How far is the import?"))
        await all_before.wait()  # the endpoint now holds the stream open
        assert await chat.stop(conversation.id)
        result = await turn
        # The SDK's HTTP stream was closed: the endpoint saw its client go away.
        await asyncio.to_thread(model_endpoint.disconnected.wait, 20)
    assert model_endpoint.disconnected.is_set()
    assert not held.gate.is_set()

    assert result.interrupted
    assert result.error is None
    assert result.reply == held.before
    messages = await chat.messages(conversation.id)
    assert [(m.role, m.content, m.status) for m in messages] == [
        (Role.USER, "How far is the import?", MessageStatus.COMPLETE),
        (Role.ASSISTANT, held.before, MessageStatus.INTERRUPTED),
    ]
