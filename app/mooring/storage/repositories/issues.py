"""Persistent issues: one open issue per kind and subject."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, and_, insert, select, update
from sqlalchemy.orm import Session

from mooring.core.issues import Issue, IssueKind
from mooring.storage import tables as t

# -- persistent issues -----------------------------------------------------------------------


def _issue(row: Row[Any]) -> Issue:
    return Issue(
        id=row.id,
        kind=IssueKind(row.kind),
        subject=row.subject,
        title=row.title,
        detail=row.detail,
        created_at=row.created_at,
        resolved_at=row.resolved_at,
    )


def raise_issue(session: Session, issue: Issue) -> Issue:
    """Open an issue, or refresh the open one of the same kind and subject."""
    existing = session.execute(
        select(t.issues).where(
            and_(
                t.issues.c.kind == issue.kind.value,
                t.issues.c.subject == issue.subject,
                t.issues.c.resolved_at.is_(None),
            )
        )
    ).first()
    if existing is not None:
        session.execute(
            update(t.issues)
            .where(t.issues.c.id == existing.id)
            .values(title=issue.title, detail=issue.detail)
        )
        return Issue(
            id=existing.id,
            kind=issue.kind,
            subject=issue.subject,
            title=issue.title,
            detail=issue.detail,
            created_at=existing.created_at,
        )
    session.execute(
        insert(t.issues).values(
            id=issue.id,
            kind=issue.kind.value,
            subject=issue.subject,
            title=issue.title,
            detail=issue.detail,
            created_at=issue.created_at,
        )
    )
    return issue


def list_open_issues(session: Session) -> list[Issue]:
    """Issues the user has not resolved, oldest first."""
    rows = session.execute(
        select(t.issues).where(t.issues.c.resolved_at.is_(None)).order_by(t.issues.c.created_at)
    )
    return [_issue(r) for r in rows]


def resolve_issue(session: Session, issue_id: str, *, at: datetime) -> None:
    """Mark an issue resolved."""
    session.execute(update(t.issues).where(t.issues.c.id == issue_id).values(resolved_at=at))
