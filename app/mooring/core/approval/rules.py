"""Approval rules and audit entries as stored (the decision policy lives beside them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Decision(StrEnum):
    """What a rule says about a call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class Scope(StrEnum):
    """How long a remembered decision lasts."""

    ONCE = "once"
    CONVERSATION = "conversation"
    ALWAYS = "always"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRule:
    """A user's standing decision for tools (a pattern) of one server identity."""

    id: str
    server_identity: str
    tool_pattern: str
    decision: Decision
    scope: Scope
    created_at: datetime
    conversation_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalAuditEntry:
    """One approval outcome, written before the call proceeds or stops."""

    id: str
    at: datetime
    server_id: str
    tool: str
    argument_digest: str
    outcome: str
    actor: str
    rule_id: str | None = None
    tool_round_id: str | None = None
    reason: str | None = None
    """Why the policy decided, or why it asked the user (``None``: not recorded)."""
    remembered: str | None = None
    """The scope the user chose to remember this decision for (a :class:`Scope` value)."""
