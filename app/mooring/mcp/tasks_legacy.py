"""The client half of the experimental 2025-11-25 Tasks (SEP-1686), as most servers speak it.

The TypeScript SDK 1.x, ``mcp`` 1.23 to 1.30 and ``fastmcp`` 2.14 to 3.x servers (and the reference
"everything" server) implement this older wire. It differs from the 2026 extension
(:mod:`mooring.mcp.tasks_ext`) in every message:

* negotiated by ``initialize``: protocol ``2025-11-25`` and ``capabilities.tasks.requests.tools
  .call``; a tool opts in with ``execution.taskSupport`` (``optional`` / ``required``);
* the client asks for a task with ``params.task`` on ``tools/call`` and gets ``{"task": {...}}``
  back (``ttl`` / ``pollInterval``, no ``resultType``);
* ``tasks/get`` returns the bare ``Task``; the payload comes from ``tasks/result``, which blocks
  until the task ends and, meanwhile, is the stream on which the server sends its
  ``elicitation/create`` / ``sampling/createMessage`` requests for ``input_required`` (tagged
  with ``_meta["io.modelcontextprotocol/related-task"]``);
* ``tasks/cancel`` returns the ``Task`` and rejects a task that already ended with ``-32602``;
* ``notifications/tasks/status`` carries a ``Task`` on any stream.

``mcp`` 2.3.0 keeps only the *types* of this wire and validates a ``tools/call`` reply as a
``CallToolResult``, so a ``{"task": ...}`` reply cannot pass ``ClientSession.send_request``.
:func:`send_raw` is the one place Mooring goes around that: it stamps the request exactly as the
session does and reads the reply as raw JSON, which this module then checks itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import CallOptions, ProgressFnT
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mooring.core.clock import parse_timestamp
from mooring.core.tasks.reconcile import ServerTask

LEGACY_VERSION: Final = "2025-11-25"
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
STATUS_NOTIFICATION: Final = "notifications/tasks/status"
TASK_SUPPORTING: Final = frozenset({"optional", "required"})


async def send_raw(
    session: ClientSession,
    method: str,
    params: dict[str, Any] | None,
    *,
    on_progress: ProgressFnT | None = None,
) -> dict[str, Any]:
    """Send one request as ``ClientSession.send_request`` would, minus result validation.

    The narrowest way around the SDK (see module docstring): the session's own stamp adds the
    protocol headers and ``_meta`` it adds to every request; the reply is returned unparsed.
    Raises what the dispatcher raises (``MCPError`` for an error reply or a closed connection).
    """
    data: dict[str, Any] = {"method": method, "params": params}
    opts: CallOptions = {}
    if on_progress is not None:
        opts["on_progress"] = on_progress
    session._stamp(data, opts)
    return await session._dispatcher.send_raw_request(method, data.get("params"), opts)


def supports_tool_tasks(capabilities: Mapping[str, Any] | None) -> bool:
    """Whether a 2025-11-25 server's ``capabilities`` offer tasks for ``tools/call``."""
    if not isinstance(capabilities, Mapping):
        return False
    tasks = capabilities.get("tasks")
    if not isinstance(tasks, Mapping):
        return False
    requests = tasks.get("requests")
    tools = requests.get("tools") if isinstance(requests, Mapping) else None
    return isinstance(tools, Mapping) and "call" in tools


