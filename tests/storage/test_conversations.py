"""Conversations on a real SQLite file: order, settings, full-text search, follow-ups, and the
upgrade of a database written before chats existed."""

from __future__ import annotations

import dataclasses
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from mooring.core.chat import ProviderConfig, ProviderKind, ToolCallRequest
from mooring.core.clock import SystemClock
from mooring.core.conversation import Conversation, Message, MessageStatus, Role
from mooring.core.errors import KnownError
from mooring.core.ids import new_id
from mooring.core.servers import Transport
from mooring.core.tasks.states import LocalState as S
from mooring.storage import conversations as conv_repo
from mooring.storage import repositories as repo
from mooring.storage.conversations import SqlConversations
from mooring.storage.db import Database, head_revision
from mooring.storage.providers import SqlProviderBook
from tests.core.tasks.factories import T0
from tests.storage.test_repositories import a_server, an_operation, begin

pytestmark = pytest.mark.anyio
T1 = T0 + timedelta(seconds=5)


def a_conversation(title: str = "Supplier import") -> Conversation:
    return Conversation(id=new_id(), title=title, created_at=T0, updated_at=T0)


def a_message(conversation: Conversation, content: str, role: Role = Role.USER) -> Message:
    return Message(
        id=new_id(), conversation_id=conversation.id, role=role, content=content, created_at=T0
    )


async def test_messages_keep_the_order_they_were_appended_in_even_at_the_same_instant(
    db: Database,
) -> None:
    book = SqlConversations(db, SystemClock())
    conv = a_conversation()
    await book.create_conversation(conv)
    sent = [a_message(conv, f"message {n}") for n in range(12)]
    for message in sent:
        await book.append_messages([message])
    assert [m.content for m in await book.messages(conv.id)] == [m.content for m in sent]


async def test_every_message_field_and_conversation_setting_round_trips(db: Database) -> None:
    book = SqlConversations(db, SystemClock())
    conv = Conversation(
        id=new_id(),
        title="t",
        created_at=T0,
        updated_at=T0,
        provider_id="p1",
        model="llama3.1",
        auto_continue=True,
        muted=True,
    )
    await book.create_conversation(conv)
    assert await book.get_conversation(conv.id) == conv
    reply = Message(
        id=new_id(),
        conversation_id=conv.id,
        role=Role.ASSISTANT,
        content="partial",
        created_at=T0,
        status=MessageStatus.ERROR,
        error_kind="stream_broken",
        error="The reply broke off halfway.",
        tool_calls=(ToolCallRequest(id="c1", name="demo__x", arguments={"a": [1]}),),
        model="llama3.1",
    )
    await book.append_messages([reply])
    assert await book.messages(conv.id) == [reply]
    # A turn's start reads and writes on the plain driver connection: the same fields, both
    # ways, for the conversation, its provider and the messages.
    providers = SqlProviderBook(db, SystemClock())
    await providers.add_provider(a_provider("other"))  # the default: not the conversation's
    own = dataclasses.replace(a_provider("own"), id="p1", header_names=("X-Org",))
    await providers.add_provider(own)
    assert await providers.get_provider("p1") == own
    sent = dataclasses.replace(
        a_message(conv, "and?"), created_at=T1, is_error=True, awaits_task=True, model="m"
    )
    servers = [
        a_server(
            "zeta",
            transport=Transport.HTTP,
            command=None,
            args=(),
            env={},
            url="http://127.0.0.1:9/mcp",
            headers={"X-Team": "ops"},
            trusted=True,
            allowed_tools=("list_*",),
        ),
        a_server("alpha", enabled=False, hidden_tools=("delete_*",), cwd="/srv"),
        a_server("gone"),
    ]

    def add(session: Session) -> None:
        for server in servers:
            repo.add_server(session, server)

    db.call_sync(add)
    db.call_sync(lambda s: repo.remove_server(s, servers[2].id, at=T1))
    opening = await book.open_turn(sent)
    assert opening is not None
    assert opening.stored == [reply, sent]
    assert opening.provider == own
    assert opening.servers == tuple(db.call_sync(repo.list_servers)) == (servers[1], servers[0])
    assert opening.conversation == dataclasses.replace(conv, updated_at=T1)
    assert await book.get_conversation(conv.id) == opening.conversation
    assert await book.messages(conv.id) == [reply, sent]


