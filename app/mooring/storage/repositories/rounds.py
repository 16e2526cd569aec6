"""Tool rounds (one call the model or a user asked for), and plain conversation rows (the chat
keeps its own in ``storage/conversations.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.orm import Session

from mooring.core.conversation import Conversation, Message, Role, RoundOutcome, ToolRound
from mooring.storage import tables as t

# -- conversations and tool rounds ----------------------------------------------------------


def add_conversation(session: Session, conversation: Conversation) -> None:
    """Store a new conversation."""
    session.execute(
        insert(t.conversations).values(
            id=conversation.id,
            title=conversation.title,
            created_at=conversation.created_at,
            updated_at=conversation.updated_at,
        )
    )


def list_conversations(session: Session) -> list[Conversation]:
    """Conversations, most recently active first."""
    rows = session.execute(select(t.conversations).order_by(t.conversations.c.updated_at.desc()))
    return [
        Conversation(id=r.id, title=r.title, created_at=r.created_at, updated_at=r.updated_at)
        for r in rows
    ]


def add_message(session: Session, message: Message) -> None:
    """Append a message and mark its conversation active."""
    session.execute(
        insert(t.messages).values(
            id=message.id,
            conversation_id=message.conversation_id,
            role=message.role.value,
            content=message.content,
            created_at=message.created_at,
        )
    )
    session.execute(
        update(t.conversations)
        .where(t.conversations.c.id == message.conversation_id)
        .values(updated_at=message.created_at)
    )


def list_messages(session: Session, conversation_id: str) -> list[Message]:
    """A conversation's messages in order."""
    rows = session.execute(
        select(t.messages)
        .where(t.messages.c.conversation_id == conversation_id)
        .order_by(t.messages.c.created_at, t.messages.c.id)
    )
    return [
        Message(
            id=r.id,
            conversation_id=r.conversation_id,
            role=Role(r.role),
            content=r.content,
            created_at=r.created_at,
        )
        for r in rows
    ]


def _round(row: Row[Any]) -> ToolRound:
    return ToolRound(
        id=row.id,
        conversation_id=row.conversation_id,
        server_id=row.server_id,
        tool=row.tool,
        arguments=dict(row.arguments),
        argument_digest=row.argument_digest,
        approval=row.approval,
        outcome=RoundOutcome(row.outcome),
        result=row.result,
        error=row.error,
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


def add_tool_round(session: Session, tool_round: ToolRound) -> None:
    """Store a new tool round."""
    session.execute(
        insert(t.tool_rounds).values(
            id=tool_round.id,
            conversation_id=tool_round.conversation_id,
            server_id=tool_round.server_id,
            tool=tool_round.tool,
            arguments=tool_round.arguments,
            argument_digest=tool_round.argument_digest,
            approval=tool_round.approval,
            outcome=tool_round.outcome.value,
            result=tool_round.result,
            error=tool_round.error,
            created_at=tool_round.created_at,
            finished_at=tool_round.finished_at,
        )
    )


def get_tool_round(session: Session, round_id: str) -> ToolRound | None:
    """A tool round by id."""
    row = session.execute(select(t.tool_rounds).where(t.tool_rounds.c.id == round_id)).first()
    return _round(row) if row else None


def finish_tool_round(
    session: Session,
    round_id: str,
    *,
    outcome: RoundOutcome,
    at: datetime,
    result: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
) -> None:
    """Record how a tool round ended (its final result or error is kept here for good)."""
    session.execute(
        update(t.tool_rounds)
        .where(t.tool_rounds.c.id == round_id)
        .values(outcome=outcome.value, result=result, error=error, finished_at=at)
    )
