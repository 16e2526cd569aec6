"""Editing a message and regenerating a reply: every version kept, stepped through, and a
regenerated turn asks again before a tool runs. The chat service against the real demo server
as a subprocess and a real SQLite file; only the model is scripted."""

from __future__ import annotations

import pytest

from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome
from mooring.core.approval.rules import Scope
from mooring.core.conversation import Role
from mooring.core.errors import KnownError
from mooring.core.events import VersionsDidChange
from tests.services.test_chat import Chat, roles
from tests.services.test_chat import chat as chat

pytestmark = pytest.mark.anyio


async def shown(chat: Chat, conversation_id: str) -> list[tuple[str, str]]:
    return [(m.role.value, m.content) for m in await chat.service.messages(conversation_id)]


async def test_a_regenerated_reply_is_a_new_version_and_the_old_one_stays_reachable(
    chat: Chat,
) -> None:
    chat.model.reply("Bonjour.").reply("Hello.").reply("Hi!").reply("Second question's answer.")
    conversation = await chat.service.create()
    first = await chat.service.send(conversation.id, "Greet me")
    assert first.reply_message_id is not None

    again = await chat.service.regenerate(conversation.id, first.reply_message_id)
    assert again.reply == "Hello."
    assert await shown(chat, conversation.id) == [("user", "Greet me"), ("assistant", "Hello.")]
    # The model was asked the same conversation again, without the old reply.
    assert [m.content for m in chat.model.requests[-1].messages] == ["Greet me"]
    assert any(isinstance(e, VersionsDidChange) for e in chat.seen)
    [point] = await chat.service.versions(conversation.id)
    assert (point.count, point.shown) == (2, 2)
    assert point.first_message_id == again.reply_message_id

    await chat.service.regenerate(conversation.id, again.reply_message_id or "")
    [point] = await chat.service.versions(conversation.id)
    assert (point.count, point.shown) == (3, 3)

    # Step back to the first version: shown whole; the others are kept.
    assert await chat.service.show_version(conversation.id, point.after_message_id, 1)
    assert await shown(chat, conversation.id) == [("user", "Greet me"), ("assistant", "Bonjour.")]
    [point] = await chat.service.versions(conversation.id)
    assert (point.count, point.shown) == (3, 1)
    assert not await chat.service.show_version(conversation.id, point.after_message_id, 1)

    # The conversation goes on from the version shown; the model sees only that one.
    await chat.service.send(conversation.id, "And now?")
    assert [m.content for m in chat.model.requests[-1].messages] == [
        "Greet me",
        "Bonjour.",
        "And now?",
    ]
    assert await chat.service.show_version(conversation.id, point.after_message_id, 3)
    assert await shown(chat, conversation.id) == [("user", "Greet me"), ("assistant", "Hi!")]
    assert await chat.service.show_version(conversation.id, point.after_message_id, 1)
    assert await shown(chat, conversation.id) == [
        ("user", "Greet me"),
        ("assistant", "Bonjour."),
        ("user", "And now?"),
        ("assistant", "Second question's answer."),
    ]
    with pytest.raises(KnownError, match="no such version"):
        await chat.service.show_version(conversation.id, point.after_message_id, 4)


async def test_an_edited_message_keeps_the_original_and_what_followed_as_a_version(
    chat: Chat,
) -> None:
    chat.model.reply("12 suppliers.").reply("Fine.").reply("3 files.")
    conversation = await chat.service.create()
    await chat.service.send(conversation.id, "How many suppliers?")
    await chat.service.send(conversation.id, "Thanks")
    first_user = (await chat.service.messages(conversation.id))[0]

    result = await chat.service.edit(conversation.id, first_user.id, "How many files?")
    assert result.reply == "3 files."
    assert await shown(chat, conversation.id) == [
        ("user", "How many files?"),
        ("assistant", "3 files."),
    ]
    assert [m.content for m in chat.model.requests[-1].messages] == ["How many files?"]
    [point] = await chat.service.versions(conversation.id)
    assert point.after_message_id is None  # the conversation's very start
    assert (point.count, point.shown) == (2, 2)
    await chat.service.show_version(conversation.id, None, 1)
    assert roles(await chat.service.messages(conversation.id)) == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]

    reply = (await chat.service.messages(conversation.id))[1]
    assert reply.role is Role.ASSISTANT
    with pytest.raises(KnownError, match="Only a message of yours"):
        await chat.service.edit(conversation.id, reply.id, "not mine to edit")
    with pytest.raises(KnownError, match="empty"):
        await chat.service.edit(conversation.id, first_user.id, "   ")


async def test_a_regenerated_turn_asks_again_before_a_tool_runs(chat: Chat) -> None:
    # The user allowed the tool for this conversation: the first turn's second call runs
    # without asking. A regenerated turn asks again before the same call is sent.
    chat.host.answers.append(ApprovalAnswer(ApprovalOutcome.APPROVED, remember=Scope.CONVERSATION))
    chat.model.call("demo__list_sample_files", {}).reply("Three files.")
    conversation = await chat.service.create()
    first = await chat.service.send(conversation.id, "List the sample files")
    assert len(chat.host.asked) == 1
    chat.model.call("demo__list_sample_files", {}).reply("Still three.")
    await chat.service.send(conversation.id, "And again?")
    assert len(chat.host.asked) == 1  # remembered for this conversation
    assert chat.requests_to(chat.demo, "list_sample_files") == 2

    chat.host.answers.append(ApprovalAnswer(ApprovalOutcome.DENIED))
    chat.model.call("demo__list_sample_files", {}).reply("You declined.")
    await chat.service.regenerate(conversation.id, first.reply_message_id or "")
    assert len(chat.host.asked) == 2  # asked again, and the user said no
    assert chat.requests_to(chat.demo, "list_sample_files") == 2  # nothing more was sent


async def test_search_finds_only_the_version_shown_and_follows_the_one_shown_again(
    chat: Chat,
) -> None:
    chat.model.reply("The pelican ledger holds 12 suppliers.").reply("Twelve suppliers.")
    conversation = await chat.service.create(title="Counting")
    first = await chat.service.send(conversation.id, "How many suppliers?")
    [hit] = await chat.service.search("pelican")
    assert hit.message_id == first.reply_message_id

    await chat.service.regenerate(conversation.id, first.reply_message_id or "")
    # The pelican reply now sits only in a hidden version: opening the conversation would not
    # show it, so the search does not offer it.
    assert await chat.service.search("pelican") == []
    [hit] = await chat.service.search("twelve")
    assert hit.conversation.id == conversation.id
    # Words of the title and of shown messages are still found.
    assert [h.conversation.id for h in await chat.service.search("counting")] == [conversation.id]

    [point] = await chat.service.versions(conversation.id)
    assert await chat.service.show_version(conversation.id, point.after_message_id, 1)
    [hit] = await chat.service.search("pelican")
    assert hit.message_id == first.reply_message_id
    assert "[pelican]" in hit.snippet
    assert await chat.service.search("twelve") == []
