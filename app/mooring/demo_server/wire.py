"""Wire constants and shapes of the Tasks extension (SEP-2663) that the server emits."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
MODERN_PROTOCOL: Final = "2026-07-28"

INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
ACTIVE_STATUSES: Final[frozenset[str]] = frozenset({"working", "input_required"})
TERMINAL_STATUSES: Final[frozenset[str]] = frozenset({"completed", "failed", "cancelled"})

TASK_SUPPORT_META_KEY: Final = "dev.mooring/taskSupport"
"""Tool ``_meta`` key naming how a tool uses tasks: ``required`` or ``optional`` (not on the wire
spec; a hint for hosts, since 2026-07-28 dropped ``execution.taskSupport``)."""

NOT_FOUND_MESSAGE: Final = "Failed to retrieve task: Task not found"
EXPIRED_MESSAGE: Final = "Failed to retrieve task: Task has expired"


def now_ms() -> int:
    """Wall-clock milliseconds since the epoch (task timestamps are shared across processes)."""
    return time.time_ns() // 1_000_000


def iso_ms(epoch_ms: int) -> str:
    """ISO 8601 UTC timestamp with millisecond precision, as the spec's examples show."""
    stamp = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TaskIdParams(BaseModel):
    """Params of ``tasks/get`` and ``tasks/cancel``."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    task_id: str = Field(alias="taskId")


class UpdateTaskParams(BaseModel):
    """Params of ``tasks/update``: answers to outstanding ``inputRequests`` keys."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    task_id: str = Field(alias="taskId")
    input_responses: dict[str, Any] = Field(default_factory=dict, alias="inputResponses")


def required_extension_error_data() -> dict[str, Any]:
    """``error.data`` of a ``-32021`` naming the Tasks extension."""
    return {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
