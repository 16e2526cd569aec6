"""Conversations, their messages, full-text search and their tool rounds, on SQLite.

Messages are numbered per conversation (``seq``) in the transaction that appends them, so order
never depends on clock resolution. The FTS5 index (``conversation_search``) is kept in step by
triggers, inside the same transaction as every write: a search never sees a message that was not
committed, nor misses one that was.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Row, bindparam, delete, func, insert, or_, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from mooring.core.approval.rules import ApprovalAuditEntry
from mooring.core.assistants import ToolOffering
from mooring.core.chat import ToolCallRequest
from mooring.core.clock import Clock
from mooring.core.conversation import (
    DEFAULT_TITLE,
    Conversation,
    ConversationRound,
    Message,
    MessageStatus,
    Role,
    SearchHit,
    TurnOpening,
    VersionPoint,
)
from mooring.core.errors import KnownError
from mooring.core.files import FileAttachment, FileKind
from mooring.core.tasks.states import LocalState, is_terminal
from mooring.storage import repositories as repo
from mooring.storage import tables as t
from mooring.storage import versions
from mooring.storage.db import Database
from mooring.storage.providers import turn_provider
from mooring.storage.records import driver_values, utc_text
from mooring.storage.repositories.servers import live_servers

# Statements on the way to every model request (and after every reply) are built once: building
# a statement and its cache key at each call cost more than running it (a turn's start went from
# 1.7 to 0.6 ms of the writer thread). Bound names are not column names: an INSERT or UPDATE
# keeps those for its own values.
_m = t.messages.c
_GET_CONVERSATION = select(t.conversations).where(t.conversations.c.id == bindparam("b_id"))
_CONVERSATION_EXISTS = select(t.conversations.c.id).where(t.conversations.c.id == bindparam("b_id"))
_TOUCH_CONVERSATION = update(t.conversations).where(t.conversations.c.id == bindparam("b_id"))
_NEXT_SEQ = (
    select(func.coalesce(func.max(_m.seq), 0) + 1)
    .where(_m.conversation_id == bindparam("b_conversation"))
    .scalar_subquery()
)
_APPEND_MESSAGE = insert(t.messages).values(seq=_NEXT_SEQ)
_LIST_MESSAGES = (
    select(t.messages)
    .where(_m.conversation_id == bindparam("b_conversation"), _m.version_id.is_(None))
    .order_by(_m.seq, _m.created_at, _m.id)
)

# -- conversations ---------------------------------------------------------------------------


def _conversation(row: Row[Any]) -> Conversation:
    return _conversation_from(row._mapping)


def _conversation_from(values: Mapping[Any, Any]) -> Conversation:
    return Conversation(
        id=values["id"],
        title=values["title"],
        created_at=values["created_at"],
        updated_at=values["updated_at"],
        provider_id=values["provider_id"],
        model=values["model"],
        auto_continue=bool(values["auto_continue"]),
        muted=bool(values["muted"]),
        system_prompt=values["system_prompt"],
        assistant_id=values["assistant_id"],
        offering=ToolOffering.from_json(values["offered_tools"]),
    )


def add_conversation(session: Session, conversation: Conversation) -> None:
    """Store a new conversation (its title enters the search index with it)."""
    session.execute(
        insert(t.conversations).values(
            id=conversation.id,
            title=conversation.title,
            created_at=conversation.created_at,
            updated_at=conversation.updated_at,
            provider_id=conversation.provider_id,
            model=conversation.model,
            auto_continue=conversation.auto_continue,
            muted=conversation.muted,
            system_prompt=conversation.system_prompt,
            assistant_id=conversation.assistant_id,
            offered_tools=(
                conversation.offering.to_json() if conversation.offering is not None else None
            ),
        )
    )


def get_conversation(session: Session, conversation_id: str) -> Conversation | None:
    """A conversation by id."""
    row = session.execute(_GET_CONVERSATION, {"b_id": conversation_id}).first()
    return _conversation(row) if row else None


def find_conversation(session: Session, key: str) -> Conversation | None:
    """A conversation by id or a unique prefix of it."""
    found = get_conversation(session, key)
    if found is not None or not key:
        return found
    pattern = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = session.execute(
        select(t.conversations).where(t.conversations.c.id.like(pattern, escape="\\")).limit(2)
    ).all()
    return _conversation(rows[0]) if len(rows) == 1 else None


def list_conversations(session: Session, *, limit: int | None = None) -> list[Conversation]:
    """Conversations, most recently active first."""
    query = select(t.conversations).order_by(
        t.conversations.c.updated_at.desc(), t.conversations.c.id
    )
    if limit is not None:
        query = query.limit(limit)
    return [_conversation(r) for r in session.execute(query)]


def update_conversation(session: Session, conversation: Conversation) -> bool:
    """Store a conversation's title and settings; whether it exists."""
    done = session.execute(
        update(t.conversations)
        .where(t.conversations.c.id == conversation.id)
        .values(
            title=conversation.title,
            updated_at=conversation.updated_at,
            provider_id=conversation.provider_id,
            model=conversation.model,
            auto_continue=conversation.auto_continue,
            muted=conversation.muted,
            system_prompt=conversation.system_prompt,
        )
    )
    return bool(done.rowcount)  # type: ignore[attr-defined]  # CursorResult has rowcount


