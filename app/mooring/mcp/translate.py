"""Wire → core: what an MCP reply or failure means, in Mooring's own vocabulary.

Every classification of SDK exceptions lives here, where the I/O's failure modes are known:

* a ``DetailedTask`` becomes a :class:`~mooring.core.tasks.reconcile.ServerTask` with aware UTC
  datetimes, or a :class:`MalformedReply` when its shape is wrong;
* ``-32602`` on a task request means the server no longer knows the task (:class:`TaskGone`);
* HTTP 401/403 means the credentials were refused (:class:`AuthRequired`), never a failed task;
* a timeout, a dead transport, ``-32000 Connection closed`` or a cancellation caused by a dying
  transport means the status is unavailable (or, for ``tools/call``, that the outcome is unknown).

Nothing here performs I/O; :mod:`mooring.mcp.connection` supplies the exception and the HTTP
statuses it saw while the request was in flight.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import anyio
import httpx2
import mcp.types as types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from mooring.core.clock import parse_timestamp
from mooring.core.tasks.calls import (
    Acknowledged,
    AckOutcome,
    AuthFailed,
    CallOutcome,
    CallRejected,
    ImmediateResult,
    NoAnswer,
    NotSent,
    RequestFailed,
    TaskCreated,
)
from mooring.core.tasks.reconcile import (
    AuthRequired,
    MalformedReply,
    Observation,
    ServerTask,
    StatusUnavailable,
    TaskGone,
)
from mooring.core.tools import ToolAnnotations, ToolInfo
from mooring.mcp.tasks_ext import CreateTaskResult, GetTaskResult

INVALID_PARAMS: Final = -32602
CONNECTION_CLOSED: Final = -32000
REQUEST_TIMEOUT: Final = -32001
PARSE_ERROR: Final = -32700
INTERNAL_ERROR: Final = -32603

KNOWN_STATUSES: Final = frozenset({"working", "input_required", "completed", "failed", "cancelled"})
AUTH_STATUSES: Final = frozenset({401, 403})

_SYNTHESIZED_HTTP_ERROR: Final = "Server returned an error response"


class FailureKind(StrEnum):
    """What a failed request says about the server and the request."""

    REJECTED = "rejected"
    """The server answered with a JSON-RPC error."""
    GONE = "gone"
    """The server answered ``-32602``: it does not know the task (or the params)."""
    AUTH = "auth"
    """The server refused the credentials (HTTP 401/403)."""
    TRANSPORT = "transport"
    """No answer: the connection failed, closed, or the deadline passed."""
    MALFORMED = "malformed"
    """The server answered something that is not a valid reply."""


@dataclass(frozen=True, slots=True)
class Failure:
    """A classified request failure with a human reason and, when there was one, the error."""

    kind: FailureKind
    reason: str
    error: dict[str, Any] | None = None


def leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside ``exc`` (itself if it is not a group), depth first."""
    if isinstance(exc, BaseExceptionGroup):
        leaves: list[BaseException] = []
        for inner in exc.exceptions:
            leaves.extend(leaf_exceptions(inner))
        return leaves
    return [exc]


def root_cause(exc: BaseException) -> BaseException:
    """The most telling exception inside a (possibly nested) group: not a cancellation."""
    leaves = leaf_exceptions(exc)
    for leaf in leaves:
        if not isinstance(leaf, anyio.get_cancelled_exc_class()):
            return leaf
    return leaves[0] if leaves else exc


def error_dict(exc: MCPError) -> dict[str, Any]:
    """The JSON-RPC error object of an ``MCPError`` (``data`` only when present)."""
    error: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if exc.error.data is not None:
        error["data"] = exc.error.data
    return error


def _final_status(http_statuses: Iterable[int]) -> int | None:
    """The error status of the last response, if it was one.

    Only the last response counts: a 401 that an OAuth refresh recovered from is followed by
    a successful response, and must not turn the request's real outcome into "sign-in needed".
    """
    statuses = list(http_statuses)
    if not statuses or statuses[-1] < 400:
        return None
    return statuses[-1]


