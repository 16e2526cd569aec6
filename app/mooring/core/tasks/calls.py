"""What came of sending one ``tools/call``: the outcomes the wire layer reports.

The distinction that matters most is whether the request may have reached the server:
:class:`NotSent` is safe to report as a failure; :class:`NoAnswer` is an *unknown outcome* and
must never be retried blindly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mooring.core.tasks.wire import TaskWire

if TYPE_CHECKING:  # annotation only
    from mooring.core.tasks.observations import ServerTask


@dataclass(frozen=True, slots=True)
class TaskCreated:
    """The server turned the call into a task (``CreateTaskResult``); it is durable there."""

    task: ServerTask
    wire: TaskWire = TaskWire.EXTENSION


@dataclass(frozen=True, slots=True)
class ImmediateResult:
    """A plain ``CallToolResult`` (possibly ``isError: true``) with no task."""

    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CallRejected:
    """A JSON-RPC error answered the call: it did not run."""

    error: dict[str, Any]


@dataclass(frozen=True, slots=True)
class NotSent:
    """The request never left (no connection, server not started): nothing ran."""

    reason: str


@dataclass(frozen=True, slots=True)
class NoAnswer:
    """The request was (or may have been) sent, and no answer came: the outcome is unknown."""

    reason: str


@dataclass(frozen=True, slots=True)
class AuthFailed:
    """The server refused the credentials before running anything (HTTP 401/403)."""

    reason: str


@dataclass(frozen=True, slots=True)
class StoppedByUser:
    """The user stopped a plain call in flight; the server was told (``notifications/cancelled``)
    and may have done part of the work."""

    reason: str


CallOutcome = (
    TaskCreated | ImmediateResult | CallRejected | NotSent | NoAnswer | AuthFailed | StoppedByUser
)


@dataclass(frozen=True, slots=True)
class Progress:
    """One ``notifications/progress`` of a plain call: a sign of life, with what it says."""

    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class Acknowledged:
    """``tasks/update`` or ``tasks/cancel`` was acknowledged by the server."""


@dataclass(frozen=True, slots=True)
class RequestFailed:
    """``tasks/update`` or ``tasks/cancel`` failed; ``gone`` when the server no longer knows the
    task (``-32602``), ``auth`` when credentials were refused."""

    reason: str
    gone: bool = False
    auth: bool = False


AckOutcome = Acknowledged | RequestFailed