def delete_conversation(session: Session, conversation_id: str) -> bool:
    """Delete a conversation and its messages; its tool rounds and task records stay in the
    ledger (unlinked), so the audit of what ran is kept. Whether it existed."""
    done = session.execute(delete(t.conversations).where(t.conversations.c.id == conversation_id))
    return bool(done.rowcount)  # type: ignore[attr-defined]  # CursorResult has rowcount


# -- messages --------------------------------------------------------------------------------


def _call_json(call: ToolCallRequest) -> dict[str, Any]:
    return {
        "id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "raw_arguments": call.raw_arguments,
    }


def _call(data: dict[str, Any]) -> ToolCallRequest:
    return ToolCallRequest(
        id=str(data.get("id", "")),
        name=str(data.get("name", "")),
        arguments=dict(data.get("arguments") or {}),
        raw_arguments=str(data.get("raw_arguments", "")),
    )


def _message(row: Row[Any]) -> Message:
    return _message_from(row._mapping)


def _message_from(values: Mapping[Any, Any]) -> Message:
    """A message from its columns as the column types decode them."""
    return Message(
        id=values["id"],
        conversation_id=values["conversation_id"],
        role=Role(values["role"]),
        content=values["content"],
        created_at=values["created_at"],
        status=MessageStatus(values["status"]),
        error_kind=values["error_kind"],
        error=values["error"],
        tool_calls=tuple(_call(c) for c in values["tool_calls"] or []),
        tool_call_id=values["tool_call_id"],
        tool_round_id=values["tool_round_id"],
        is_error=bool(values["is_error"]),
        awaits_task=bool(values["awaits_task"]),
        followup=bool(values["followup"]),
        model=values["model"],
    )


def _message_values(message: Message) -> dict[str, Any]:
    return {
        "id": message.id,
        "conversation_id": message.conversation_id,
        "role": message.role.value,
        "content": message.content,
        "created_at": message.created_at,
        "status": message.status.value,
        "error_kind": message.error_kind,
        "error": message.error,
        "tool_calls": [_call_json(c) for c in message.tool_calls] or None,
        "tool_call_id": message.tool_call_id,
        "tool_round_id": message.tool_round_id,
        "is_error": message.is_error,
        "awaits_task": message.awaits_task,
        "followup": message.followup,
        "model": message.model,
    }


def append_message(session: Session, message: Message) -> None:
    """Append a message after the conversation's last one and mark the conversation active."""
    session.execute(
        _APPEND_MESSAGE, {**_message_values(message), "b_conversation": message.conversation_id}
    )
    session.execute(
        _TOUCH_CONVERSATION, {"b_id": message.conversation_id, "updated_at": message.created_at}
    )
    if message.files:
        session.execute(insert(t.message_attachments), _file_rows(message))


def _file_rows(message: Message) -> list[dict[str, Any]]:
    return [
        {
            "id": f.id,
            "message_id": message.id,
            "kind": f.kind.value,
            "name": f.name,
            "mime": f.mime,
            "size": f.size,
            "sha256": f.sha256,
            "content": f.data,
            "created": message.created_at,
        }
        for f in message.files
    ]


def _file_from(values: Mapping[Any, Any]) -> FileAttachment:
    return FileAttachment(
        id=values["id"],
        name=values["name"],
        kind=FileKind(values["kind"]),
        mime=values["mime"],
        size=values["size"],
        sha256=values["sha256"],
        data=bytes(values["content"]),
    )


