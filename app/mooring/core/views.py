"""What the host shows and takes: the views and values every face reads.

These cross the engine link as they are (:mod:`mooring.link`): frozen values of the core's
own types, so a face reads them without loading anything of the host.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from mooring.core.approval.rules import ApprovalRule
from mooring.core.conversation import ToolRound
from mooring.core.errors import KnownError
from mooring.core.ids import short_id
from mooring.core.issues import Issue, IssueAction
from mooring.core.ports import ConnectionStatus
from mooring.core.results import clipped
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.core.tasks.words import StateWords

SHOWN_MATCHES = 10
"""How many records an ambiguous id lists."""


@dataclass(frozen=True, slots=True)
class TaskView:
    """One task as every face shows it: the record, where it runs, what it asks, in words."""

    record: TaskRecord
    server_alias: str | None
    """``None`` when the server is gone from the tool index."""
    tool_round: ToolRound | None
    inputs: tuple[TaskInput, ...]
    words: StateWords

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def short_id(self) -> str:
        return short_id(self.record.id)

    @property
    def server_label(self) -> str:
        return self.server_alias or "(removed server)"

    @property
    def result(self) -> dict[str, Any] | None:
        return self.tool_round.result if self.tool_round else None

    def result_clipped(self, limit: int) -> TaskView:
        """This view with its result cut to ``limit`` characters of text (for a face that
        shows only its start: :func:`mooring.core.results.clipped`); its words were read from
        the whole result."""
        round_ = self.tool_round
        if round_ is None:
            return self
        result = clipped(round_.result, limit)
        if result is round_.result:
            return self
        return replace(self, tool_round=replace(round_, result=result))

    @property
    def error(self) -> dict[str, Any] | None:
        return self.tool_round.error if self.tool_round else None

    @property
    def open_questions(self) -> tuple[TaskInput, ...]:
        """Input requests the user has not answered (only while the task asks)."""
        if self.record.state is not LocalState.INPUT_REQUIRED:
            return ()
        return tuple(i for i in self.inputs if i.awaiting_answer)


@dataclass(frozen=True, slots=True)
class ServerView:
    """A configured server with its connection's current state."""

    server: ServerDefinition
    connection: ConnectionStatus | None
    """``None`` when Mooring has not talked to it in this process."""

    @property
    def state_words(self) -> str:
        if not self.server.enabled:
            return "disabled"
        if self.connection is None:
            return "not connected"
        reason = f": {self.connection.reason}" if self.connection.reason else ""
        return f"{self.connection.state.value}{reason}"


@dataclass(frozen=True, slots=True)
class AccountView:
    """One account of a server (the default one has no profile id)."""

    label: str
    profile_id: str | None
    signed_in: bool

    @property
    def is_default(self) -> bool:
        return self.profile_id is None


@dataclass(frozen=True, slots=True)
class IssueView:
    """A persistent issue with the actions it offers."""

    issue: Issue
    actions: tuple[IssueAction, ...]


class CancelResult(StrEnum):
    """What asking to cancel a task did."""

    REQUESTED = "requested"
    """The request is stored and was (or will be) sent; the server decides the outcome."""
    ALREADY_OVER = "already_over"
    """The task had ended already; nothing was sent."""


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The outcome of :meth:`Host.cancel`."""

    result: CancelResult
    record: TaskRecord
    delivered: bool = False
    """Whether the server acknowledged the ``tasks/cancel`` (a cancel saved but not delivered
    yet is resent; one never delivered cannot have come "too late")."""


class AmbiguousId(KnownError):
    """A typed prefix that matches several records."""

    def __init__(self, prefix: str, matches: Sequence[TaskRecord]) -> None:
        listed = ", ".join(short_id(m.id) for m in matches[:10])
        super().__init__(
            f"{prefix!r} matches several tasks: {listed}.",
            hint="Type more of the id.",
            code="ambiguous",
        )
        self.prefix = prefix
        self.matches = tuple(matches)
        """The records it could mean, newest first (at most :data:`SHOWN_MATCHES` + 1)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSpec:
    """What the user gives to add (or edit) a server; header values and ``env`` values are
    secrets (the keyring keeps them; when editing, an empty value keeps the stored one);
    ``plain_env`` values are not, and ``env_refs`` name variables read at connect time."""

    alias: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    trusted: bool = False
    allowed_tools: tuple[str, ...] | None = None
    hidden_tools: tuple[str, ...] = ()
    plain_env: Mapping[str, str] = field(default_factory=dict)
    """Environment values the user said are not secret: stored in the database as they are."""
    env_refs: Mapping[str, str] = field(default_factory=dict)
    """Environment values read from Mooring's own environment when the server starts: the
    server's variable → the variable it is read from (only names are stored)."""


@dataclass(slots=True)
class ReconcileReport:
    """What one reconciliation pass found and did."""

    checked: int = 0
    refreshed: list[TaskRecord] = field(default_factory=list)
    unknown: list[TaskRecord] = field(default_factory=list)
    orphaned: list[TaskRecord] = field(default_factory=list)
    unreachable: dict[str, str] = field(default_factory=dict)
    """Server alias → why it could not be reached (its tasks keep their last known state)."""
    withdrawn: list[TaskRecord] = field(default_factory=list)
    never_sent: list[TaskRecord] = field(default_factory=list)
    """Interrupted before the call was handed over: failed, nothing ran."""
    in_progress: list[TaskRecord] = field(default_factory=list)
    """Left alone: another Mooring process that is still running is asking or sending."""


@dataclass(frozen=True, slots=True)
class RuleView:
    """A rule with the server it is bound to (``None``: no such server now)."""

    rule: ApprovalRule
    server_alias: str | None

    @property
    def server_words(self) -> str:
        """The server as shown: its name, or which server the rule was made for."""
        if self.server_alias is not None:
            return self.server_alias
        return f"(no server now: {self.rule.server_identity.replace(chr(31), ' ')})"
