"""Conversations, their messages and the tool rounds the model asked for."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from mooring.core.files import FileAttachment
from mooring.core.results import clipped

if TYPE_CHECKING:
    from mooring.core.approval.rules import ApprovalAuditEntry
    from mooring.core.assistants import ToolOffering
    from mooring.core.chat import ProviderConfig, ToolCallRequest
    from mooring.core.servers import ServerDefinition
    from mooring.core.tasks.record import TaskRecord


DEFAULT_TITLE = "New conversation"
"""The title of a conversation until its first message names it."""


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
    provider_id: str | None = None
    """The model provider this conversation talks to (``None``: the default one)."""
    model: str | None = None
    """The model to ask (``None``: the provider's own default)."""
    auto_continue: bool = False
    """When a task this conversation started ends, start a model turn with its result."""
    muted: bool = False
    """No notifications about this conversation's background work."""
    system_prompt: str | None = None
    """The user's instructions to the model in this conversation (``None``: the default of
    Settings, ``chat.system_prompt``; ``""``: none). Mooring's own guidance on tools, tasks and
    approvals is always sent before them."""
    assistant_id: str | None = None
    """The assistant this conversation was started from (``None``: none, or it was removed);
    its settings were copied when the conversation started."""
    offering: ToolOffering | None = None
    """The tools this conversation offers the model (``None``: every tool)."""


class MessageStatus(StrEnum):
    """Whether a message is whole."""

    COMPLETE = "complete"
    INTERRUPTED = "interrupted"
    """The user stopped the reply: ``content`` is the part that arrived."""
    ERROR = "error"
    """The model call failed: ``error`` says why in words; ``content`` keeps any partial reply."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One message in a conversation.

    An assistant message may carry the tool calls the model asked for; a ``tool`` message is
    the result Mooring gave for one of them (``tool_call_id``), tied to its ``tool_round_id``.
    A *follow-up* is the final result of a background task, stored when the task ended (after
    the model was told it started).
    """

    id: str
    conversation_id: str
    role: Role
    content: str
    created_at: datetime
    status: MessageStatus = MessageStatus.COMPLETE
    error_kind: str | None = None
    """For ``status`` error: what failed (a ``ProviderFailure`` value, or ``tool_rounds``)."""
    error: str | None = None
    """For ``status`` error: what failed, in words for the user."""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    tool_round_id: str | None = None
    is_error: bool = False
    """For a tool result: a failure or a refusal the model should explain."""
    awaits_task: bool = False
    """For a tool result: it told the model a background task started; the task's final
    result follows later as a follow-up."""
    followup: bool = False
    model: str | None = None
    """For an assistant message: the model that wrote it."""
    files: tuple[FileAttachment, ...] = ()
    """For a user message: the files attached to it (stored in ``message_attachments``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnOpening:
    """What a model turn starts from, read (and written) in one transaction: the conversation,
    its provider's configuration, and its messages with the user's new one."""

    conversation: Conversation
    """As stored after the write (its new title, if the message named it)."""
    provider: ProviderConfig | None
    """The conversation's provider, or the default one when it names none (``None``: not
    asked for, or none is stored; when asked for and missing, nothing was written)."""
    stored: list[Message] | None
    """The conversation's messages, the new one last; ``None`` when nothing was written (no
    provider, or a background result is waiting to be stored first)."""
    servers: tuple[ServerDefinition, ...] | None = None
    """Every server not removed, by alias (whose tools the model may be offered); ``None``:
    not read (the turn lists them itself)."""


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


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationRound:
    """A tool round of a conversation with its operation record (the "what ran and why")."""

    round: ToolRound
    record: TaskRecord | None
    server_alias: str | None = None
    approval: ApprovalAuditEntry | None = None
    """How its approval ended: who decided, why, and what was remembered (the newest entry)."""

    def result_clipped(self, limit: int) -> ConversationRound:
        """This round with its result cut to ``limit`` characters of text (for a face that
        shows only its start: :func:`mooring.core.results.clipped`)."""
        result = clipped(self.round.result, limit)
        if result is self.round.result:
            return self
        return replace(self, round=replace(self.round, result=result))


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchHit:
    """A conversation found by full-text search, with the best matching excerpt."""

    conversation: Conversation
    message_id: str | None
    """The matching message (``None``: the title matched)."""
    snippet: str


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionPoint:
    """A place in a conversation with more than one version of what follows it: the user
    edited the message there or regenerated the reply (every version is kept)."""

    after_message_id: str | None
    """The message the versions follow (``None``: the conversation's start)."""
    first_message_id: str
    """The first message of the version shown (where ◀ 1/2 ▶ is drawn)."""
    count: int
    shown: int
    """Which version is shown, 1-based, in the order they were written."""
    seq: int = 0
    """Where it is in the conversation (for ordering)."""