def _with_files(messages: list[Message], rows: Sequence[Any]) -> list[Message]:
    """The messages with their attached files (``rows``: the files' columns, in order)."""
    if not rows:
        return messages
    files: dict[str, list[FileAttachment]] = {}
    for row in rows:
        files.setdefault(row["message_id"], []).append(_file_from(row))
    return [
        dataclasses.replace(m, files=tuple(files[m.id])) if m.id in files else m for m in messages
    ]


_FILES_OF_CONVERSATION = (
    select(t.message_attachments)
    .join(t.messages, t.messages.c.id == t.message_attachments.c.message_id)
    .where(_m.conversation_id == bindparam("b_conversation"))
    .order_by(t.message_attachments.c.message_id, text("message_attachments.rowid"))
)


def _files_loaded(session: Session, conversation_id: str, messages: list[Message]) -> list[Message]:
    if not any(m.role is Role.USER for m in messages):
        return messages
    rows = session.execute(_FILES_OF_CONVERSATION, {"b_conversation": conversation_id})
    return _with_files(messages, [r._mapping for r in rows])


def list_messages(session: Session, conversation_id: str) -> list[Message]:
    """A conversation's messages in the order they were appended (with their files)."""
    rows = session.execute(_LIST_MESSAGES, {"b_conversation": conversation_id})
    return _files_loaded(session, conversation_id, [_message(r) for r in rows])


def list_messages_before(
    session: Session, conversation_id: str, before_id: str | None, limit: int
) -> list[Message]:
    """At most ``limit`` messages right before ``before_id`` (``None``: the newest), in order."""
    query = select(t.messages).where(
        t.messages.c.conversation_id == conversation_id, t.messages.c.version_id.is_(None)
    )
    if before_id is not None:
        seq = (
            select(t.messages.c.seq)
            .where(t.messages.c.id == before_id, t.messages.c.conversation_id == conversation_id)
            .scalar_subquery()
        )
        query = query.where(t.messages.c.seq < seq)
    rows = session.execute(
        query.order_by(t.messages.c.seq.desc(), t.messages.c.id.desc()).limit(limit)
    ).all()
    return _files_loaded(session, conversation_id, [_message(r) for r in reversed(rows)])


def has_followup(session: Session, tool_round_id: str) -> bool:
    """Whether a background task's final result is already in its conversation."""
    found = session.execute(
        select(t.messages.c.id).where(
            t.messages.c.tool_round_id == tool_round_id, t.messages.c.followup.is_(True)
        )
    ).first()
    return found is not None


def awaiting_results(session: Session, conversation_id: str) -> list[Message]:
    """Tool results that said a background task started and have no follow-up yet."""
    answered = select(t.messages.c.tool_round_id).where(
        t.messages.c.conversation_id == conversation_id, t.messages.c.followup.is_(True)
    )
    rows = session.execute(
        select(t.messages)
        .where(
            t.messages.c.conversation_id == conversation_id,
            t.messages.c.version_id.is_(None),
            t.messages.c.awaits_task.is_(True),
            t.messages.c.tool_round_id.is_not(None),
            t.messages.c.tool_round_id.not_in(answered),
        )
        .order_by(t.messages.c.seq)
    )
    return [_message(r) for r in rows]


