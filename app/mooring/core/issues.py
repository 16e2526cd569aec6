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
    TASK_UNREADABLE = "task_unreadable"
    """Mooring failed to check a task several times in a row (a bug, or a record it cannot
    read); it keeps trying, less often."""


class IssueAction(StrEnum):
    """What the user can do about an issue; each face renders these its own way (a button,
    a command line), so issue texts never embed one face's commands."""

    RETRY = "retry"
    """Send the call again as a new operation (it may run twice)."""
    ABANDON = "abandon"
    """Give up on a call whose outcome is unknown."""
    SIGN_IN = "sign_in"
    """Sign in to the server again."""
    CHECK_SERVER = "check_server"
    """Look at the server's connection (the subject is a server id)."""
    SHOW_TASK = "show_task"
    """Open the task the issue is about."""
    DISMISS = "dismiss"


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


ACTIONS: dict[IssueKind, tuple[IssueAction, ...]] = {
    IssueKind.UNKNOWN_OUTCOME: (IssueAction.RETRY, IssueAction.ABANDON, IssueAction.SHOW_TASK),
    IssueKind.SERVER_UNAVAILABLE: (IssueAction.CHECK_SERVER, IssueAction.DISMISS),
    IssueKind.ORPHANED_TASK: (IssueAction.SHOW_TASK, IssueAction.DISMISS),
    IssueKind.SIGN_IN_NEEDED: (IssueAction.SIGN_IN, IssueAction.DISMISS),
    IssueKind.STORAGE: (IssueAction.DISMISS,),
    IssueKind.TASK_UNREADABLE: (IssueAction.SHOW_TASK, IssueAction.DISMISS),
}
"""The actions each kind of issue offers, about its ``subject``."""


def actions_for(issue: Issue) -> tuple[IssueAction, ...]:
    """What the user can do about ``issue``."""
    return ACTIONS.get(issue.kind, (IssueAction.DISMISS,))
