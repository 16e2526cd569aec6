"""The client half of the MCP Tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663).

``mcp`` 2.3.0 ships no tasks runtime, only the generic extension hooks; this module fills the gap
with what a *host* needs and nothing more:

* :class:`TasksClientExtension` declares the extension on every request and claims
  ``resultType: "task"`` on ``tools/call``. Its resolver never polls: Mooring's own task monitor
  does that, durably, so calls go through ``session.call_tool(..., allow_claimed=True)`` and get
  the :class:`CreateTaskResult` back.
* Typed ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` requests whose ``name_param`` is
  ``taskId``, so the SDK stamps ``Mcp-Name: <taskId>`` on Streamable HTTP (SEP-2243).
* A ``subscriptions/listen`` request carrying ``taskIds`` and a ``notifications/tasks`` binding.
  A frame carries the full ``DetailedTask`` (what ``tasks/get`` would answer at that moment), so
  it is handed on whole; :mod:`mooring.mcp.task_listen` decides what it means.

Wire models accept unknown fields and keep ``status`` a plain string: judging whether a reply
makes sense is :mod:`mooring.mcp.translate`'s job, not a parse error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Literal

import mcp.types as types
from mcp.client import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from mcp.client.session import ClientSession
from pydantic import BaseModel, ConfigDict, Field

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The extension identifier, in capability ads and ``server/discover``."""

TASK_NOTIFICATION: Final = "notifications/tasks"
LEGACY_TASK_NOTIFICATION: Final = "notifications/tasks/status"


class TaskIdParams(types.RequestParams):
    """Params of ``tasks/get`` and ``tasks/cancel``."""

    task_id: str


class UpdateTaskParams(types.RequestParams):
    """Params of ``tasks/update``: answers to outstanding ``inputRequests`` keys."""

    task_id: str
    input_responses: dict[str, Any]


class GetTaskRequest(types.Request[TaskIdParams, Literal["tasks/get"]]):
    """``tasks/get``: the authoritative, idempotent read of one task."""

    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class UpdateTaskRequest(types.Request[UpdateTaskParams, Literal["tasks/update"]]):
    """``tasks/update``: deliver input responses (eventually consistent)."""

    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams
    name_param = "taskId"