# A turn's first transaction runs on the plain driver connection (Database.run_on_driver):
# reading the conversation, its provider and the servers through SQLAlchemy and then writing
# took four round trips to the writer thread (~3 ms on the way to every model request); as
# plain SQL in one trip its statements take ~0.4 ms. A result is waiting when a message awaits
# a task that has ended and no follow-up carries its result yet. tests/storage/test_conversations.py
# holds this path and the SQLAlchemy one (get_conversation, append_message, list_messages, the
# provider book) to the same rows.
_TERMINAL_STATES = tuple(sorted(state.value for state in LocalState if is_terminal(state)))
_SQL_CONVERSATION = "SELECT * FROM conversations WHERE id = ?"
_SQL_RESULT_WAITING = (
    "SELECT 1 FROM task_records JOIN tool_rounds ON tool_rounds.id = task_records.tool_round_id"
    " JOIN servers ON servers.id = tool_rounds.server_id"
    " WHERE task_records.tool_round_id IN ("
    "SELECT tool_round_id FROM messages WHERE conversation_id = :conversation"
    " AND version_id IS NULL"
    " AND awaits_task IS 1 AND tool_round_id IS NOT NULL AND tool_round_id NOT IN ("
    "SELECT tool_round_id FROM messages WHERE conversation_id = :conversation AND followup IS 1))"
    f" AND task_records.state IN ({', '.join(repr(state) for state in _TERMINAL_STATES)})"
    " LIMIT 1"
)
_SQL_TOUCH = "UPDATE conversations SET updated_at = :updated_at WHERE id = :conversation"
_SQL_TOUCH_TITLE = (
    "UPDATE conversations SET updated_at = :updated_at, title = :title WHERE id = :conversation"
)
_MESSAGE_COLUMNS = (
    "id",
    "conversation_id",
    "role",
    "content",
    "created_at",
    "status",
    "error_kind",
    "error",
    "tool_calls",
    "tool_call_id",
    "tool_round_id",
    "is_error",
    "awaits_task",
    "followup",
    "model",
)
_SQL_APPEND = (
    f"INSERT INTO messages ({', '.join(_MESSAGE_COLUMNS)}, seq)"
    f" VALUES ({', '.join(':' + name for name in _MESSAGE_COLUMNS)},"
    " (SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE conversation_id = :conversation_id))"
)
_SQL_MESSAGES = (
    "SELECT * FROM messages WHERE conversation_id = ? AND version_id IS NULL"
    " ORDER BY seq, created_at, id"
)

_FILE_COLUMNS = ("id", "message_id", "kind", "name", "mime", "size", "sha256", "content", "created")
_SQL_APPEND_FILE = (
    f"INSERT INTO message_attachments ({', '.join(_FILE_COLUMNS)})"
    f" VALUES ({', '.join(':' + name for name in _FILE_COLUMNS)})"
)
_SQL_FILES = (
    "SELECT message_attachments.* FROM message_attachments"
    " JOIN messages ON messages.id = message_attachments.message_id"
    " WHERE messages.conversation_id = ?"
    " ORDER BY message_attachments.message_id, message_attachments.rowid"
)


def open_turn(
    conn: sqlite3.Connection,
    message: Message,
    *,
    title: str | None,
    with_provider: bool,
    check_waiting: bool,
) -> TurnOpening | None:
    """Read the conversation ``message`` belongs to (by its exact id: ``None``, with nothing
    written, when there is none) and, ``with_provider``, its provider; store the user's
    ``message`` (``title`` becomes the conversation's title while it has the default one) and
    read the conversation's messages back. Nothing is written when the provider was asked for
    and none is stored, or when ``check_waiting`` and a background result is waiting to be
    stored first. The servers come with the messages (the tools the turn may offer). On the
    driver connection, in the caller's (write) transaction."""
    cursor = conn.cursor()
    cursor.row_factory = sqlite3.Row
    conversation_id = message.conversation_id
    row = cursor.execute(_SQL_CONVERSATION, (conversation_id,)).fetchone()
    if row is None:
        return None
    conversation = _conversation_from(driver_values(row, times=("created_at", "updated_at")))
    provider = turn_provider(cursor, conversation.provider_id) if with_provider else None
    if with_provider and provider is None:
        return TurnOpening(conversation=conversation, provider=None, stored=None)
    if check_waiting:
        waiting = cursor.execute(_SQL_RESULT_WAITING, {"conversation": conversation_id})
        if waiting.fetchone() is not None:
            return TurnOpening(conversation=conversation, provider=provider, stored=None)
    updated = {"updated_at": utc_text(message.created_at), "conversation": conversation_id}
    if title is not None and conversation.title == DEFAULT_TITLE:
        conversation = dataclasses.replace(conversation, title=title)
        cursor.execute(_SQL_TOUCH_TITLE, {**updated, "title": title})
    else:  # the title's search entry is left alone
        cursor.execute(_SQL_TOUCH, updated)
    conversation = dataclasses.replace(conversation, updated_at=message.created_at)
    values = _message_values(message)
    values["created_at"] = utc_text(message.created_at)
    values["tool_calls"] = json.dumps(values["tool_calls"])  # as the JSON column type stores it
    for flag in ("is_error", "awaits_task", "followup"):
        values[flag] = int(values[flag])
    cursor.execute(_SQL_APPEND, values)
    if message.files:
        cursor.executemany(
            _SQL_APPEND_FILE,
            [{**row, "created": values["created_at"]} for row in _file_rows(message)],
        )
    stored = [_raw_message(row) for row in cursor.execute(_SQL_MESSAGES, (conversation_id,))]
    stored = _with_files(stored, cursor.execute(_SQL_FILES, (conversation_id,)).fetchall())
    servers = tuple(live_servers(cursor))
    return TurnOpening(conversation=conversation, provider=provider, stored=stored, servers=servers)