def describe_exception(exc: BaseException) -> str:
    """A one-line human description of a transport-level exception."""
    cause = root_cause(exc)
    if isinstance(cause, FileNotFoundError):
        return f"the command was not found ({cause.filename or cause})"
    if isinstance(cause, PermissionError):
        return f"the command could not be run: permission denied ({cause.filename or cause})"
    if isinstance(cause, httpx2.ConnectError):
        return f"could not connect: {cause}" if str(cause) else "could not connect"
    if isinstance(cause, httpx2.TimeoutException):
        return "the HTTP request timed out"
    if isinstance(cause, httpx2.HTTPError):
        return f"HTTP transport error: {type(cause).__name__}: {cause}".rstrip(": ")
    if isinstance(cause, MCPError):
        if cause.code == CONNECTION_CLOSED:
            return "the connection closed"
        return f"error {cause.code}: {cause.message}"
    if isinstance(cause, TimeoutError):
        return "no answer in time"
    if isinstance(cause, anyio.get_cancelled_exc_class()):
        return "the transport stopped"
    if isinstance(cause, OSError):
        return f"{type(cause).__name__}: {cause.strerror or cause}"
    text = str(cause)
    return f"{type(cause).__name__}: {text}" if text else type(cause).__name__


def classify(exc: BaseException, *, http_statuses: Sequence[int] = ()) -> Failure | None:
    """Classify a request's exception; ``None`` for exceptions that are not about the server.

    ``http_statuses`` are the HTTP statuses seen while the request was in flight (empty on
    stdio). An unclassified exception is a bug in Mooring, and the caller re-raises it.
    """
    status = _final_status(http_statuses)
    if status in AUTH_STATUSES:
        return Failure(FailureKind.AUTH, f"the server refused the credentials (HTTP {status})")
    cause = root_cause(exc)
    if isinstance(cause, MCPError):
        error = error_dict(cause)
        if cause.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
            return Failure(FailureKind.TRANSPORT, describe_exception(cause), error)
        if cause.code == PARSE_ERROR:
            return Failure(FailureKind.MALFORMED, f"unreadable reply: {cause.message}", error)
        if status is not None and status >= 500 and cause.message == _SYNTHESIZED_HTTP_ERROR:
            return Failure(FailureKind.TRANSPORT, f"the server answered HTTP {status}", error)
        if cause.code == INVALID_PARAMS:
            return Failure(FailureKind.GONE, cause.message, error)
        return Failure(FailureKind.REJECTED, f"error {cause.code}: {cause.message}", error)
    if isinstance(cause, ValidationError):
        return Failure(FailureKind.MALFORMED, _validation_summary(cause))
    if isinstance(
        cause,
        TimeoutError
        | OSError
        | httpx2.HTTPError
        | anyio.BrokenResourceError
        | anyio.ClosedResourceError
        | anyio.EndOfStream
        | anyio.get_cancelled_exc_class(),
    ):
        return Failure(FailureKind.TRANSPORT, describe_exception(cause))
    return None


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "reply"
        parts.append(f"{where}: {error['msg']}")
    return "invalid reply (" + "; ".join(parts) + ")"


# -- task snapshots ---------------------------------------------------------------------------


def _timestamp(value: str | None, field: str, *, strict: bool) -> Any:
    if value is None:
        if strict:
            raise ValueError(f"{field} is missing")
        return None
    try:
        return parse_timestamp(value)
    except ValueError:
        if strict:
            raise ValueError(f"{field} is not a timestamp: {value!r}") from None
        return None


def _json_object_map(value: Any, field: str) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, Mapping) for k, v in value.items()
    ):
        raise ValueError(f"{field} is not an object of objects")
    return {str(k): dict(v) for k, v in value.items()}


def _json_object(value: Any, field: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"{field} is not an object")
    return dict(value)


