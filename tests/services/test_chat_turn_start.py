"""A turn's start with the host's own provider book (no scripted lookup): the conversation, its
provider and the user's message in one database trip, and every way that trip can refuse.

The model is the scripted OpenAI-compatible endpoint on 127.0.0.1, asked through the real
``openai`` SDK; the database is a real file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest

from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.clock import SystemClock
from mooring.core.conversation import Role
from mooring.core.errors import KnownError, NotFound
from mooring.core.ids import new_id
from mooring.services.chat import ChatService
from mooring.storage.conversations import SqlConversations
from tests.helpers.model_endpoints import ModelEndpoint, Text
from tests.services.conftest import Host, HostFactory

pytestmark = pytest.mark.anyio


@pytest.fixture
async def opened(
    hosts: HostFactory, model_endpoint: ModelEndpoint
) -> AsyncIterator[tuple[Host, ChatService]]:
    """A host from the composition root whose provider book names the endpoint; its chat's
    SDK clients (and their connections) are closed after the test."""
    host = await hosts()
    assert host.host.providers is not None
    assert host.host.chat is not None
    await host.host.providers.add_provider(
        ProviderConfig(
            id=new_id(),
            name="local",
            kind=ProviderKind.OPENAI,
            base_url=model_endpoint.openai_url,
            model="model-small",
        )
    )
    try:
        yield host, host.host.chat
    finally:
        await host.host.chat.aclose()


async def test_a_message_by_whole_id_or_prefix_reaches_the_model_with_the_stored_provider(
    opened: tuple[Host, ChatService], model_endpoint: ModelEndpoint
) -> None:
    host, chat = opened
    model_endpoint.script(Text("First reply."), Text("Second reply."))
    conversation = await chat.create()

    first = await chat.send(conversation.id, "  How did the import go?  ")
    second = await chat.send(conversation.id[:10], "And the duplicates?")  # a prefix

    assert (first.error, second.error) == (None, None)
    assert [r.body["model"] for r in model_endpoint.model_requests] == ["model-small"] * 2
    last = model_endpoint.model_requests[-1].body["messages"]
    assert [m["content"] for m in last if m["role"] != "system"] == [
        "How did the import go?",
        "First reply.",
        "And the duplicates?",
    ]
    stored = await chat.messages(conversation.id)
    assert [(m.role, m.content) for m in stored] == [
        (Role.USER, "How did the import go?"),
        (Role.ASSISTANT, "First reply."),
        (Role.USER, "And the duplicates?"),
        (Role.ASSISTANT, "Second reply."),
    ]
    # The first message named the conversation, in the same write.
    assert (await chat.get(conversation.id)).title == "How did the import go?"
    assert host.host.chat is chat


async def test_a_conversation_whose_provider_was_removed_stores_nothing_and_says_so(
    opened: tuple[Host, ChatService], model_endpoint: ModelEndpoint
) -> None:
    host, chat = opened
    conversation = await chat.create()
    assert host.host.providers is not None
    assert conversation.provider_id is not None
    await host.host.providers.remove_provider(conversation.provider_id)

    with pytest.raises(KnownError, match="No model provider called"):
        await chat.send(conversation.id, "Hello?")

    assert await chat.messages(conversation.id) == []
    assert model_endpoint.model_requests == []


async def test_a_conversation_with_no_provider_of_its_own_follows_the_default(
    opened: tuple[Host, ChatService], model_endpoint: ModelEndpoint
) -> None:
    host, chat = opened
    database = host.db
    conversation = await chat.create()
    # Stored before per-conversation providers: it names none, so the default answers.
    book = SqlConversations(database, SystemClock())
    assert await book.update_conversation(dataclasses.replace(conversation, provider_id=None))
    model_endpoint.script(Text("From the default."))

    result = await chat.send(conversation.id, "Who answers?")

    assert result.error is None
    assert result.reply == "From the default."


async def test_an_unknown_or_deleted_conversation_is_not_found_and_nothing_is_sent(
    opened: tuple[Host, ChatService], model_endpoint: ModelEndpoint
) -> None:
    _host, chat = opened
    conversation = await chat.create()
    await chat.delete(conversation.id)

    with pytest.raises(NotFound):
        await chat.send(conversation.id, "Anyone?")
    with pytest.raises(NotFound):
        await chat.send("no-such-conversation", "Anyone?")
    assert model_endpoint.model_requests == []
