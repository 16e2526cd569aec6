"""Persistent, user-actionable problems: they survive restarts until the user resolves them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class IssueKind(StrEnum):
    """What sort of problem an issue reports."""

    SERVER_UNAVAILABLE = "server_unavailable"
    UNKNOWN_OUTCOME = "unknown_outcome"
    ORPHANED_TASK = "orphaned_task"
    SIGN_IN_NEEDED = "sign_in_needed"
    STORAGE = "storage"


@dataclass(frozen=True, slots=True, kw_only=True)
class Issue:
    """A problem the user should see until it is resolved."""

    id: str
    kind: IssueKind
    subject: str
    """What it is about: a server id or a task record id."""
    title: str
    detail: str
    created_at: datetime
    resolved_at: datetime | None = None
