"""The 2025-11-25 Tasks on one connection (messages: :mod:`mooring.mcp.tasks_legacy`).

A tool whose ``execution.taskSupport`` is ``optional`` or ``required`` is called with
``params.task``. ``tasks/get`` gives the bare status, ``tasks/result`` the payload; for
``input_required`` one ``tasks/result`` is held open, on which the server sends its questions as
``elicitation/create`` / ``sampling/createMessage`` requests (tagged ``related-task``, or
announced by a ``notifications/tasks/status`` just before: FastMCP 3.x). The questions wait here,
keyed by a digest of what is asked, until the user's answer comes through ``update_task``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any, Final

import anyio
import mcp.types as types
from mcp.client import Client
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from mooring.core.tasks.calls import (
    Acknowledged,
    AckOutcome,
    CallOutcome,
    ImmediateResult,
    RequestFailed,
    TaskCreated,
)
from mooring.core.tasks.reconcile import (
    MalformedReply,
    Observation,
    ServerTask,
    StatusUnavailable,
    TaskGone,
)
from mooring.core.tasks.wire import TaskWire
from mooring.mcp import tasks_legacy, translate
from mooring.mcp.requests import Abandoned, ProgressListener, Work
from mooring.mcp.wire import WireHost

logger = logging.getLogger("mooring.mcp.connection")

_ENDED: Final = frozenset({"completed", "failed", "cancelled"})
"""The 2025-11-25 task statuses that are final."""

_Payload = tuple[dict[str, Any] | None, dict[str, Any] | None]
"""``(result, error)`` of an ended task, as ``tasks/result`` answered."""


class LegacyWire:
    """The 2025-11-25 Tasks requests of one connection (a
    :class:`~mooring.mcp.wire.TaskWireStrategy`), the questions its tasks ask, and its status
    notifications."""

    def __init__(self, host: WireHost) -> None:
        self._host = host
        self._task_support: dict[str, str] = {}
        """Each listed tool's ``execution.taskSupport`` (``forbidden`` when it says none)."""
        self._questions = tasks_legacy.Questions()
        self._awaiting_input: dict[str, None] = {}
        """Tasks whose ``notifications/tasks/status`` said ``input_required`` and whose question
        has not come yet (in order): FastMCP 3.x then sends a plain ``elicitation/create``."""
        self._running: set[str] = set()
        """Tasks this connection has seen running (created here, or polled): the only ones
        whose announcements count."""
        self._says_status = False
        """Whether the server sends ``notifications/tasks/status`` on this session."""
        self._input_announced = anyio.Event()
        self._result_streams: dict[str, asyncio.Task[None]] = {}
        self._payloads: dict[str, _Payload] = {}

    @property
    def wire(self) -> TaskWire:
        return TaskWire.LEGACY

    @property
    def busy(self) -> bool:
        """Whether a task's ``tasks/result`` is held open."""
        return bool(self._result_streams)

    def tools_listed(self, tools: Sequence[types.Tool]) -> None:
        """Note how each tool takes tasks (its ``execution.taskSupport``)."""
        for tool in tools:
            execution = tool.execution
            support = execution.task_support if execution is not None else None
            self._task_support[tool.name] = support or "forbidden"

    def tools_changed(self) -> None:
        """The server's tool list changed: read each tool's task support again."""
        self._task_support.clear()

    # -- requests -------------------------------------------------------------------------------

    async def call(
        self,
        client: Client,
        tool: str,
        arguments: dict[str, Any],
        on_progress: ProgressListener | None,
        call_key: str | None,
    ) -> CallOutcome | Abandoned:
        """``tools/call`` with ``params.task`` when the tool takes one (Mooring prefers the task
        wherever the server offers both)."""
        if tool not in self._task_support:
            self.tools_listed((await client.list_tools(cache_mode="bypass")).tools)
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if self._task_support.get(tool) in tasks_legacy.TASK_SUPPORTING:
            params["task"] = {}
        raw = await self._host.calls.watched(
            lambda progress: tasks_legacy.send_raw(
                client.session, "tools/call", params, on_progress=progress
            ),
            on_progress,
            call_key,
        )
        if isinstance(raw, Abandoned):
            return raw
        created = tasks_legacy.created_task(raw)
        if created is not None:
            return TaskCreated(tasks_legacy.server_task(created), wire=TaskWire.LEGACY)
        result = types.CallToolResult.model_validate(raw)
        return ImmediateResult(result.model_dump(by_alias=True, mode="json", exclude_none=True))

    async def get_task(self, task_id: str) -> Observation:
        """``tasks/get``, plus ``tasks/result`` for what the bare ``Task`` leaves out: the payload
        of an ended task, the questions of one in ``input_required``."""

        settings = self._host.settings

        async def send(client: Client) -> Observation:
            raw = await tasks_legacy.send_raw(client.session, "tasks/get", {"taskId": task_id})
            try:
                task = tasks_legacy.parse_task(raw)
            except ValueError as exc:
                return MalformedReply(str(exc))
            if task.task_id != task_id:
                return MalformedReply(f"reply is about task {task.task_id!r}, not {task_id!r}")
            if task.status in ("completed", "failed"):
                result, error = await self._payload(client, task_id)
                if task.status == "failed" and error is None:
                    # The tool ended in error: the payload is its CallToolResult.
                    error = {
                        "code": translate.INTERNAL_ERROR,
                        "message": task.status_message or "The task failed.",
                        "data": result,
                    }
                return tasks_legacy.server_task(task, result=result, error=error)
            if task.status == "working" and (asked := self._questions.open(task_id)):
                # The server waits on a question it sent without saying its task (FastMCP
                # 3.x), and tasks/get does not say so: the task needs input all the same.
                requests = {k: {"method": q.method, "params": q.params} for k, q in asked.items()}
                task = task.model_copy(update={"status": "input_required"})
                return tasks_legacy.server_task(task, input_requests=requests)
            if task.status == "input_required":
                self._ensure_result_stream(task_id)
                asked = await self._questions.wait(task_id, None, settings.question_wait)
                if not asked:
                    return StatusUnavailable(
                        "the server says the task needs input but has not sent its question yet"
                    )
                requests = {k: {"method": q.method, "params": q.params} for k, q in asked.items()}
                return tasks_legacy.server_task(task, input_requests=requests)
            return tasks_legacy.server_task(task)

        return await self._host.submit(
            Work(
                "tasks/get",
                send,
                lambda seen: self._host.observed(task_id, seen),
                lambda failure, _sent: translate.observation_from_failure(failure),
                settings.request_timeout + settings.question_wait,
            )
        )

    async def _payload(self, client: Client, task_id: str) -> _Payload:
        """``(result, error)`` of an ended task: from the held stream, or ``tasks/result``."""
        if task_id not in self._payloads:
            await self._fetch_payload(client, task_id)
        return self._payloads[task_id]

    async def _fetch_payload(self, client: Client, task_id: str) -> None:
        """``tasks/result``: the server answers once the task ended (and meanwhile asks its
        questions on it)."""
        try:
            raw = await tasks_legacy.send_raw(client.session, "tasks/result", {"taskId": task_id})
        except MCPError as exc:
            if exc.code == translate.CONNECTION_CLOSED:
                raise
            self._payloads[task_id] = (None, translate.error_dict(exc))
        else:
            self._payloads[task_id] = (_without_related_task(raw), None)

    def _ensure_result_stream(self, task_id: str) -> None:
        """Hold one ``tasks/result`` open per task: the server asks its questions on it and
        answers it with the payload once the task ends."""
        running = self._result_streams.get(task_id)
        if running is not None and not running.done():
            return
        alias = self._host.server.alias

        async def hold() -> None:
            await self._host.submit(
                Work(
                    "tasks/result",
                    lambda client: self._fetch_payload(client, task_id),
                    lambda _none: None,
                    lambda failure, _sent: logger.info(
                        "%s: tasks/result for %s ended: %s", alias, task_id, failure.reason
                    ),
                    self._host.settings.result_stream_timeout,
                )
            )
            if task_id in self._payloads:
                await self._host.subscription.hint(task_id)  # the task ended: poll it now

        stream = asyncio.get_running_loop().create_task(hold(), name=f"tasks/result:{alias}")
        self._result_streams[task_id] = stream
        stream.add_done_callback(lambda _t: self._forget_stream(task_id, stream))

    def _forget_stream(self, task_id: str, stream: asyncio.Task[None]) -> None:
        if self._result_streams.get(task_id) is stream:
            del self._result_streams[task_id]
        if not stream.cancelled() and stream.exception() is not None:
            logger.error("tasks/result stream failed", exc_info=stream.exception())

    async def update_task(self, task_id: str, responses: dict[str, dict[str, Any]]) -> AckOutcome:
        """Reply to the questions the task asked (asking the server to ask again, on a new
        ``tasks/result``, when this connection has not heard them: after a restart)."""
        for key, answer in responses.items():
            asked = self._questions.open(task_id)
            if key not in asked:
                self._ensure_result_stream(task_id)
                asked = await self._questions.wait(task_id, key, self._host.settings.question_wait)
            if key not in asked:
                return RequestFailed("the server is not asking this question right now")
            asked[key].give(answer)
        return translate.ACKNOWLEDGED

    async def cancel_task(self, task_id: str) -> AckOutcome:
        """``tasks/cancel``; a task that already ended is refused with ``-32602``, which is not
        "gone" when ``tasks/get`` still knows it (the next poll shows how it ended)."""

        async def send(client: Client) -> Acknowledged:
            try:
                await tasks_legacy.send_raw(client.session, "tasks/cancel", {"taskId": task_id})
            except MCPError as exc:
                if exc.code != translate.INVALID_PARAMS:
                    raise
                try:
                    await tasks_legacy.send_raw(client.session, "tasks/get", {"taskId": task_id})
                except MCPError:
                    raise exc from None
            return translate.ACKNOWLEDGED

        return await self._host.submit(
            Work(
                "tasks/cancel",
                send,
                lambda ack: ack,
                lambda failure, _sent: translate.ack_from_failure(failure),
                self._host.settings.request_timeout,
            )
        )

    async def follow(self, session: ClientSession, over: Callable[[], bool]) -> None:
        """Nothing to hold: this wire's status notifications come on any stream."""

    # -- what the server says of its tasks ------------------------------------------------------

    def observed(self, task_id: str, seen: Observation) -> None:
        """Watch the tasks that are still running; forget ended or unknown ones."""
        if isinstance(seen, ServerTask) and seen.status not in _ENDED:
            self._running.add(task_id)
        elif isinstance(seen, TaskGone | ServerTask):
            self._running.discard(task_id)
            self._awaiting_input.pop(task_id, None)

    def status_said(self, task_id: str, status: str | None) -> None:
        """A ``notifications/tasks/status``: note a task that announced ``input_required``
        until its question comes or it ends (FastMCP 3.x may say ``working`` in between)."""
        self._says_status = True
        if task_id not in self._running:
            return
        if status in _ENDED:
            self._awaiting_input.pop(task_id, None)
        elif status == "input_required":
            self._awaiting_input[task_id] = None
            self._input_announced.set()
            self._input_announced = anyio.Event()

    async def task_asking(self, meta: Any, body: dict[str, Any]) -> str | None:
        """The task a server's question is about: the one its related-task ``_meta`` names, or
        else the one that announced ``input_required`` just before, if one did (the oldest
        waiting; a task of a server that announces gets a moment to); ``None``: a plain call's.
        """
        task_id = tasks_legacy.related_task(meta) or tasks_legacy.related_task(body.get("_meta"))
        if task_id is not None:
            self._awaiting_input.pop(task_id, None)
            return task_id
        if not self._awaiting_input and self._says_status and self._running:
            announced = self._input_announced
            with anyio.move_on_after(self._host.settings.announce_wait):
                await announced.wait()
        if not self._awaiting_input:
            return None
        task_id = next(iter(self._awaiting_input))
        del self._awaiting_input[task_id]
        return task_id

    async def ask(self, task_id: str, method: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """Keep a task's question until the user answers it through the ledger; the answer."""
        question = self._questions.ask(task_id, method, body)
        try:
            await self._host.subscription.hint(task_id)  # the monitor asks tasks/get, sees it
            await question.answered.wait()
            return question.answer
        finally:
            self._questions.settle(task_id, question)

    def session_ended(self) -> None:
        """The server's questions died with the session; it asks again on the next one."""
        self._questions.clear()
        self._awaiting_input.clear()
        self._running.clear()
        self._says_status = False
        self._payloads.clear()


def _without_related_task(raw: dict[str, Any]) -> dict[str, Any]:
    """A ``tasks/result`` payload as the original call would have returned it."""
    meta = raw.get("_meta")
    if isinstance(meta, dict) and tasks_legacy.RELATED_TASK in meta:
        meta = {k: v for k, v in meta.items() if k != tasks_legacy.RELATED_TASK}
        raw = {**raw, "_meta": meta} if meta else {k: v for k, v in raw.items() if k != "_meta"}
    return raw