class CancelTaskRequest(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    """``tasks/cancel``: ask for cooperative cancellation (eventually consistent)."""

    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


class _TaskFields(types.Result):
    """The ``Task`` fields shared by ``CreateTaskResult`` and ``DetailedTask``."""

    model_config = ConfigDict(extra="allow")

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class CreateTaskResult(_TaskFields):
    """A ``tools/call`` answered with a task (``resultType: "task"``)."""

    result_type: Literal["task"] = "task"


class GetTaskResult(_TaskFields):
    """A ``tasks/get`` answer: ``Result & DetailedTask``.

    ``result``, ``error`` and ``inputRequests`` are kept as raw JSON; their shape is checked in
    :mod:`mooring.mcp.translate`.
    """

    result_type: str = "complete"
    result: Any = None
    error: Any = None
    input_requests: Any = None


class AckResult(types.Result):
    """The empty acknowledgement of ``tasks/update`` and ``tasks/cancel``."""

    model_config = ConfigDict(extra="allow")

    result_type: str = "complete"


class TaskNotificationParams(GetTaskResult):
    """``notifications/tasks`` params: a full ``DetailedTask`` (the shape of a ``tasks/get``
    answer, without ``resultType``). A frame without a ``taskId`` or ``status`` fails validation
    and is dropped by the SDK; other fields are judged in :mod:`mooring.mcp.translate`."""


class LegacyTaskNotificationParams(BaseModel):
    """The 2025-11-25 ``notifications/tasks/status`` params: the id (a hint) and the status
    (``input_required`` announces a question the server may send without saying its task)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    task_id: str = Field(alias="taskId")
    status: str | None = None


class TaskClaimNotPolled(RuntimeError):
    """Raised if ``Client.call_tool`` ever tries to resolve a task transparently.

    Mooring polls tasks itself (durably, across restarts); a transparent resolver that polls
    in-process would hide the task id. Calls must use ``allow_claimed=True``.
    """


TaskFrameHandler = Callable[[TaskNotificationParams], Awaitable[None]]
"""Called with each ``notifications/tasks`` frame (a full ``DetailedTask``)."""

TaskHintHandler = Callable[[str], Awaitable[None]]
"""Called with the task id of each 2025-11-25 ``notifications/tasks/status`` hint."""

TaskStatusSaid = Callable[[str, str | None], None]
"""Told ``(task id, status)`` of each 2025-11-25 ``notifications/tasks/status``, before the hint
is followed."""


class TasksClientExtension(ClientExtension):
    """Declares ``io.modelcontextprotocol/tasks`` on every request and claims task results.

    The claim hands the :class:`CreateTaskResult` back to the caller instead of resolving it;
    ``notifications/tasks`` frames go whole to ``on_task_frame``, and the 2025-11-25
    ``notifications/tasks/status`` hints to ``on_task_hint`` by task id.
    """

    identifier = TASKS_EXTENSION

    def __init__(
        self,
        on_task_frame: TaskFrameHandler | None = None,
        on_task_hint: TaskHintHandler | None = None,
        on_task_status: TaskStatusSaid | None = None,
    ) -> None:
        self._on_task_frame = on_task_frame
        self._on_task_hint = on_task_hint
        self._on_task_status = on_task_status

    def claims(self) -> Sequence[ResultClaim[Any]]:
        """Claim ``resultType: "task"`` on ``tools/call``."""
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self._resolve)]

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        """Observe ``notifications/tasks`` (only delivered on a ``subscriptions/listen`` stream)
        and the 2025-11-25 ``notifications/tasks/status``."""
        return [
            NotificationBinding(
                method=TASK_NOTIFICATION, params_type=TaskNotificationParams, handler=self._frame
            ),
            # The 2025-11-25 wire's name for the same hint (a bare Task, on any stream).
            NotificationBinding(
                method=LEGACY_TASK_NOTIFICATION,
                params_type=LegacyTaskNotificationParams,
                handler=self._hint,
            ),
        ]

    async def _resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
        raise TaskClaimNotPolled(
            f"task {created.task_id} must be monitored by the host; call with allow_claimed=True"
        )

    async def _frame(self, params: TaskNotificationParams) -> None:
        if self._on_task_frame is not None:
            await self._on_task_frame(params)

    async def _hint(self, params: LegacyTaskNotificationParams) -> None:
        if self._on_task_status is not None:
            self._on_task_status(params.task_id, params.status)
        if self._on_task_hint is not None:
            await self._on_task_hint(params.task_id)


async def get_task(session: ClientSession, task_id: str) -> GetTaskResult:
    """Send ``tasks/get``. Raises what ``ClientSession.send_request`` raises.

    No deadline of its own: callers put one around every request (keep-alive pings stop the
    HTTP read timeout from ever firing).
    """
    return await session.send_request(
        GetTaskRequest(params=TaskIdParams(task_id=task_id)), GetTaskResult
    )


async def update_task(
    session: ClientSession, task_id: str, input_responses: dict[str, Any]
) -> AckResult:
    """Send ``tasks/update`` with answers by input-request key."""
    params = UpdateTaskParams(task_id=task_id, input_responses=input_responses)
    return await session.send_request(UpdateTaskRequest(params=params), AckResult)


async def cancel_task(session: ClientSession, task_id: str) -> AckResult:
    """Send ``tasks/cancel``."""
    return await session.send_request(
        CancelTaskRequest(params=TaskIdParams(task_id=task_id)), AckResult
    )


async def listen_for_tasks(session: ClientSession, task_ids: Sequence[str]) -> None:
    """Hold a ``subscriptions/listen`` stream open for ``task_ids`` until cancelled.

    Frames arrive through :class:`TasksClientExtension`'s binding. ``Client.listen()`` only
    accepts the four core filters, so the request is built here; the SDK's ``SubscriptionFilter``
    allows extra keys, which is how ``taskIds`` rides along. Returns when the server ends the
    stream; raises what ``send_request`` raises.
    """
    request = types.SubscriptionsListenRequest(
        params=types.SubscriptionsListenRequestParams(
            # An extra key, not a subclass field: extras survive the SDK's model_dump.
            notifications=types.SubscriptionFilter.model_validate({"taskIds": list(task_ids)})
        )
    )
    await session.send_request(request, types.SubscriptionsListenResult)
