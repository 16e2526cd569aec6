"""Pure reconciliation: what one observation of a server means for one task record.

An *observation* is what a status request yielded: a valid task snapshot, "the server no longer
knows this task", "status unavailable", "sign-in needed", or a malformed reply. ``reconcile``
turns (record, observation) into a :class:`Reconciliation` — the record to persist and what else
to persist with it (a final result, an error, new input requests) — without doing any I/O.

Principles (docs/tasks.md, "Rules"): ``tasks/get`` is the authority; terminal records never
change; a failed status request is not a failed task; an auth error is not a failed task; a
malformed reply keeps the last valid state.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from mooring.core.tasks.calls import (
    AuthFailed,
    CallOutcome,
    CallRejected,
    ImmediateResult,
    NoAnswer,
    NotSent,
    StoppedByUser,
    TaskCreated,
)
from mooring.core.tasks.codes import NOT_SENT_CODE
from mooring.core.tasks.observations import (
    AuthRequired,
    JsonObject,
    MalformedReply,
    Observation,
    ServerTask,
    StatusUnavailable,
    TaskGone,
)
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState, TaskFlag, is_terminal, state_for_server_status

__all__ = [
    "NOT_SENT_CODE",
    "AuthRequired",
    "MalformedReply",
    "Observation",
    "Outcome",
    "Reconciliation",
    "ServerTask",
    "StatusUnavailable",
    "TaskGone",
    "apply_call_outcome",
    "interrupted_create",
    "reconcile",
]


class Outcome(StrEnum):
    """What kind of change a reconciliation made."""

    UNCHANGED = "unchanged"
    """Nothing to persist (a terminal record, or a record the observation cannot concern)."""
    UPDATED = "updated"
    """Same state, new metadata or flags."""
    TRANSITIONED = "transitioned"
    """The state changed."""
    ANOMALY = "anomaly"
    """A malformed reply was counted; the last valid state is kept."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reconciliation:
    """The pure result of :func:`reconcile`: persist ``record`` (and the rest) in one go."""

    outcome: Outcome
    record: TaskRecord
    previous_state: LocalState
    result: JsonObject | None = None
    """The final ``CallToolResult`` to persist into the tool round (on ``completed``)."""
    error: JsonObject | None = None
    """The JSON-RPC error object to persist (on ``failed``)."""
    input_requests: dict[str, JsonObject] = field(default_factory=dict)
    """Outstanding input requests by key (the caller deduplicates against stored keys)."""
    note: str | None = None
    base_updated_at: datetime | None = None
    """``updated_at`` of the record this was computed from: the write only applies if the
    stored row is still that version (another process may have moved it on)."""

    @property
    def changed(self) -> bool:
        """Whether there is anything to persist."""
        return self.outcome is not Outcome.UNCHANGED

    @property
    def state_changed(self) -> bool:
        """Whether the state moved."""
        return self.record.state is not self.previous_state


def _unchanged(record: TaskRecord, note: str) -> Reconciliation:
    return Reconciliation(
        outcome=Outcome.UNCHANGED, record=record, previous_state=record.state, note=note
    )


def reconcile(record: TaskRecord, observation: Observation, *, now: datetime) -> Reconciliation:
    """Apply one observation of the server to ``record``. Pure: no I/O, no clock."""
    return dataclasses.replace(
        _reconcile(record, observation, now=now), base_updated_at=record.updated_at
    )


