"""Conversations, their messages and the tool rounds the model asked for."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    """Who said a message."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


@dataclass(frozen=True, slots=True, kw_only=True)
class Conversation:
    """A chat thread."""

    id: str
    title: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One message in a conversation."""

    id: str
    conversation_id: str
    role: Role
    content: str
    created_at: datetime


class RoundOutcome(StrEnum):
    """How one tool round ended (or that it has not yet)."""

    PENDING = "pending"
    RESULT = "result"
    """A ``CallToolResult`` arrived (it may carry ``isError: true``)."""
    ERROR = "error"
    """A JSON-RPC error: the call failed."""
    DENIED = "denied"
    CANCELLED = "cancelled"
    LOST = "lost"
    """No result can be had any more (expired, abandoned)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolRound:
    """One tool call the model (or a CLI user) asked for, with its arguments and outcome."""

    id: str
    server_id: str
    tool: str
    arguments: dict[str, Any]
    argument_digest: str
    created_at: datetime
    conversation_id: str | None = None
    approval: str | None = None
    outcome: RoundOutcome = RoundOutcome.PENDING
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    finished_at: datetime | None = None
