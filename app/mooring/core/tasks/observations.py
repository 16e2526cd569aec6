"""What one look at a server said about one task: the observations reconciliation consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerTask:
    """A task snapshot as the server reported it (``tasks/get`` or ``CreateTaskResult``)."""

    task_id: str
    status: str
    status_message: str | None = None
    created_at: datetime | None = None
    last_updated_at: datetime | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: JsonObject | None = None
    error: JsonObject | None = None
    input_requests: dict[str, JsonObject] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TaskGone:
    """The server answered that it does not know the task (``-32602``): expired or purged."""

    reason: str


@dataclass(frozen=True, slots=True)
class StatusUnavailable:
    """The status request failed (transport error, timeout, server error)."""

    reason: str


@dataclass(frozen=True, slots=True)
class AuthRequired:
    """The server refused our credentials for the status request."""

    reason: str


@dataclass(frozen=True, slots=True)
class MalformedReply:
    """The server answered with something that is not a valid task status."""

    detail: str


Observation = ServerTask | TaskGone | StatusUnavailable | AuthRequired | MalformedReply