def _raw_message(row: sqlite3.Row) -> Message:
    """A message from a plain ``sqlite3`` row: decoded as the column types would."""
    return _message_from(driver_values(row, times=("created_at",), json_columns=("tool_calls",)))


# -- search ----------------------------------------------------------------------------------


def fts_query(words: str) -> str | None:
    """The user's words as an FTS5 query: every word must appear (as a word or a word's start),
    and no character has a query-syntax meaning. ``None`` when there is no word at all."""
    terms = [w for w in words.split() if any(ch.isalnum() for ch in w)]
    if not terms:
        return None
    return " ".join('"' + term.replace('"', '""') + '"*' for term in terms)


_SHOWN_ONLY = (
    "AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.id = conversation_search.message_id"
    " AND messages.version_id IS NOT NULL)"
)
"""Search rows of shown messages and titles only: a message in a hidden version (an edited
message, a regenerated reply) is not what the conversation shows, so it is not found."""


def search(session: Session, words: str, *, limit: int = 50) -> list[SearchHit]:
    """Conversations with a title or a shown message that contains every word, best match
    first, each with the excerpt of its best match (hidden versions are not searched)."""
    query = fts_query(words)
    if query is None:
        return []
    best = session.execute(
        text(
            "SELECT conversation_id FROM conversation_search WHERE conversation_search MATCH :q "
            f"{_SHOWN_ONLY} GROUP BY conversation_id ORDER BY min(rank) LIMIT :limit"
        ),
        {"q": query, "limit": limit},
    ).scalars()
    hits: list[SearchHit] = []
    for conversation_id in list(best):
        conversation = get_conversation(session, conversation_id)
        if conversation is None:
            continue
        row = session.execute(
            text(
                "SELECT message_id, snippet(conversation_search, 0, '[', ']', '…', 12) "
                "FROM conversation_search WHERE conversation_search MATCH :q "
                f"AND conversation_id = :cid {_SHOWN_ONLY} ORDER BY rank LIMIT 1"
            ),
            {"q": query, "cid": conversation_id},
        ).one()
        hits.append(SearchHit(conversation=conversation, message_id=row[0], snippet=row[1]))
    return hits


# -- tool rounds -----------------------------------------------------------------------------


def conversation_rounds(session: Session, conversation_id: str) -> list[ConversationRound]:
    """A conversation's tool rounds, oldest first, each with its operation record and server:
    those it ran, and those its messages show (a branch's copied history: the rounds ran in
    the conversation it was branched from, ``round.conversation_id``)."""
    shown = select(_m.tool_round_id).where(
        _m.conversation_id == conversation_id, _m.tool_round_id.is_not(None)
    )
    rows = session.execute(
        select(t.tool_rounds.c.id, t.servers.c.alias)
        .join(t.servers, t.servers.c.id == t.tool_rounds.c.server_id)
        .where(
            or_(
                t.tool_rounds.c.conversation_id == conversation_id,
                t.tool_rounds.c.id.in_(shown),
            )
        )
        .order_by(t.tool_rounds.c.created_at, t.tool_rounds.c.id)
    ).all()
    found: list[ConversationRound] = []
    for round_id, alias in rows:
        tool_round = repo.get_tool_round(session, round_id)
        if tool_round is None:
            continue
        record_id = session.execute(
            select(t.task_records.c.id).where(t.task_records.c.tool_round_id == round_id)
        ).scalar_one_or_none()
        record = repo.get_task_record(session, record_id) if record_id else None
        found.append(
            ConversationRound(
                round=tool_round,
                record=record,
                server_alias=alias,
                approval=_round_approval(session, round_id),
            )
        )
    return found


