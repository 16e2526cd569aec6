"""Branching a conversation from a message: the shown messages up to it copied into a new
conversation (hidden versions left behind), the original untouched, and copied tool rounds kept
as history that never runs again. The host's own services on a real SQLite file, the real demo
server as a subprocess; only the model is scripted."""

from __future__ import annotations

import pytest

from mooring.core.conversation import Role
from mooring.core.errors import KnownError
from mooring.core.events import MessageDidAppend
from tests.services.test_chat import CLEAN, Chat, Expect, roles
from tests.services.test_chat import chat as chat

pytestmark = pytest.mark.anyio


async def test_a_branch_copies_the_shown_messages_up_to_the_chosen_one_and_runs_nothing_again(
    chat: Chat,
) -> None:
    chat.model.call("demo__list_sample_files", {}).reply("There are three sample files.")
    chat.model.reply("Bonjour.").reply("Hello.").reply("Anything else?")
    conversation = await chat.service.create(model="scripted-model")
    await chat.service.configure(conversation.id, system_prompt="Answer in English.")
    await chat.service.send(conversation.id, "Which sample files are there?")
    thanks = await chat.service.send(conversation.id, "Thanks")
    again = await chat.service.regenerate(conversation.id, thanks.reply_message_id or "")
    await chat.service.send(conversation.id, "Bye")
    original = await chat.service.messages(conversation.id)
    versions = await chat.service.versions(conversation.id)
    records = [v.id for v in await chat.host.host.tasks()]
    assert chat.requests_to(chat.demo, "list_sample_files") == 1

    branches = chat.host.host.branches
    assert branches is not None
    branch = await branches.branch(conversation.id[:8], again.reply_message_id or "")

    assert branch.id != conversation.id
    assert branch.title == "Which sample files are there? (branch)"
    assert (branch.provider_id, branch.model, branch.system_prompt) == (
        "scripted",
        "scripted-model",
        "Answer in English.",
    )
    copied = await chat.service.messages(branch.id)
    # A note of where it came from, then the shown messages up to the chosen reply: the
    # hidden first reply ("Bonjour.") and what followed the chosen one are not copied.
    assert roles(copied) == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert [m.content for m in copied[1:]] == [m.content for m in original[:6]]
    assert "Bonjour." not in [m.content for m in copied]
    assert conversation.id in copied[0].content
    assert (again.reply_message_id or "") in copied[0].content
    assert not {m.id for m in copied} & {m.id for m in original}
    assert {m.conversation_id for m in copied} == {branch.id}
    # The tool round is the same round, shown as history: no round or task record is copied.
    assert copied[3].tool_round_id == original[2].tool_round_id
    [item] = await chat.service.rounds(branch.id)
    assert item.round.id == original[2].tool_round_id
    assert item.round.conversation_id == conversation.id
    assert [v.id for v in await chat.host.host.tasks()] == records

    # The original is untouched.
    assert await chat.service.messages(conversation.id) == original
    assert await chat.service.versions(conversation.id) == versions
    assert await chat.service.versions(branch.id) == []

    # The branch goes on from the copy: the model is given the copied history (the tool call
    # answered by its recorded result, not the note), and the tool does not run again.
    chat.model.reply("Branch reply.")
    result = await chat.service.send(branch.id, "Go on here")
    assert result.reply == "Branch reply."
    request = chat.model.requests[-1]
    assert [(m.role, m.content) for m in request.messages] == [
        (m.role, m.content) for m in original[:6]
    ] + [(Role.USER, "Go on here")]
    assert request.messages[2].tool_call_id == original[1].tool_calls[0].id
    assert chat.requests_to(chat.demo, "list_sample_files") == 1
    assert [v.id for v in await chat.host.host.tasks()] == records
    assert await chat.service.messages(conversation.id) == original


async def test_a_branch_of_a_started_task_leaves_its_result_to_the_original(chat: Chat) -> None:
    chat.model.call("demo__import_suppliers", {"path": CLEAN}).reply("Started.")
    conversation = await chat.service.create(auto_continue=True)
    ended = Expect(
        chat.host.events, lambda e: isinstance(e, MessageDidAppend) and e.message.followup
    )
    result = await chat.service.send(conversation.id, "Import the clean suppliers")
    [started] = [m for m in await chat.service.messages(conversation.id) if m.awaits_task]
    branches = chat.host.host.branches
    assert branches is not None
    branch = await branches.branch(conversation.id, started.id)
    assert branch.auto_continue
    [copy] = [m for m in await chat.service.messages(branch.id) if m.role is Role.TOOL]
    assert copy.tool_round_id == started.tool_round_id
    assert not copy.awaits_task  # the branch waits for no result: it goes to the original

    chat.model.reply("The import finished.")
    event = await ended.wait()
    assert isinstance(event, MessageDidAppend)
    assert event.conversation_id == conversation.id
    await chat.service.idle()
    assert await chat.service.catch_up(branch.id) == []
    assert roles(await chat.service.messages(branch.id)) == ["system", "user", "assistant", "tool"]
    assert len(result.started_tasks) == 1
    assert chat.requests_to(chat.demo, "import_suppliers") == 1


async def test_a_branch_needs_a_shown_message_of_that_conversation(chat: Chat) -> None:
    chat.model.reply("Bonjour.").reply("Hello.")
    conversation = await chat.service.create()
    first = await chat.service.send(conversation.id, "Greet me")
    await chat.service.regenerate(conversation.id, first.reply_message_id or "")
    branches = chat.host.host.branches
    assert branches is not None
    with pytest.raises(KnownError, match="not shown"):
        await branches.branch(conversation.id, first.reply_message_id or "")  # now hidden
    with pytest.raises(KnownError, match="No conversation"):
        await branches.branch("no-such-conversation", first.reply_message_id or "")
    assert len(await chat.service.list_conversations()) == 1
