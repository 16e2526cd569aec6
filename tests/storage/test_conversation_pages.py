"""A long conversation is read a page at a time, and a tool round carries how its approval
ended and why (migration 0010), on a real SQLite file."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from mooring.core.approval.rules import ApprovalAuditEntry, Scope
from mooring.core.clock import SystemClock
from mooring.core.conversation import Message, Role
from mooring.core.ids import new_id
from mooring.storage import repositories as repo
from mooring.storage.conversations import SqlConversations
from mooring.storage.db import Database
from mooring.storage.rules import SqlRuleBook
from tests.core.tasks.factories import T0
from tests.storage.test_conversations import a_conversation
from tests.storage.test_repositories import a_server, an_operation

pytestmark = pytest.mark.anyio


async def test_pages_come_newest_first_each_in_order_and_never_overlap(db: Database) -> None:
    book = SqlConversations(db, SystemClock())
    conv = a_conversation()
    other = a_conversation("Another")
    await book.create_conversation(conv)
    await book.create_conversation(other)
    await book.append_messages(
        [
            Message(
                id=f"m{n:02}",
                conversation_id=conv.id,
                role=Role.USER,
                content=f"message {n}",
                created_at=T0,  # the same instant: order is the append order
            )
            for n in range(25)
        ]
    )
    await book.append_messages(
        [Message(id="x", conversation_id=other.id, role=Role.USER, content="x", created_at=T0)]
    )
    newest = await book.messages_before(conv.id, None, 10)
    assert [m.id for m in newest] == [f"m{n:02}" for n in range(15, 25)]
    older = await book.messages_before(conv.id, newest[0].id, 10)
    assert [m.id for m in older] == [f"m{n:02}" for n in range(5, 15)]
    oldest = await book.messages_before(conv.id, older[0].id, 10)
    assert [m.id for m in oldest] == [f"m{n:02}" for n in range(5)]
    assert await book.messages_before(conv.id, oldest[0].id, 10) == []
    # A message of another conversation is never a page boundary here.
    assert await book.messages_before(conv.id, "x", 10) == []


async def test_a_rounds_approval_keeps_who_decided_why_and_what_was_remembered(
    db: Database,
) -> None:
    book = SqlConversations(db, SystemClock())
    rules = SqlRuleBook(db)
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    conv = a_conversation()
    await book.create_conversation(conv)
    tool_round, record = an_operation(server)
    tool_round = dataclasses.replace(tool_round, conversation_id=conv.id)
    db.call_sync(lambda s: repo.add_tool_round(s, tool_round))
    entry = ApprovalAuditEntry(
        id=new_id(),
        at=T0,
        server_id=server.id,
        tool=tool_round.tool,
        argument_digest=tool_round.argument_digest,
        outcome="approved",
        actor="user",
        tool_round_id=tool_round.id,
        reason="demo is not trusted, so its tool hints are not relied on.",
        remembered=Scope.CONVERSATION.value,
    )
    older = dataclasses.replace(
        entry, id=new_id(), at=T0 - timedelta(seconds=1), outcome="cancelled", reason=None
    )
    await rules.record_approval(older)
    await rules.record_approval(entry)
    [item] = await book.conversation_rounds(conv.id)
    assert item.approval == entry  # the newest entry, whole
    assert (await rules.audit())[0] == entry
    assert item.round.approval == "approved"
    assert record.tool_round_id == tool_round.id
