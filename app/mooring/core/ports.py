"""Ports: what the services need from the outside world, as Protocols.

Services depend on these, never on SQLAlchemy, the MCP SDK or Qt; the storage, mcp and adapters
packages provide the implementations, and ``bootstrap`` wires them together.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from mooring.core.approval.rules import ApprovalAuditEntry, ApprovalRule
from mooring.core.conversation import ToolRound
from mooring.core.issues import Issue
from mooring.core.servers import CredentialProfile, ServerDefinition
from mooring.core.tasks.calls import AckOutcome, CallOutcome
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.reconcile import Observation, Reconciliation
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.core.tools import ToolInfo


class ServerCatalog(Protocol):
    """The user's configured servers."""

    async def list_servers(self) -> list[ServerDefinition]: ...
    async def find_server(self, alias: str) -> ServerDefinition | None: ...
    async def get_server(self, server_id: str) -> ServerDefinition | None: ...
    async def add_server(self, server: ServerDefinition) -> None: ...
    async def remove_server(self, server_id: str) -> None: ...
    async def is_removed(self, server_id: str) -> bool:
        """Whether the user removed this server (its row is kept for history)."""
        ...

    async def builtin_ever_configured(self) -> bool:
        """Whether Mooring ever configured a server of its own (even if since removed)."""
        ...

    async def set_trusted(self, server_id: str, trusted: bool) -> None:
        """Trust (or stop trusting) a server's tool annotations."""
        ...


class AccountBook(Protocol):
    """Credential profiles: several accounts per server (their secrets are in the keyring)."""

    async def list_profiles(self, server_id: str) -> list[CredentialProfile]: ...
    async def add_profile(self, profile: CredentialProfile) -> None: ...
    async def remove_profile(self, profile_id: str) -> None: ...
    async def is_profile_removed(self, profile_id: str) -> bool: ...


class TaskLedger(Protocol):
    """The durable record of every operation Mooring started."""

    async def begin_operation(self, tool_round: ToolRound, record: TaskRecord) -> None:
        """Persist a tool round and its operation record together (the intent)."""
        ...

    async def get(self, record_id: str) -> TaskRecord | None: ...
    async def find(self, key: str) -> TaskRecord | None:
        """A record by id, task id or a unique prefix of either: for what people type."""
        ...

    async def matching(self, prefix: str) -> list[TaskRecord]:
        """Records whose id or task id starts with ``prefix`` (a few, newest first)."""
        ...

    async def by_task_id(self, server_id: str, task_id: str) -> TaskRecord | None:
        """The record of one server's task, exactly: for what arrives on the wire."""
        ...

    async def save(
        self, record: TaskRecord, *, expected_updated_at: datetime | None = None
    ) -> None:
        """Persist a changed record; with ``expected_updated_at``, only over that version
        (else :class:`~mooring.core.errors.RecordChanged`)."""
        ...

    async def apply(self, reconciliation: Reconciliation) -> list[TaskInput]: ...
    async def unfinished(self) -> list[TaskRecord]: ...
    async def list_records(
        self, *, states: Sequence[LocalState] | None = None, limit: int | None = None
    ) -> list[TaskRecord]: ...
    async def counts(self) -> dict[LocalState, int]: ...
    async def inputs(self, record_id: str) -> list[TaskInput]: ...
    async def save_answer(self, record_id: str, key: str, answer: dict[str, Any]) -> None:
        """Persist the user's answer before it is sent; refuses a second answer to a key."""
        ...

    async def settle_answers(
        self, record_id: str, keys: Sequence[str], *, outcome: str | None = None
    ) -> None:
        """Mark answers acknowledged by the server, or (with ``outcome``) undeliverable."""
        ...

    async def tool_round(self, round_id: str) -> ToolRound | None: ...


class RuleBook(Protocol):
    """The user's approval rules and the audit trail of every approval outcome."""

    async def list_rules(self) -> list[ApprovalRule]: ...
    async def add_rule(self, rule: ApprovalRule) -> None: ...
    async def remove_rule(self, rule_id: str) -> bool: ...
    async def record_approval(
        self, entry: ApprovalAuditEntry, *, consumed_rule_id: str | None = None
    ) -> None:
        """Append an audit entry, set the tool round's approval, and use up a "once" rule,
        all in one transaction."""
        ...

    async def audit(self, limit: int = 100) -> list[ApprovalAuditEntry]: ...


class IssueBoard(Protocol):
    """Persistent problems for the user."""

    async def raise_issue(self, issue: Issue) -> Issue: ...
    async def open_issues(self) -> list[Issue]: ...
    async def resolve(self, issue_id: str) -> None: ...


class SecretStore(Protocol):
    """Secrets by (scope, name): the OS keyring, or this session's memory when it is unusable."""

    def get(self, scope: str, name: str) -> str | None: ...
    def set(self, scope: str, name: str, value: str) -> None: ...
    def delete(self, scope: str, name: str) -> None: ...


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What one probe of the environment found (``mooring doctor``): the part in use, whether
    it is usable, and why."""

    backend: str
    usable: bool
    detail: str


class ConnectionState(StrEnum):
    """Where a server connection stands (observable in the UI and CLI)."""

    CONNECTING = "connecting"
    READY = "ready"
    FAILED = "failed"
    """Could not start or reach the server; ``ConnectionStatus.reason`` says why."""
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class ConnectionStatus:
    """A connection's state, why, and whether the server speaks the Tasks extension."""

    server_id: str
    state: ConnectionState
    reason: str = ""
    supports_tasks: bool = False
    protocol_version: str | None = None


class ServerConnection(Protocol):
    """Requests to one server under one credential profile.

    Every method returns an outcome value for server-side and transport conditions; none of
    them raises for a dead server, a timeout or a malformed reply.
    """

    @property
    def status(self) -> ConnectionStatus: ...

    async def settled(self) -> ConnectionStatus:
        """Wait for the current connection attempt to end (ready, failed or stopped); the
        connect deadline bounds the wait."""
        ...

    async def list_tools(self) -> list[ToolInfo]: ...

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        on_sending: Callable[[], Awaitable[None]] | None = None,
    ) -> CallOutcome:
        """Send ``tools/call`` declaring the Tasks extension.

        ``on_sending`` is awaited immediately before the request is written to the wire (after
        the connection is known to be up), so callers can persist "sent" first.
        """
        ...

    async def get_task(self, task_id: str) -> Observation: ...
    async def update_task(
        self, task_id: str, responses: dict[str, dict[str, Any]]
    ) -> AckOutcome: ...
    async def cancel_task(self, task_id: str) -> AckOutcome: ...


class Gateway(Protocol):
    """Owns every server connection; one long-lived task per (server, credential profile)."""

    async def connect(
        self, server: ServerDefinition, profile_id: str | None = None
    ) -> ServerConnection:
        """The connection for this server and account, started if needed (never raises)."""
        ...

    def statuses(self) -> list[ConnectionStatus]: ...

    def add_task_listener(self, listener: Callable[[str, str], None]) -> None:
        """Be told ``(server_id, task_id)`` when a ``notifications/tasks`` arrives.

        A notification only triggers a refresh: ``tasks/get`` stays the authority.
        """
        ...

    def add_status_listener(self, listener: Callable[[ConnectionStatus], None]) -> None:
        """Be told every connection's new status when it changes (connecting, ready, ...)."""
        ...

    async def aclose(self) -> None: ...