def _reconcile(record: TaskRecord, observation: Observation, *, now: datetime) -> Reconciliation:
    if record.is_terminal:
        return _unchanged(record, f"{record.state} is terminal; observation ignored")
    if record.task_id is None or record.state not in (
        LocalState.WORKING,
        LocalState.INPUT_REQUIRED,
        LocalState.CREATING,
    ):
        return _unchanged(record, f"no server task to observe in state {record.state}")

    checked = {"last_checked_at": now, "poll_count": record.poll_count + 1}
    match observation:
        case ServerTask():
            return _apply_server_task(record, observation, now=now, checked=checked)
        case TaskGone(reason=reason):
            gone = record.transition(
                LocalState.EXPIRED,
                at=now,
                reason=f"The server no longer knows this task: {reason}",
                flags=record.flags - {TaskFlag.STATUS_UNAVAILABLE, TaskFlag.AUTH_REQUIRED},
                **checked,
            )
            return Reconciliation(
                outcome=Outcome.TRANSITIONED, record=gone, previous_state=record.state
            )
        case StatusUnavailable(reason=reason):
            updated = record.evolve(
                at=now,
                flags=record.with_flag(TaskFlag.STATUS_UNAVAILABLE),
                poll_failures=record.poll_failures + 1,
                poll_errors=record.poll_errors + 1,
                reason=f"Status temporarily unavailable: {reason}",
                **checked,
            )
            return Reconciliation(
                outcome=Outcome.UPDATED, record=updated, previous_state=record.state
            )
        case AuthRequired(reason=reason):
            updated = record.evolve(
                at=now,
                flags=record.with_flag(TaskFlag.AUTH_REQUIRED),
                reason=f"Sign-in needed: {reason}",
                **checked,
            )
            return Reconciliation(
                outcome=Outcome.UPDATED, record=updated, previous_state=record.state
            )
        case MalformedReply(detail=detail):
            updated = record.evolve(
                at=now,
                anomaly_count=record.anomaly_count + 1,
                poll_failures=record.poll_failures + 1,
                poll_errors=record.poll_errors + 1,
                reason=f"Malformed reply from the server: {detail}",
                **checked,
            )
            return Reconciliation(
                outcome=Outcome.ANOMALY, record=updated, previous_state=record.state
            )


def _apply_server_task(
    record: TaskRecord, seen: ServerTask, *, now: datetime, checked: dict[str, Any]
) -> Reconciliation:
    if seen.task_id != record.task_id:
        return reconcile(
            record,
            MalformedReply(f"reply is about task {seen.task_id!r}, not {record.task_id!r}"),
            now=now,
        )
    target = state_for_server_status(seen.status)
    if target is None:
        return reconcile(record, MalformedReply(f"unknown status {seen.status!r}"), now=now)
    if target is LocalState.INPUT_REQUIRED and not seen.input_requests:
        return reconcile(
            record, MalformedReply("status input_required without inputRequests"), now=now
        )

    message = seen.status_message
    if is_terminal(target) and message == record.status_message:
        # The end repeats the line the task showed while it ran: the server's task store kept
        # its last progress message ("Generating report..."), which is no longer what the task
        # does. A message that comes new with the end is its final word and is kept.
        message = None
    changes: dict[str, Any] = {
        **checked,
        "server_status": seen.status,
        "status_message": message,
        "flags": record.flags - {TaskFlag.STATUS_UNAVAILABLE, TaskFlag.AUTH_REQUIRED},
        "poll_failures": 0,
        "reason": None,
        "ttl_ms": seen.ttl_ms,
        "poll_interval_ms": seen.poll_interval_ms,
    }
    if seen.created_at is not None:
        changes["server_created_at"] = seen.created_at
    if seen.last_updated_at is not None:
        changes["server_updated_at"] = seen.last_updated_at

    result = seen.result if target is LocalState.COMPLETED else None
    error = seen.error if target is LocalState.FAILED else None
    if target is LocalState.COMPLETED and result is None:
        changes["reason"] = "The server reported completion without a result."
    if target is LocalState.FAILED and error is None:
        error = {"code": -32603, "message": "The server reported failure without an error."}
    if target is LocalState.CANCELLED and not record.cancel_requested:
        changes["reason"] = "Cancelled by the server."
    if target is LocalState.COMPLETED and record.cancel_requested:
        changes["reason"] = "Completed: the cancel arrived too late."

    if target is record.state:
        new = record.evolve(at=now, **changes)
        outcome = Outcome.UPDATED
    else:
        new = record.transition(target, at=now, **changes)
        outcome = Outcome.TRANSITIONED
    return Reconciliation(
        outcome=outcome,
        record=new,
        previous_state=record.state,
        result=result,
        error=error,
        input_requests=dict(seen.input_requests) if target is LocalState.INPUT_REQUIRED else {},
    )


