"""The durable task record: one tool call Mooring started, as stored in the ledger."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from mooring.core.tasks.states import (
    MONITORED_STATES,
    LocalState,
    TaskFlag,
    check_transition,
    is_terminal,
)
from mooring.core.tasks.wire import TaskWire


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord:
    """An immutable snapshot of one operation in the task ledger.

    ``id`` is Mooring's own stable identity for the operation, created before anything is sent;
    ``task_id`` is the server's, known only once a ``CreateTaskResult`` arrives. Changes produce
    new records (``transition``, ``evolve``); the storage layer persists them.
    """

    id: str
    server_id: str
    tool: str
    argument_digest: str
    state: LocalState
    created_at: datetime
    updated_at: datetime
    credential_profile_id: str | None = None
    task_id: str | None = None
    server_status: str | None = None
    status_message: str | None = None
    flags: frozenset[TaskFlag] = field(default_factory=frozenset)
    server_created_at: datetime | None = None
    server_updated_at: datetime | None = None
    sent_at: datetime | None = None
    """When ``tools/call`` was handed to the connection (persisted just before it goes out): a
    record in ``creating`` without it was never sent."""
    last_checked_at: datetime | None = None
    next_poll_at: datetime | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    poll_count: int = 0
    poll_failures: int = 0
    """Consecutive failed status requests (reset by any valid reply); drives backoff."""
    poll_errors: int = 0
    """Failed or malformed status requests over the task's life (for traces)."""
    anomaly_count: int = 0
    """Malformed replies seen over the task's life."""
    cancel_requested: bool = False
    conversation_id: str | None = None
    tool_round_id: str | None = None
    trace_context: str | None = None
    """W3C ``traceparent`` of the tool round's span, so later spans join the same trace."""
    owner: str | None = None
    """The process that started the call and may still be sending it (see adapters.process);
    another process's reconciliation leaves a live owner's approval or create alone."""
    reason: str | None = None
    """Why the record is where it is, in words (expiry cause, last anomaly, unknown outcome)."""
    wire: TaskWire | None = None
    """The Tasks protocol that created ``task_id`` (``None``: no task, or a record older than
    this field, which only the extension could have created)."""
    progress: float | None = None
    """The last ``notifications/progress`` of a plain call in flight: progress so far."""
    progress_total: float | None = None
    progress_message: str | None = None
    last_sign_of_life_at: datetime | None = None
    """When the server last showed it was working on a plain call (a progress notification)."""

    @property
    def is_terminal(self) -> bool:
        """Whether the record can never change again."""
        return is_terminal(self.state)

    @property
    def is_monitored(self) -> bool:
        """Whether the host should keep polling the server about this record."""
        return (
            self.state in MONITORED_STATES
            and self.task_id is not None
            and TaskFlag.MONITORING_STOPPED not in self.flags
        )

    @property
    def ttl_deadline(self) -> datetime | None:
        """``createdAt + ttlMs``: the backstop after which the server may have forgotten it."""
        if self.ttl_ms is None or self.server_created_at is None:
            return None
        return self.server_created_at + timedelta(milliseconds=self.ttl_ms)

    def transition(self, target: LocalState, *, at: datetime, **changes: object) -> TaskRecord:
        """A copy in state ``target``; raises ``IllegalTransition`` for an edge not in the table.

        An end (a terminal ``target``) keeps only a ``status_message`` given with it: the one
        the record held described the work while it ran (the server's last progress line),
        not how it ended.
        """
        check_transition(self.state, target)
        if is_terminal(target):
            changes.setdefault("status_message", None)
        return dataclasses.replace(self, state=target, updated_at=at, **changes)  # type: ignore[arg-type]

    def evolve(self, *, at: datetime, **changes: object) -> TaskRecord:
        """A copy with metadata changed and the state kept; terminal records refuse changes."""
        if "state" in changes:
            raise TypeError("use transition() to change the state")
        if self.is_terminal:
            raise ValueError(f"record {self.id} is {self.state}: terminal records never change")
        return dataclasses.replace(self, updated_at=at, **changes)  # type: ignore[arg-type]

    def with_flag(self, flag: TaskFlag, *, on: bool = True) -> frozenset[TaskFlag]:
        """The record's flags with ``flag`` set (or cleared)."""
        return self.flags | {flag} if on else self.flags - {flag}
