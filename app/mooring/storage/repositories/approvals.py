"""Approval rules and the audit trail of every approval outcome."""

from __future__ import annotations

from sqlalchemy import delete, insert, select, update
from sqlalchemy.orm import Session

from mooring.core.approval.rules import (
    ApprovalAuditEntry,
    ApprovalRule,
    Decision,
    Scope,
)
from mooring.storage import tables as t

# -- approval rules and audit ----------------------------------------------------------------


def add_rule(session: Session, rule: ApprovalRule) -> None:
    """Store a user's approval rule."""
    session.execute(
        insert(t.approval_rules).values(
            id=rule.id,
            server_identity=rule.server_identity,
            tool_pattern=rule.tool_pattern,
            decision=rule.decision.value,
            scope=rule.scope.value,
            conversation_id=rule.conversation_id,
            created_at=rule.created_at,
        )
    )


def list_rules(session: Session) -> list[ApprovalRule]:
    """Every stored approval rule, oldest first."""
    rows = session.execute(select(t.approval_rules).order_by(t.approval_rules.c.created_at))
    return [
        ApprovalRule(
            id=r.id,
            server_identity=r.server_identity,
            tool_pattern=r.tool_pattern,
            decision=Decision(r.decision),
            scope=Scope(r.scope),
            conversation_id=r.conversation_id,
            created_at=r.created_at,
        )
        for r in rows
    ]


def remove_rule(session: Session, rule_id: str) -> bool:
    """Delete a rule; whether it existed."""
    done = session.execute(delete(t.approval_rules).where(t.approval_rules.c.id == rule_id))
    return bool(done.rowcount)  # type: ignore[attr-defined]  # CursorResult has rowcount


def list_audit(session: Session, limit: int = 100) -> list[ApprovalAuditEntry]:
    """The newest approval outcomes first."""
    rows = session.execute(
        select(t.approval_audit).order_by(t.approval_audit.c.at.desc()).limit(limit)
    )
    return [
        ApprovalAuditEntry(
            id=r.id,
            at=r.at,
            server_id=r.server_id,
            tool=r.tool,
            argument_digest=r.argument_digest,
            outcome=r.outcome,
            actor=r.actor,
            rule_id=r.rule_id,
            tool_round_id=r.tool_round_id,
            reason=r.reason,
            remembered=r.remembered,
        )
        for r in rows
    ]


def set_round_approval(session: Session, round_id: str, approval: str) -> None:
    """Record on the tool round how its approval ended."""
    session.execute(
        update(t.tool_rounds).where(t.tool_rounds.c.id == round_id).values(approval=approval)
    )


def add_audit(session: Session, entry: ApprovalAuditEntry) -> None:
    """Append an approval outcome to the audit table."""
    session.execute(
        insert(t.approval_audit).values(
            id=entry.id,
            at=entry.at,
            server_id=entry.server_id,
            tool=entry.tool,
            argument_digest=entry.argument_digest,
            outcome=entry.outcome,
            actor=entry.actor,
            rule_id=entry.rule_id,
            tool_round_id=entry.tool_round_id,
            reason=entry.reason,
            remembered=entry.remembered,
        )
    )