def interrupted_create(record: TaskRecord, *, now: datetime) -> Reconciliation:
    """A record left in ``creating`` without a task id by a crash.

    Never handed to the connection (no ``sent_at``): nothing ran, so it fails honestly. Handed
    over: the request may or may not have reached the server; replaying it could duplicate a
    side effect, so the record becomes ``unknown_outcome`` for the user to decide.
    """
    return dataclasses.replace(_interrupted(record, now=now), base_updated_at=record.updated_at)


def _interrupted(record: TaskRecord, *, now: datetime) -> Reconciliation:
    if record.state is not LocalState.CREATING or record.task_id is not None:
        return _unchanged(record, "not an interrupted create")
    if record.sent_at is None:
        why = "Mooring stopped before sending this call; nothing was run."
        failed = record.transition(LocalState.FAILED, at=now, reason=why)
        return Reconciliation(
            outcome=Outcome.TRANSITIONED,
            record=failed,
            previous_state=record.state,
            error={"code": NOT_SENT_CODE, "message": why},
        )
    new = record.transition(
        LocalState.UNKNOWN_OUTCOME,
        at=now,
        reason="Mooring stopped before the server answered; the call may or may not have run.",
    )
    return Reconciliation(outcome=Outcome.TRANSITIONED, record=new, previous_state=record.state)


def apply_call_outcome(
    record: TaskRecord, outcome: CallOutcome, *, now: datetime
) -> Reconciliation:
    """What the answer (or silence) to ``tools/call`` means for a record in ``creating``.

    A created task takes its id and first status in the same step, so both are persisted in one
    transaction. Only :class:`NoAnswer` leads to ``unknown_outcome``: the request may have run.
    """
    return dataclasses.replace(
        _apply_call_outcome(record, outcome, now=now), base_updated_at=record.updated_at
    )


def _apply_call_outcome(
    record: TaskRecord, outcome: CallOutcome, *, now: datetime
) -> Reconciliation:
    if record.state is not LocalState.CREATING:
        return _unchanged(record, f"{record.state}: not waiting for a tools/call answer")
    match outcome:
        case TaskCreated(task=task, wire=wire):
            with_id = dataclasses.replace(record, task_id=task.task_id, wire=wire)
            return _apply_server_task(with_id, task, now=now, checked={})
        case ImmediateResult(result=result):
            done = record.transition(
                LocalState.COMPLETED,
                at=now,
                server_status="completed",
                reason="Answered at once, without a task.",
            )
            return Reconciliation(
                outcome=Outcome.TRANSITIONED,
                record=done,
                previous_state=record.state,
                result=result,
            )
        case CallRejected(error=error):
            failed = record.transition(
                LocalState.FAILED, at=now, reason=str(error.get("message", "rejected"))
            )
            return Reconciliation(
                outcome=Outcome.TRANSITIONED,
                record=failed,
                previous_state=record.state,
                error=error,
            )
        case NotSent(reason=reason) | AuthFailed(reason=reason):
            why = (
                f"Sign-in needed; nothing was run: {reason}"
                if isinstance(outcome, AuthFailed)
                else f"Not sent; nothing was run: {reason}"
            )
            failed = record.transition(LocalState.FAILED, at=now, reason=why)
            return Reconciliation(
                outcome=Outcome.TRANSITIONED,
                record=failed,
                previous_state=record.state,
                error={"code": NOT_SENT_CODE, "message": why},
            )
        case StoppedByUser(reason=reason):
            stopped = record.transition(LocalState.CANCELLED, at=now, reason=reason)
            return Reconciliation(
                outcome=Outcome.TRANSITIONED, record=stopped, previous_state=record.state
            )
        case NoAnswer(reason=reason):
            unknown = record.transition(
                LocalState.UNKNOWN_OUTCOME,
                at=now,
                reason=f"No answer from the server ({reason}); the call may or may not have run.",
            )
            return Reconciliation(
                outcome=Outcome.TRANSITIONED, record=unknown, previous_state=record.state
            )