def a_provider(name: str, *, api_key: bool = True) -> ProviderConfig:
    return ProviderConfig(
        id=new_id(),
        name=name,
        kind=ProviderKind.ANTHROPIC,
        base_url="http://127.0.0.1:9/v1",
        model="model-large",
        has_api_key=api_key,
    )


async def test_search_finds_titles_and_message_text_and_follows_renames_and_deletes(
    db: Database,
) -> None:
    book = SqlConversations(db, SystemClock())
    first, second = a_conversation("Quarterly suppliers"), a_conversation("Holiday plans")
    await book.create_conversation(first)
    await book.create_conversation(second)
    await book.append_messages([a_message(second, "Please import the Zürich vendors file")])

    [hit] = await book.search("zurich")  # diacritics folded, case ignored
    assert hit.conversation.id == second.id
    assert hit.message_id is not None
    assert "[Zürich]" in hit.snippet
    assert [h.conversation.id for h in await book.search("quarter")] == [first.id]  # prefix
    assert await book.search("suppliers vendors") == []  # one text must hold every word

    await book.update_conversation(
        Conversation(id=first.id, title="Renamed", created_at=T0, updated_at=T0)
    )
    assert await book.search("quarterly") == []
    assert [h.conversation.id for h in await book.search("renamed")] == [first.id]

    assert await book.delete_conversation(second.id)
    assert await book.search("zurich") == []
    assert await book.messages(second.id) == []


@pytest.mark.parametrize("words", ['"', "a AND", "NEAR(", "*", "title:x", "'; DROP", "   "])
async def test_search_words_with_query_syntax_are_plain_words(db: Database, words: str) -> None:
    book = SqlConversations(db, SystemClock())
    conv = a_conversation("title x AND NEAR")
    await book.create_conversation(conv)
    await book.search(words)  # never a syntax error


async def test_a_follow_up_is_stored_once_per_round(db: Database) -> None:
    book = SqlConversations(db, SystemClock())
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    tool_round, _record = an_operation(server)
    db.call_sync(lambda s: repo.add_tool_round(s, tool_round))
    conv = a_conversation()
    await book.create_conversation(conv)

    def followup() -> Message:
        return Message(
            id=new_id(),
            conversation_id=conv.id,
            role=Role.TOOL,
            content="done",
            created_at=T0,
            tool_round_id=tool_round.id,
            followup=True,
        )

    assert await book.append_followup(followup())
    assert not await book.append_followup(followup())
    assert len(await book.messages(conv.id)) == 1


def test_a_database_from_before_chats_is_upgraded_with_order_and_search(db_path: Path) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    from mooring.storage.db import MIGRATIONS

    db_path.parent.mkdir(parents=True)
    engine = create_engine(f"sqlite:///{db_path}")
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
        conn.exec_driver_sql(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES "
            "('c1', 'Old talk', '2026-01-01T00:00:00.000000+00:00',"
            " '2026-01-01T00:00:00.000000+00:00')"
        )
        for n, (at, text) in enumerate(
            [("00:00:02", "second words"), ("00:00:01", "first words"), ("00:00:03", "third")]
        ):
            conn.exec_driver_sql(
                "INSERT INTO messages (id, conversation_id, role, content, created_at) VALUES "
                f"('m{n}', 'c1', 'user', '{text}', '2026-01-01T{at}.000000+00:00')"
            )
    engine.dispose()

    db = Database.open(db_path)
    try:
        assert db.schema.current == head_revision()
        messages = db.call_sync(lambda s: conv_repo.list_messages(s, "c1"))
        assert [m.content for m in messages] == ["first words", "second words", "third"]
        assert all(m.status is MessageStatus.COMPLETE for m in messages)
        [conv] = db.call_sync(conv_repo.list_conversations)
        assert (conv.title, conv.auto_continue, conv.provider_id) == ("Old talk", False, None)
        hits = db.call_sync(lambda s: conv_repo.search(s, "second"))
        assert [h.conversation.id for h in hits] == ["c1"]
        assert [h.conversation.id for h in db.call_sync(lambda s: conv_repo.search(s, "old"))] == [
            "c1"
        ]
        # New messages go after the old ones.
        db.call_sync(lambda s: conv_repo.append_message(s, a_message(conv, "fourth")))
        assert db.call_sync(lambda s: conv_repo.list_messages(s, "c1"))[-1].content == "fourth"
        # The rows indexed before the upgrade are found by key (0011): renamed, then deleted.
        db.call_sync(lambda s: conv_repo.update_conversation(s, _replace(conv, title="Renamed")))
        assert db.call_sync(lambda s: conv_repo.search(s, "old")) == []
        assert [h.conversation.id for h in db.call_sync(lambda s: conv_repo.search(s, "renamed"))]
        assert db.call_sync(lambda s: conv_repo.delete_conversation(s, "c1"))
        assert db.call_sync(lambda s: conv_repo.search(s, "words")) == []
        assert search_rows(db) == (0, 0)
    finally:
        db.close()


