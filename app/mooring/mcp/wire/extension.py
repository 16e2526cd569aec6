"""The 2026-07-28 Tasks extension on one connection (messages: :mod:`mooring.mcp.tasks_ext`).

The extension is declared on every request (the connection's ``TasksClientExtension``); a
``tools/call`` answered ``resultType: "task"`` is claimed, not resolved: Mooring polls it.
``tasks/get`` carries the payload or the questions (``inputRequests``), answered with
``tasks/update``; changes are heard on the connection's ``subscriptions/listen`` stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import mcp.types as types
from mcp.client import Client
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared.exceptions import MCPError

from mooring.core.tasks.calls import AckOutcome, CallOutcome
from mooring.core.tasks.reconcile import Observation
from mooring.core.tasks.wire import TaskWire
from mooring.mcp import tasks_ext, translate
from mooring.mcp.requests import Abandoned, ProgressListener, Work
from mooring.mcp.wire import WireHost

_MAX_INPUT_ROUNDS: Final = 10
"""Multi-round-trip retries of one call at most (the SDK's and TypeScript SDK's default)."""


class ExtensionWire:
    """The ``io.modelcontextprotocol/tasks`` requests of one connection (a
    :class:`~mooring.mcp.wire.TaskWireStrategy`); also how a server without Tasks is called."""

    def __init__(self, host: WireHost) -> None:
        self._host = host

    @property
    def wire(self) -> TaskWire:
        return TaskWire.EXTENSION

    @property
    def busy(self) -> bool:
        """Never: nothing of this wire is held open but the listen stream, which the
        connection counts itself."""
        return False

    async def call(
        self,
        client: Client,
        tool: str,
        arguments: dict[str, Any],
        on_progress: ProgressListener | None,
        call_key: str | None,
    ) -> CallOutcome | Abandoned:
        """``tools/call`` declaring the extension: the server decides whether it makes a task."""
        responses: types.InputResponses | None = None
        state: str | None = None

        async def call(progress: Any) -> types.CallToolResult | types.Result:
            return await client.session.call_tool(
                tool,
                arguments,
                allow_claimed=True,
                allow_input_required=True,
                progress_callback=progress,
                input_responses=responses,
                request_state=state,
            )

        watched = self._host.calls.watched
        reply = await watched(call, on_progress, call_key)
        for _round in range(_MAX_INPUT_ROUNDS):
            if not isinstance(reply, types.InputRequiredResult):
                break
            # A 2026 server needs input before it runs the tool (multi-round-trip): the user
            # answers through the same handler as a 2025 server's mid-call requests, then the
            # call is retried with the answers (the tool has not run yet).
            responses = await _answer_inputs(client, reply)
            state = reply.request_state
            reply = await watched(call, on_progress, call_key)
        if isinstance(reply, Abandoned):
            return reply
        return translate.call_outcome(reply)

    async def get_task(self, task_id: str) -> Observation:
        """``tasks/get``, with the payload or the questions inlined."""

        async def send(client: Client) -> tasks_ext.GetTaskResult:
            return await tasks_ext.get_task(client.session, task_id)

        observed = self._host.observed
        return await self._host.submit(
            Work(
                "tasks/get",
                send,
                lambda reply: observed(task_id, translate.observation(reply, task_id=task_id)),
                lambda failure, _sent: observed(
                    task_id, translate.observation_from_failure(failure)
                ),
                self._host.settings.request_timeout,
            )
        )

    async def update_task(self, task_id: str, responses: dict[str, dict[str, Any]]) -> AckOutcome:
        """``tasks/update`` with answers by input-request key."""

        async def send(client: Client) -> tasks_ext.AckResult:
            return await tasks_ext.update_task(client.session, task_id, dict(responses))

        return await self._acknowledged("tasks/update", send)

    async def cancel_task(self, task_id: str) -> AckOutcome:
        """``tasks/cancel``: cooperative; the server reports the outcome through ``tasks/get``."""

        async def send(client: Client) -> tasks_ext.AckResult:
            return await tasks_ext.cancel_task(client.session, task_id)

        return await self._acknowledged("tasks/cancel", send)

    async def _acknowledged(
        self, label: str, send: Callable[[Client], Awaitable[tasks_ext.AckResult]]
    ) -> AckOutcome:
        return await self._host.submit(
            Work(
                label,
                send,
                lambda _ack: translate.ACKNOWLEDGED,
                lambda failure, _sent: translate.ack_from_failure(failure),
                self._host.settings.request_timeout,
            )
        )

    async def follow(self, session: ClientSession, over: Callable[[], bool]) -> None:
        """Hold the ``subscriptions/listen`` stream for the watched tasks."""
        await self._host.subscription.run(session, over)

    def observed(self, task_id: str, seen: Observation) -> None:
        """Nothing to note: the listen stream keeps its own record."""

    def session_ended(self) -> None:
        """Nothing of this wire outlives a request."""


async def _answer_inputs(client: Client, asked: types.InputRequiredResult) -> types.InputResponses:
    """Answer a multi-round-trip ``InputRequiredResult`` through the SDK's callback table
    (Mooring's sampling and elicitation handlers); a declined request fails the call."""
    responses: types.InputResponses = {}
    for key, request in (asked.input_requests or {}).items():
        meta = request.params.meta if request.params is not None else None
        context = ClientRequestContext(session=client.session, request_id=key, meta=meta)
        answer = await client.session.dispatch_input_request(context, request)
        if isinstance(answer, types.ErrorData):
            raise MCPError(answer.code, answer.message, answer.data)
        responses[key] = answer
    return responses