class LegacyTask(BaseModel):
    """A 2025-11-25 ``Task`` (``tasks/get`` result, ``CreateTaskResult.task``, notifications)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    task_id: str = Field(alias="taskId")
    status: str
    status_message: str | None = Field(default=None, alias="statusMessage")
    created_at: str | None = Field(default=None, alias="createdAt")
    last_updated_at: str | None = Field(default=None, alias="lastUpdatedAt")
    ttl: int | None = None
    poll_interval: int | None = Field(default=None, alias="pollInterval")


def parse_task(raw: Any) -> LegacyTask:
    """A ``Task`` from raw JSON. Raises ``ValueError`` when its shape is wrong."""
    try:
        task = LegacyTask.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "task"
        raise ValueError(f"invalid task ({where}: {first['msg']})") from None
    if not task.task_id:
        raise ValueError("taskId is empty")
    return task


def created_task(raw: Mapping[str, Any]) -> LegacyTask | None:
    """The task of a ``tools/call`` reply ``{"task": {...}}``; ``None`` for a plain result."""
    if "task" not in raw or "content" in raw:
        return None
    return parse_task(raw["task"])


def _timestamp(value: str | None) -> Any:
    if value is None:
        return None
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def server_task(
    task: LegacyTask,
    *,
    result: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
    input_requests: dict[str, dict[str, Any]] | None = None,
) -> ServerTask:
    """The core snapshot of a legacy task, with what ``tasks/result`` delivered added."""
    return ServerTask(
        task_id=task.task_id,
        status=task.status,
        status_message=task.status_message,
        created_at=_timestamp(task.created_at),
        last_updated_at=_timestamp(task.last_updated_at),
        ttl_ms=task.ttl,
        poll_interval_ms=task.poll_interval,
        result=result,
        error=error,
        input_requests=dict(input_requests or {}),
    )


def related_task(meta: Mapping[str, Any] | None) -> str | None:
    """The task id a server→client request says it is about, if any."""
    if not isinstance(meta, Mapping):
        return None
    related = meta.get(RELATED_TASK)
    if isinstance(related, Mapping) and isinstance(related.get("taskId"), str):
        return str(related["taskId"])
    return None


def question_key(method: str, params: Mapping[str, Any]) -> str:
    """A stable key for a question a legacy task asks.

    The legacy wire has no input-request keys: the question is a JSON-RPC request whose id
    means nothing after a reconnect. A digest of what is asked stays the same when the server
    asks again (after a restart), so a saved answer finds its question.
    """
    asked = {k: v for k, v in params.items() if k != "_meta"}
    digest = hashlib.sha256(
        json.dumps({"method": method, "params": asked}, sort_keys=True, default=str).encode()
    ).hexdigest()
    return f"q-{digest[:16]}"


@dataclass(eq=False)
class Question:
    """One server→client request of a legacy task, waiting for the user's answer."""

    key: str
    method: str
    params: dict[str, Any]
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: dict[str, Any] | None = None

    def give(self, answer: dict[str, Any]) -> None:
        """Hand the user's answer to the waiting request (the SDK then replies to the server)."""
        if not self.answered.is_set():
            self.answer = answer
            self.answered.set()


class Questions:
    """The questions legacy tasks asked on one connection, by task id and key.

    They live only as long as the connection: the server's requests die with it, and the
    server asks again on the next ``tasks/result``.
    """

    def __init__(self) -> None:
        self._by_task: dict[str, dict[str, Question]] = {}
        self._changed = anyio.Event()

    def ask(self, task_id: str, method: str, params: dict[str, Any]) -> Question:
        """Record a question (the same question asked again is the same :class:`Question`)."""
        key = question_key(method, params)
        asked = self._by_task.setdefault(task_id, {})
        question = asked.get(key)
        if question is None or question.answered.is_set():
            question = Question(key, method, {k: v for k, v in params.items() if k != "_meta"})
            asked[key] = question
        self._changed.set()
        self._changed = anyio.Event()
        return question

    def settle(self, task_id: str, question: Question) -> None:
        """Forget a question once its request ended (answered, or the stream went away)."""
        asked = self._by_task.get(task_id, {})
        if asked.get(question.key) is question:
            del asked[question.key]

    def open(self, task_id: str) -> dict[str, Question]:
        """The task's questions still waiting for an answer."""
        return {
            key: q for key, q in self._by_task.get(task_id, {}).items() if not q.answered.is_set()
        }

    async def wait(self, task_id: str, key: str | None, within: float) -> dict[str, Question]:
        """Wait (bounded) until the task has an open question (``key``: that one)."""
        with anyio.move_on_after(within):
            while True:
                pending = self.open(task_id)
                if (key is None and pending) or (key is not None and key in pending):
                    return pending
                await self._changed.wait()
        return self.open(task_id)

    def clear(self) -> None:
        """The connection is gone: every request waiting on it is gone too."""
        self._by_task.clear()