def _replace(conversation: Conversation, **changes: object) -> Conversation:
    return dataclasses.replace(conversation, **changes)  # type: ignore[arg-type]


def search_rows(db: Database) -> tuple[int, int]:
    """How many rows the search index and its key map hold."""

    def count(session: Session) -> tuple[int, int]:
        connection = session.connection()
        indexed = connection.exec_driver_sql("SELECT count(*) FROM conversation_search").scalar()
        mapped = connection.exec_driver_sql(
            "SELECT count(*) FROM conversation_search_rows"
        ).scalar()
        return int(indexed or 0), int(mapped or 0)

    return db.call_sync(count)


def steps_to_delete_a_conversation(db: Database, others: int) -> int:
    """SQLite's virtual-machine steps to delete a conversation of 20 messages, with ``others``
    messages in other conversations (deterministic: no clock involved)."""
    book = [a_conversation("to delete"), a_conversation("kept")]
    written = [a_message(book[1], f"kept {n}") for n in range(others)]
    written += [a_message(book[0], f"gone {n}") for n in range(20)]

    def write(session: Session) -> None:
        for conv in book:
            conv_repo.add_conversation(session, conv)
        for message in written:
            conv_repo.append_message(session, message)

    db.call_sync(write)

    def delete(session: Session) -> int:
        steps = [0]

        def step() -> int:
            steps[0] += 1
            return 0

        driver = session.connection().connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        driver.set_progress_handler(step, 1)
        try:
            conv_repo.delete_conversation(session, book[0].id)
        finally:
            driver.set_progress_handler(None, 1)
        return steps[0]

    return db.call_sync(delete)


def test_deleting_a_conversation_seeks_its_search_rows_instead_of_scanning_the_index(
    tmp_path: Path,
) -> None:
    # Every search row a title or message owns is found through an indexed key map: with the
    # 0007 triggers each of the 20 messages scanned the whole index (with 50,000 messages, a
    # 500-message conversation took ~6 s to delete on the writer thread).
    small, big = Database.open(tmp_path / "small.sqlite3"), Database.open(tmp_path / "big.sqlite3")
    try:
        few = steps_to_delete_a_conversation(small, others=20)
        many = steps_to_delete_a_conversation(big, others=1_000)
        assert many < few * 2  # a scan per message would make it ~50 times as many
        assert search_rows(big) == (1_000 + 1, 1_000 + 1)  # the kept title and messages
    finally:
        small.close()
        big.close()


async def test_writing_into_a_deleted_conversation_is_a_clear_error(db: Database) -> None:
    book = SqlConversations(db, SystemClock())
    conv = a_conversation()
    await book.create_conversation(conv)
    await book.delete_conversation(conv.id)  # e.g. by the window, while a command chats
    with pytest.raises(KnownError, match="deleted meanwhile"):
        await book.append_messages([a_message(conv, "late")])


async def test_a_turn_begins_with_title_and_message_stored_together(db: Database) -> None:
    book = SqlConversations(db, SystemClock())
    conv = a_conversation("New conversation")
    await book.create_conversation(conv)
    earlier = a_message(conv, "earlier")
    await book.append_messages([earlier])
    sent = dataclasses.replace(a_message(conv, "How did the pelican import go?"), created_at=T1)

    opening = await book.open_turn(
        sent, title="How did the pelican import go?", with_provider=False
    )

    assert opening is not None
    assert opening.stored == [earlier, sent]  # the context the model is given, read in that write
    assert opening.provider is None  # not asked for
    found = await book.get_conversation(conv.id)
    assert found == opening.conversation
    assert (found.title, found.updated_at) == ("How did the pelican import go?", T1)
    assert [h.conversation.id for h in await book.search("pelican")] == [conv.id]
    # Named already: a later message's title does not rename it.
    again = await book.open_turn(
        a_message(conv, "and then?"), title="and then?", with_provider=False
    )
    assert again is not None
    assert again.conversation.title == "How did the pelican import go?"
    stored = await book.get_conversation(conv.id)
    assert stored is not None
    assert stored.title == "How did the pelican import go?"


