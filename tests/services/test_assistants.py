"""Assistants: saved presets a conversation starts from. The real host (bootstrap's wiring) on
a real SQLite file, the real demo server as a subprocess; only the model is scripted."""

from __future__ import annotations

import sqlite3

import pytest

from mooring.core.assistants import AssistantDraft, AssistantEdit
from mooring.core.conversation import Role
from mooring.core.errors import KnownError, NotFound
from mooring.services.assistants import AssistantDesk
from tests.helpers.scripted_model import CONFIG as SCRIPTED_CONFIG
from tests.services.test_chat import Chat
from tests.services.test_chat import chat as chat  # the chat fixture

pytestmark = pytest.mark.anyio


def _desk(chat: Chat) -> AssistantDesk:
    desk = chat.host.host.assistants
    assert desk is not None
    return desk


def _row(chat: Chat, sql: str, *params: object) -> tuple[object, ...] | None:
    """A row as the database file holds it now (another connection, read-only)."""
    conn = sqlite3.connect(f"file:{chat.host.db.path}?mode=ro", uri=True)
    try:
        found: tuple[object, ...] | None = conn.execute(sql, params).fetchone()
        return found
    finally:
        conn.close()


async def test_a_conversation_from_an_assistant_sends_its_prompt_and_offers_only_its_tools(
    chat: Chat,
) -> None:
    other = await chat.add_server("other")
    desk = _desk(chat)
    await desk.add(
        AssistantDraft(
            name="Sample reader",
            system_prompt="Answer like a librarian.",
            tools=("demo:list_sample_files",),
        )
    )
    # The model names a tool the assistant does not offer: it is unknown, never run.
    chat.model.call("demo__import_suppliers", {"path": "x.csv"}).reply("I cannot import.")
    conversation = await desk.start("sample reader")
    assert conversation.system_prompt == "Answer like a librarian."
    assert conversation.provider_id == SCRIPTED_CONFIG.id
    result = await chat.service.send(conversation.id, "Import the suppliers")

    assert result.reply == "I cannot import."
    first = chat.model.requests[0]
    assert first.system is not None
    assert first.system.endswith("Answer like a librarian.")
    assert {t.name for t in first.tools} == {"demo__list_sample_files"}
    stored = await chat.service.messages(conversation.id)
    [told] = [m for m in stored if m.role is Role.TOOL]
    assert "There is no tool called 'demo__import_suppliers'" in told.content
    assert chat.requests_to(chat.demo, "import_suppliers") == 0
    assert chat.host.asked == []  # nothing was even asked for approval
    assert await chat.service.rounds(conversation.id) == []
    assert chat.requests_to(other, "list_sample_files") == 0
    # Stored with the conversation: a reopened engine offers the same.
    assistant_id, offered = _row(
        chat, "SELECT assistant_id, offered_tools FROM conversations WHERE id = ?", conversation.id
    ) or (None, None)
    assert assistant_id == (await desk.get("Sample reader")).assistant.id
    assert isinstance(offered, str)
    assert "list_sample_files" in offered


async def test_an_assistant_of_whole_servers_offers_every_tool_of_those_servers_only(
    chat: Chat,
) -> None:
    other = await chat.add_server("other")
    desk = _desk(chat)
    view = await desk.add(AssistantDraft(name="Other only", servers=("other",)))
    assert view.servers == ("other",)
    chat.model.reply("Fine.")
    conversation = await desk.start("Other only")
    await chat.service.send(conversation.id, "Hello")

    names = {t.name for t in chat.model.requests[0].tools}
    assert "other__import_suppliers" in names
    assert all(name.startswith("other__") for name in names)
    assert other.alias == "other"


async def test_editing_an_assistant_leaves_conversations_already_started_as_they_were(
    chat: Chat,
) -> None:
    desk = _desk(chat)
    await desk.add(AssistantDraft(name="Terse", system_prompt="Be terse.", servers=("demo",)))
    before = await desk.start("Terse", title="Before the edit")
    changed = await desk.edit(
        "Terse", AssistantEdit(name="Verbose", system_prompt="Be verbose.", all_tools=True)
    )
    assert changed.offers_everything
    after = await desk.start("Verbose")

    kept = await chat.service.get(before.id)
    assert (kept.system_prompt, kept.assistant_id) == ("Be terse.", changed.assistant.id)
    assert kept.offering is not None
    assert kept.offering.servers == {chat.demo.id}
    assert (after.system_prompt, after.offering) == ("Be verbose.", None)

    removed = await desk.remove("verbose")
    assert removed.name == "Verbose"
    for conversation in (before, after):
        row = _row(
            chat,
            "SELECT assistant_id, system_prompt FROM conversations WHERE id = ?",
            conversation.id,
        )
        assert row is not None
        assert row[0] is None  # the link goes, the settings stay
    assert _row(chat, "SELECT system_prompt FROM conversations WHERE id = ?", before.id) == (
        "Be terse.",
    )
    assert await desk.assistants() == []


async def test_an_assistant_without_a_prompt_leaves_the_default_of_settings(chat: Chat) -> None:
    desk = _desk(chat)
    await desk.add(AssistantDraft(name="Tools only", servers=("demo",)))
    conversation = await desk.start("Tools only")
    assert conversation.system_prompt is None
    assert _row(chat, "SELECT system_prompt FROM conversations WHERE id = ?", conversation.id) == (
        None,
    )


async def test_bad_assistants_are_clear_errors_and_store_nothing(chat: Chat) -> None:
    desk = _desk(chat)
    await desk.add(AssistantDraft(name="Helper"))
    with pytest.raises(KnownError, match="exists already") as taken:
        await desk.add(AssistantDraft(name="  helper "))
    assert taken.value.code == "exists"
    with pytest.raises(KnownError, match="No server called 'nowhere'"):
        await desk.add(AssistantDraft(name="Lost", servers=("nowhere",)))
    with pytest.raises(KnownError, match="server:tool"):
        await desk.add(AssistantDraft(name="Vague", tools=("list_sample_files",)))
    with pytest.raises(KnownError, match="needs a name"):
        await desk.add(AssistantDraft(name="   "))
    with pytest.raises(KnownError, match="No provider called 'gone'"):
        await desk.add(AssistantDraft(name="Orphan", provider="gone"))
    with pytest.raises(NotFound):
        await desk.start("Nobody")
    assert [v.name for v in await desk.assistants()] == ["Helper"]
    assert _row(chat, "SELECT count(*) FROM conversations") == (0,)