def _round_approval(session: Session, round_id: str) -> ApprovalAuditEntry | None:
    row = session.execute(
        select(t.approval_audit)
        .where(t.approval_audit.c.tool_round_id == round_id)
        .order_by(t.approval_audit.c.at.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    return ApprovalAuditEntry(
        id=row.id,
        at=row.at,
        server_id=row.server_id,
        tool=row.tool,
        argument_digest=row.argument_digest,
        outcome=row.outcome,
        actor=row.actor,
        rule_id=row.rule_id,
        tool_round_id=row.tool_round_id,
        reason=row.reason,
        remembered=row.remembered,
    )


def _require_conversation(session: Session, conversation_id: str) -> None:
    found = session.execute(_CONVERSATION_EXISTS, {"b_id": conversation_id}).first()
    if found is None:
        raise _deleted_meanwhile()


def _deleted_meanwhile() -> KnownError:
    return KnownError(
        "The conversation was deleted meanwhile; nothing more was stored in it.",
        code="conversation_deleted",
    )


class SqlConversations:
    """Implements ``ConversationBook`` on one :class:`Database`."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    async def create_conversation(
        self, conversation: Conversation, messages: Sequence[Message] = ()
    ) -> None:
        def write(session: Session) -> None:
            add_conversation(session, conversation)
            for message in messages:  # the conversation's updated_at is left as given
                session.execute(
                    _APPEND_MESSAGE,
                    {**_message_values(message), "b_conversation": message.conversation_id},
                )

        await self.db.run(write)

    async def get_conversation(self, conversation_id: str) -> Conversation | None:
        return await self.db.run(lambda s: get_conversation(s, conversation_id))

    async def find_conversation(self, key: str) -> Conversation | None:
        return await self.db.run(lambda s: find_conversation(s, key))

    async def list_conversations(self, *, limit: int | None = None) -> list[Conversation]:
        return await self.db.run(lambda s: list_conversations(s, limit=limit))

    async def update_conversation(self, conversation: Conversation) -> bool:
        return await self.db.run(lambda s: update_conversation(s, conversation))

    async def delete_conversation(self, conversation_id: str) -> bool:
        return await self.db.run(lambda s: delete_conversation(s, conversation_id))

    async def append_messages(self, messages: Sequence[Message]) -> None:
        def write(session: Session) -> None:
            for message in messages:
                _require_conversation(session, message.conversation_id)
                append_message(session, message)

        await self.db.run(write)

    async def append_followup(self, message: Message) -> bool:
        def write(session: Session) -> bool:
            if message.tool_round_id is None or has_followup(session, message.tool_round_id):
                return False
            _require_conversation(session, message.conversation_id)
            try:
                with session.begin_nested():
                    append_message(session, message)
            except IntegrityError:  # another process stored it first
                return False
            return True

        return await self.db.run(write)

    async def open_turn(
        self,
        message: Message,
        *,
        title: str | None = None,
        with_provider: bool = True,
        check_waiting: bool = True,
    ) -> TurnOpening | None:
        return await self.db.run_on_driver(
            lambda conn: open_turn(
                conn,
                message,
                title=title,
                with_provider=with_provider,
                check_waiting=check_waiting,
            )
        )

    async def messages(self, conversation_id: str) -> list[Message]:
        return await self.db.run(lambda s: list_messages(s, conversation_id))

    async def fork(self, conversation_id: str, after_id: str | None) -> bool:
        now = self.clock.now()
        return await self.db.run(lambda s: versions.fork(s, conversation_id, after_id, now))

    async def version_points(self, conversation_id: str) -> list[VersionPoint]:
        return await self.db.run(lambda s: versions.version_points(s, conversation_id))

    async def show_version(self, conversation_id: str, after_id: str | None, number: int) -> bool:
        now = self.clock.now()
        return await self.db.run(
            lambda s: versions.show_version(s, conversation_id, after_id, number, now)
        )

    async def messages_before(
        self, conversation_id: str, before_id: str | None, limit: int
    ) -> list[Message]:
        return await self.db.run(
            lambda s: list_messages_before(s, conversation_id, before_id, limit)
        )

    async def awaiting_results(self, conversation_id: str) -> list[Message]:
        return await self.db.run(lambda s: awaiting_results(s, conversation_id))

    async def search(self, words: str, *, limit: int = 50) -> list[SearchHit]:
        return await self.db.run(lambda s: search(s, words, limit=limit))

    async def conversation_rounds(self, conversation_id: str) -> list[ConversationRound]:
        return await self.db.run(lambda s: conversation_rounds(s, conversation_id))