def server_task(reply: GetTaskResult | CreateTaskResult, *, strict: bool) -> ServerTask:
    """The core snapshot of a task reply. Raises ``ValueError`` when its shape is wrong.

    ``strict`` (``tasks/get``) requires parseable ``createdAt``/``lastUpdatedAt`` and a known
    status. A ``CreateTaskResult`` is read leniently: losing its task id over a bad timestamp
    would be worse than not knowing when the task was created.
    """
    if not reply.task_id:
        raise ValueError("taskId is empty")
    if strict and reply.status not in KNOWN_STATUSES:
        raise ValueError(f"unknown status {reply.status!r}")
    for name in ("ttl_ms", "poll_interval_ms"):
        value = getattr(reply, name)
        if value is not None and value < 0 and strict:
            raise ValueError(f"{name} is negative")
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] = {}
    if isinstance(reply, GetTaskResult):
        result = _json_object(reply.result, "result")
        error = _json_object(reply.error, "error")
        input_requests = _json_object_map(reply.input_requests, "inputRequests")
    return ServerTask(
        task_id=reply.task_id,
        status=reply.status,
        status_message=reply.status_message,
        created_at=_timestamp(reply.created_at, "createdAt", strict=strict),
        last_updated_at=_timestamp(reply.last_updated_at, "lastUpdatedAt", strict=strict),
        ttl_ms=reply.ttl_ms,
        poll_interval_ms=reply.poll_interval_ms,
        result=result,
        error=error,
        input_requests=input_requests,
    )


def observation(reply: GetTaskResult, *, task_id: str) -> Observation:
    """What a ``tasks/get`` answer for ``task_id`` says."""
    if reply.task_id != task_id:
        return MalformedReply(f"reply is about task {reply.task_id!r}, not {task_id!r}")
    try:
        return server_task(reply, strict=True)
    except ValueError as exc:
        return MalformedReply(str(exc))


def observation_from_failure(failure: Failure) -> Observation:
    """What a failed ``tasks/get`` says."""
    match failure.kind:
        case FailureKind.GONE:
            return TaskGone(failure.reason)
        case FailureKind.AUTH:
            return AuthRequired(failure.reason)
        case FailureKind.MALFORMED:
            return MalformedReply(failure.reason)
        case FailureKind.TRANSPORT:
            return StatusUnavailable(failure.reason)
        case FailureKind.REJECTED:
            return StatusUnavailable(f"the server answered {failure.reason}")


# -- tools/call -------------------------------------------------------------------------------


def call_outcome(result: types.CallToolResult | types.Result) -> CallOutcome:
    """What a ``tools/call`` answer means."""
    if isinstance(result, CreateTaskResult):
        try:
            return TaskCreated(server_task(result, strict=False))
        except ValueError as exc:
            return NoAnswer(f"the server created a task but its reply is unusable: {exc}")
    if isinstance(result, types.CallToolResult):
        return ImmediateResult(result.model_dump(by_alias=True, mode="json", exclude_none=True))
    if isinstance(result, types.InputRequiredResult):
        return CallRejected(
            {
                "code": -32600,
                "message": "The server kept asking for input before running the tool "
                "(more rounds than Mooring answers); the tool did not run.",
                "data": result.model_dump(by_alias=True, mode="json", exclude_none=True),
            }
        )
    return NoAnswer(f"unexpected reply type {type(result).__name__}")


def call_outcome_from_failure(failure: Failure, *, sent: bool) -> CallOutcome:
    """What a failed ``tools/call`` means; ``sent`` once it was handed to the SDK."""
    match failure.kind:
        case FailureKind.AUTH:
            return AuthFailed(failure.reason)
        case FailureKind.REJECTED | FailureKind.GONE if failure.error is not None:
            return CallRejected(failure.error)
        case _ if not sent:
            return NotSent(failure.reason)
        case _:
            return NoAnswer(failure.reason)


def ack_from_failure(failure: Failure) -> AckOutcome:
    """What a failed ``tasks/update`` or ``tasks/cancel`` means."""
    return RequestFailed(
        failure.reason,
        gone=failure.kind is FailureKind.GONE,
        auth=failure.kind is FailureKind.AUTH,
    )


ACKNOWLEDGED: Final = Acknowledged()


# -- tools/list -------------------------------------------------------------------------------


def tool_info(server_id: str, tool: types.Tool) -> ToolInfo:
    """A listed tool as core sees it (annotations are the server's claims)."""
    hints = tool.annotations
    annotations = (
        ToolAnnotations(
            read_only=hints.read_only_hint,
            destructive=hints.destructive_hint,
            idempotent=hints.idempotent_hint,
            open_world=hints.open_world_hint,
        )
        if hints is not None
        else ToolAnnotations()
    )
    title = tool.title or (hints.title if hints is not None else None)
    return ToolInfo(
        server_id=server_id,
        name=tool.name,
        title=title,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        annotations=annotations,
    )