async def test_a_turn_starts_with_the_conversations_provider_or_the_default_one(
    db: Database,
) -> None:
    book = SqlConversations(db, SystemClock())
    providers = SqlProviderBook(db, SystemClock())
    unnamed, named = a_conversation(), a_conversation()
    await book.create_conversation(unnamed)

    # No provider stored: nothing is written, whichever the conversation names.
    opening = await book.open_turn(a_message(unnamed, "hello"))
    assert opening is not None
    assert (opening.provider, opening.stored) == (None, None)
    assert await book.messages(unnamed.id) == []

    first, second = a_provider("first", api_key=False), a_provider("second")
    await providers.add_provider(first)  # the first one added is the default
    await providers.add_provider(second)
    named = dataclasses.replace(named, provider_id=second.id)
    await book.create_conversation(named)
    opening = await book.open_turn(a_message(unnamed, "hello"))
    assert opening is not None
    assert opening.provider == first
    opening = await book.open_turn(a_message(named, "hello"))
    assert opening is not None
    assert opening.provider == second
    await providers.set_default_provider(second.id)
    opening = await book.open_turn(a_message(unnamed, "again"))
    assert opening is not None
    assert opening.provider == second

    # A conversation whose provider was removed: nothing is written.
    await providers.remove_provider(second.id)
    opening = await book.open_turn(a_message(named, "still there?"))
    assert opening is not None
    assert (opening.provider, opening.stored) == (None, None)
    assert [m.content for m in await book.messages(named.id)] == ["hello"]


async def test_a_turn_does_not_begin_before_a_finished_tasks_result_is_stored(
    db: Database,
) -> None:
    book = SqlConversations(db, SystemClock())
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    conv = a_conversation()
    await book.create_conversation(conv)
    tool_round, record = an_operation(server)
    tool_round = dataclasses.replace(tool_round, conversation_id=conv.id)
    record = dataclasses.replace(record, state=S.WORKING, conversation_id=conv.id)
    begin(db, tool_round, record)
    started = dataclasses.replace(
        a_message(conv, "The import started.", Role.TOOL),
        tool_call_id="c1",
        tool_round_id=tool_round.id,
        awaits_task=True,
    )
    await book.append_messages([started])

    async def stored(message: Message, *, check_waiting: bool = True) -> bool:
        opening = await book.open_turn(message, with_provider=False, check_waiting=check_waiting)
        assert opening is not None
        return opening.stored is not None

    # Still working: the user's message goes in at once.
    assert await stored(a_message(conv, "while it runs"))
    db.call_sync(lambda s: repo.save_task_record(s, dataclasses.replace(record, state=S.COMPLETED)))
    # Finished, its result not stored yet: nothing is written, the result goes first.
    assert not await stored(a_message(conv, "how did it go?"))
    assert [m.content for m in await book.messages(conv.id)] == [
        "The import started.",
        "while it runs",
    ]
    assert await stored(a_message(conv, "anyway"), check_waiting=False)
    # Once the result is stored as the follow-up, turns begin again.
    result = dataclasses.replace(
        a_message(conv, "The import finished.", Role.TOOL),
        tool_call_id="c1",
        tool_round_id=tool_round.id,
        followup=True,
    )
    await book.append_messages([result])
    assert await stored(a_message(conv, "thanks"))


async def test_a_turn_in_a_deleted_conversation_does_not_start_and_writes_nothing(
    db: Database,
) -> None:
    book = SqlConversations(db, SystemClock())
    conv = a_conversation()
    await book.create_conversation(conv)
    await book.delete_conversation(conv.id)
    assert await book.open_turn(a_message(conv, "late"), title="late") is None
    assert await book.messages(conv.id) == []
    # Only a whole id opens a turn (a prefix is the caller's to resolve first).
    await book.create_conversation(conv)
    assert (
        await book.open_turn(
            dataclasses.replace(a_message(conv, "x"), conversation_id=conv.id[:8]),
            with_provider=False,
        )
        is None
    )
