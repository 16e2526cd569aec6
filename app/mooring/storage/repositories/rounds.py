"""Tool rounds: one call the model or a user asked for, with its arguments and outcome.

(Conversations and their messages live in ``storage/conversations.py``.)"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.orm import Session

from mooring.core.conversation import RoundOutcome, ToolRound
from mooring.storage import tables as t

# -- conversations and tool rounds ----------------------------------------------------------


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
