"""The question put to the user, and how it ended."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from mooring.core.approval.rules import Scope


class ApprovalOutcome(StrEnum):
    """How an approval question ended."""

    APPROVED = "approved"
    DENIED = "denied"
    """The user said no."""
    CANCELLED = "cancelled"
    """The user dismissed the question."""
    ABORTED = "aborted"
    """The program withdrew it (server gone, conversation closed, no one to ask)."""
    AUTO_ALLOWED = "auto_allowed"
    """The policy allowed it without asking."""
    AUTO_DENIED = "auto_denied"
    """A guard or a rule refused it without asking."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """Everything the user needs to decide: which server, which tool, the exact arguments,
    why the policy asked, and (when known) what the call would touch."""

    id: str
    server_id: str
    server_alias: str
    tool: str
    arguments: dict[str, Any]
    reason: str
    destructive: bool = False
    preview: list[str] = field(default_factory=list)
    conversation_id: str | None = None
    tool_round_id: str | None = None


@dataclass(frozen=True, slots=True)
class ApprovalAnswer:
    """The user's decision, and whether to remember it (``remember`` None: just this once)."""

    outcome: ApprovalOutcome
    remember: Scope | None = None


@dataclass(frozen=True, slots=True)
class PreviewResult:
    """What a call would touch (lines for the question), and what makes it impossible."""

    lines: list[str]
    refusal: str | None = None
    """Set when an argument names a local file that cannot be read: refused before asking."""
