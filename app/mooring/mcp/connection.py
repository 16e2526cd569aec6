"""One MCP server connection under one credential profile, owned by one long-lived task.

The SDK's ``Client`` must be entered and exited in the same task (anyio cancel scopes), and a
``Client`` whose transport died answers ``-32000 Connection closed`` forever. So each
:class:`McpConnection` runs an *owner* task that

* builds the transport and enters ``async with Client(...)`` with a bounded connect deadline;
* serves the requests other tasks queue (each in its own child task, each with a deadline,
  because keep-alive pings stop HTTP read timeouts from ever firing);
* tears the ``Client`` down when its transport dies and builds a new one, retrying with
  exponential backoff (and at once when a request needs it); and
* exits the ``Client`` in the task that entered it when the connection stops, which also ends a
  stdio server's process tree.

The connection speaks whichever Tasks wire the server negotiated (the 2026 extension through
:mod:`~mooring.mcp.tasks_ext`, the 2025-11-25 Tasks through :mod:`~mooring.mcp.tasks_legacy`),
holds plain calls to their idle and total limits (:class:`CallLimits`), and routes a server's
sampling and elicitation requests to the user (``input_handler``, or a task's ledger entry).

Callers get outcome values, never exceptions, for anything the server or the network did:
:class:`~mooring.core.tasks.calls.NotSent` when nothing reached the server and
:class:`~mooring.core.tasks.calls.NoAnswer` when the request may have reached it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

import anyio
import mcp.types as types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.subscriptions import PromptsListChanged, ResourcesListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry import context as otel_context
from pydantic import BaseModel, ValidationError

from mooring import __version__
from mooring.core.library import (
    PROMPTS,
    RESOURCES,
    PromptInfo,
    PromptOutcome,
    PromptUnavailable,
    ResourceInfo,
    Unlisted,
)
from mooring.core.ports import ConnectionState, ConnectionStatus
from mooring.core.resources import ResourceOutcome, ResourceRead, ResourceText, ResourceUnavailable
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.calls import (
    Acknowledged,
    AckOutcome,
    CallOutcome,
    ImmediateResult,
    NoAnswer,
    Progress,
    RequestFailed,
    StoppedByUser,
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
from mooring.core.tools import ToolInfo
from mooring.mcp import library, tasks_ext, tasks_legacy, translate
from mooring.mcp.task_listen import (
    CoverageChanged,
    ReplayBudget,
    TaskNotified,
    TaskSubscription,
)
from mooring.mcp.translate import Failure, FailureKind
from mooring.mcp.transport import (
    AuthFor,
    HeadersFor,
    SdkTransports,
    SessionWatch,
    StderrLog,
    TransportOpener,
    WatchedTransport,
    http_trace,
    kills_session,
)

logger = logging.getLogger("mooring.mcp.connection")

R = TypeVar("R")

_SessionWatch = SessionWatch  # the name the listen half was written against


ToolsChanged = Callable[[], Awaitable[None]]
"""Told that the server's tool list changed (``notifications/tools/list_changed``)."""

ListsChanged = Callable[[str], Awaitable[None]]
"""Told that the server's prompt or resource list changed: ``"prompts"`` or ``"resources"``."""

InputHandler = Callable[[ServerDefinition, str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Answers a server's ``elicitation/create`` / ``sampling/createMessage`` outside any task:
``(server, method, params) -> result``, or ``None`` to decline."""

_MAX_INPUT_ROUNDS: Final = 10
"""Multi-round-trip retries of one call at most (the SDK's and TypeScript SDK's default)."""
_ENDED: Final = frozenset({"completed", "failed", "cancelled"})
"""The 2025-11-25 task statuses that are final."""


@dataclass(frozen=True, slots=True)
class CallLimits:
    """How long a plain ``tools/call`` may run (seconds): the server's silence and in total."""

    idle_timeout: float = 120.0
    """Stop waiting after this long without an answer or a ``notifications/progress``."""
    max_time: float = 3600.0
    """Stop waiting after this long in all, however lively the server is."""


def parse_call_limits(
    text: str, *, idle_default: float, max_default: float
) -> dict[str, CallLimits]:
    """Per-server limits from the ``mcp.server_call_limits`` setting (JSON by alias or id).

    Entries that make no sense are skipped with a warning: a typo must not stop the app.
    """
    if not text.strip():
        return {}
    try:
        raw = json.loads(text)
    except ValueError:
        logger.warning("mcp.server_call_limits is not JSON; using the defaults")
        return {}
    limits: dict[str, CallLimits] = {}
    for server, entry in raw.items() if isinstance(raw, dict) else []:
        try:
            idle = float(entry.get("idle_timeout_ms", idle_default * 1000)) / 1000
            most = float(entry.get("max_ms", max_default * 1000)) / 1000
        except (AttributeError, TypeError, ValueError):
            logger.warning("mcp.server_call_limits[%r] is not usable; skipped", server)
            continue
        if idle > 0 and most > 0:
            limits[str(server)] = CallLimits(idle, most)
    return limits


STOPPED_BY_YOU: Final = "Stopped by you; the server was told to stop and may have done part of it."

ProgressListener = Callable[[Progress], Awaitable[None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionSettings:
    """Deadlines and retry policy of a connection (seconds)."""

    connect_timeout: float = 20.0
    """Start (or reach) the server and negotiate the protocol within this."""
    request_timeout: float = 30.0
    """Deadline of ``tasks/*`` and ``tools/list`` requests."""
    call_timeout: float = 3600.0
    """Longest a ``tools/call`` may take in all (a server without Tasks runs the tool before
    answering): the default :attr:`CallLimits.max_time`."""
    call_idle_timeout: float = 120.0
    """A ``tools/call`` with no answer and no progress for this long is stopped."""
    server_call_limits: Mapping[str, CallLimits] = field(default_factory=dict)
    """Per-server limits by alias (or id), over the two defaults above."""
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    min_retry_interval: float = 0.25
    """A request finding the connection failed retries at once unless the last try was this
    recent (then it fails with the last reason, so a poll burst cannot spawn a server storm)."""
    stderr_dir: Path | None = None
    """Where stdio servers' stderr goes (one file per server); ``None``: an anonymous temp file."""
    question_wait: float = 5.0
    """How long a 2025-11-25 task in ``input_required`` may take to deliver its question on
    ``tasks/result`` before the status counts as unavailable for this poll."""
    announce_wait: float = 0.5
    """How long an ``elicitation/create`` that names no task waits for the ``input_required``
    status notification of a running task of its server (a notification may be handled after
    the request the server sent next) before it is taken as a plain call's question."""
    result_stream_timeout: float = 7 * 24 * 3600.0
    """Deadline of a 2025-11-25 ``tasks/result`` held open for a task's questions and payload."""
    listen_reopen_after: float = 5.0
    """Tasks seen after the ``subscriptions/listen`` stream opened join it when it is reopened,
    at most once per this many seconds (a listen request cannot be amended)."""
    listen_replay_per_second: float = 200.0
    """A reopen makes the server replay every watched task's state: with few tasks watched the
    stream is reopened sooner than ``listen_reopen_after``, spaced so that these replays stay
    under this many frames a second, shared by a gateway's listening connections (one with 20
    tasks: after 0.1 s; with 1,000 tasks, or ten listening with 100 each: after 5 s). The cap
    ``listen_reopen_after`` wins: a stream with more tasks than its share over that time
    replays more."""


@dataclass(eq=False)
class _CallWatch:
    """A plain call in flight: its limits' cancel scope, and whether the user stopped it."""

    scope: anyio.CancelScope | None = None
    stopped: bool = False

    def stop(self) -> None:
        self.stopped = True
        if self.scope is not None:
            self.scope.cancel()


@dataclass(frozen=True, slots=True)
class _Abandoned:
    """A plain call Mooring stopped waiting for (the SDK told the server with
    ``notifications/cancelled``)."""

    by_user: bool
    reason: str


@dataclass(eq=False)
class _Work(Generic[R]):
    """One request another task queued for the owner, and its settled outcome."""

    label: str
    send: Callable[[Client], Awaitable[Any]]
    interpret: Callable[[Any], R]
    on_failure: Callable[[Failure, bool], R]
    """The outcome for a classified failure; the flag says whether the request was handed over."""
    timeout: float
    before_send: Callable[[], Awaitable[None]] | None = None
    sent: bool = False
    done: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    outcome: R | None = None
    error: BaseException | None = None
    trace_context: otel_context.Context = field(default_factory=otel_context.get_current)
    """The caller's tracing context: the SDK's client span nests under the caller's span, not
    under whatever span happened to start the owner task."""

    @property
    def settled(self) -> bool:
        return self.done.is_set()

    def settle(self, outcome: R) -> None:
        if not self.settled:
            self.outcome = outcome
            self.done.set()

    def fail(self, error: BaseException) -> None:
        if not self.settled:
            self.error = error
            self.done.set()

    def settle_failure(self, failure: Failure) -> None:
        self.settle(self.on_failure(failure, self.sent))


class McpConnection:
    """Requests to one server under one credential profile (implements ``ServerConnection``).

    Promises: methods never raise for a dead, slow, misbehaving or unreachable server; a server
    that cannot start becomes ``FAILED`` with a human reason within the connect deadline; a dead
    transport is replaced by a new ``Client``; ``aclose()`` stops the owner task and the server
    process. Exceptions from ``on_sending`` and bugs in Mooring do propagate.
    """

    def __init__(
        self,
        server: ServerDefinition,
        profile_id: str | None = None,
        *,
        settings: ConnectionSettings | None = None,
        headers_for: HeadersFor | None = None,
        auth_for: AuthFor | None = None,
        on_task_notification: TaskNotified | None = None,
        on_status: Callable[[ConnectionStatus], None] | None = None,
        input_handler: InputHandler | None = None,
        open_transport: TransportOpener | None = None,
        on_tools_changed: ToolsChanged | None = None,
        on_coverage: CoverageChanged | None = None,
        replay_budget: ReplayBudget | None = None,
        on_lists_changed: ListsChanged | None = None,
    ) -> None:
        """``replay_budget``: the listen streams' replay budget this connection shares with
        its gateway's others (``None``: one of its own, ``settings.listen_replay_per_second``)."""
        self.server = server
        self._on_tools_changed = on_tools_changed
        self._on_lists_changed = on_lists_changed
        self._long_lived = False  # a watcher wants notifications: see want_task_notifications
        self._long_lived_now: anyio.Event | None = None
        self._on_status = on_status
        self._input_handler = input_handler
        self.profile_id = profile_id
        self.settings = settings or ConnectionSettings()
        self._open_transport: TransportOpener = open_transport or SdkTransports(
            connect_timeout=self.settings.connect_timeout,
            headers_for=headers_for,
            auth_for=auth_for,
        )
        self._on_task_notification = on_task_notification
        self._status = ConnectionStatus(server_id=server.id, state=ConnectionState.CONNECTING)
        self._status_changed = anyio.Event()
        self._queue: deque[_Work[Any]] = deque()
        self._wake = anyio.Event()
        self._demand = anyio.Event()
        self._in_flight: set[_Work[Any]] = set()
        self._last_failure: Failure | None = None
        self._last_attempt_end = -math.inf
        self._failures = 0
        self._credentials = 0
        """Counts :meth:`credentials_changed` calls: an attempt begun under older credentials
        does not answer the requests waiting for it when it fails."""
        self._connect_scope: anyio.CancelScope | None = None
        self.subscription = TaskSubscription(
            alias=server.alias,
            reopen_after=self.settings.listen_reopen_after,
            replay_budget=replay_budget or ReplayBudget(self.settings.listen_replay_per_second),
            notify=on_task_notification,
            on_coverage=on_coverage,
        )
        """The one ``subscriptions/listen`` stream for the tasks this connection watches."""
        self._task_support: dict[str, str] = {}
        self._calls: dict[str, _CallWatch] = {}
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
        self._payloads: dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]] = {}
        self._stop_scope = anyio.CancelScope()
        self._closing = False
        self._started = False
        self._finished = anyio.Event()
        self._last_used = time.monotonic()

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def status(self) -> ConnectionStatus:
        """Where the connection stands now."""
        return self._status

    @property
    def stopped(self) -> bool:
        """Whether the connection has ended for good: its owner task is over (a stdio server's
        process has ended), or it was closed before it started."""
        return self._finished.is_set() or (self._closing and not self._started)

    def idle_for(self) -> float:
        """Seconds since the last request to this server ended (``0.0`` while one is queued
        or under way, or while a task's stream or a listen stream for tasks is open)."""
        if (
            self._queue
            or self._in_flight
            or self._calls
            or self._result_streams
            or self.subscription.watched
        ):
            return 0.0
        return time.monotonic() - self._last_used

    def start(self) -> None:
        """Start the owner task on the running event loop (idempotent)."""
        if self._started:
            return
        self._started = True
        # A task owned by no caller's scope: it outlives the request that started it. The app's
        # loop is asyncio (qasync in the GUI); the owner itself is written on anyio.
        self._owner_task = asyncio.get_running_loop().create_task(
            self._owner(), name=f"mcp-connection:{self.server.alias}"
        )

    async def aclose(self) -> None:
        """Stop the owner task, exit the ``Client`` and end a stdio server; settles queued work."""
        self._closing = True
        self._stop_scope.cancel()
        if self._started:
            await self._finished.wait()
        else:
            self._set_status(ConnectionState.STOPPED, "stopped")
            self._settle_queue(Failure(FailureKind.TRANSPORT, "the connection is stopped"))

    async def wait_for_status(
        self, predicate: Callable[[ConnectionStatus], bool]
    ) -> ConnectionStatus:
        """Wait until the status satisfies ``predicate`` (callers bound the wait)."""
        while not predicate(self._status):
            await self._status_changed.wait()
        return self._status

    async def settled(self) -> ConnectionStatus:
        """Wait for the current connection attempt to end: ready, failed or stopped."""
        return await self.wait_for_status(lambda s: s.state is not ConnectionState.CONNECTING)

    def _set_status(self, state: ConnectionState, reason: str = "", **changes: Any) -> None:
        self._status = replace(self._status, state=state, reason=reason, **changes)
        logger.info("%s: %s %s", self.server.alias, state, reason)
        self._status_changed.set()
        self._status_changed = anyio.Event()
        if self._on_status is not None:
            try:
                self._on_status(self._status)
            except Exception:  # a listener's bug must not take the connection down
                logger.exception("%s: status listener failed", self.server.alias)

    # -- the ServerConnection requests ----------------------------------------------------------

    async def list_tools(self) -> list[ToolInfo]:
        """Every tool the server lists (all pages); empty when the server cannot be reached."""

        async def send(client: Client) -> list[types.Tool]:
            tools: list[types.Tool] = []
            cursor: str | None = None
            for _ in range(100):  # a paginator that never ends cannot hang the connection
                page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                tools.extend(page.tools)
                for tool in page.tools:
                    execution = tool.execution
                    support = execution.task_support if execution is not None else None
                    self._task_support[tool.name] = support or "forbidden"
                cursor = page.next_cursor
                if cursor is None:
                    break
            return tools

        def interpret(tools: list[types.Tool]) -> list[ToolInfo]:
            return [translate.tool_info(self.server.id, tool) for tool in tools]

        def on_failure(failure: Failure, _sent: bool) -> list[ToolInfo]:
            logger.warning("%s: tools/list failed: %s", self.server.alias, failure.reason)
            return []

        return await self._submit(
            _Work("tools/list", send, interpret, on_failure, self.settings.request_timeout)
        )

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        on_sending: Callable[[], Awaitable[None]] | None = None,
        on_progress: ProgressListener | None = None,
        call_key: str | None = None,
    ) -> CallOutcome:
        """Send ``tools/call`` declaring the Tasks extension (on a 2025-11-25 server: with
        ``params.task`` when the tool takes one).

        ``on_sending`` is awaited (shielded from cancellation) once the connection is ready and
        immediately before the request is handed to the SDK. ``NotSent`` means nothing reached
        the server; ``NoAnswer`` means it may have, and the outcome is unknown.

        Until the answer, each ``notifications/progress`` is passed to ``on_progress`` and
        restarts the idle timeout; past the idle timeout or the maximum time the request is
        abandoned (the SDK sends ``notifications/cancelled``) and the outcome is unknown.
        :meth:`stop_call` with ``call_key`` stops it on the user's behalf (``StoppedByUser``).
        """
        if self._status.task_wire == TaskWire.LEGACY:
            return await self._legacy_call(tool, arguments, on_sending, on_progress, call_key)

        async def send(client: Client) -> Any:
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

            reply = await self._watched_call(call, on_progress, call_key)
            for _round in range(_MAX_INPUT_ROUNDS):
                if not isinstance(reply, types.InputRequiredResult):
                    break
                # A 2026 server needs input before it runs the tool (multi-round-trip): the
                # user answers through the same handler as a 2025 server's mid-call requests,
                # then the call is retried with the answers (the tool has not run yet).
                responses = await self._answer_inputs(client, reply)
                state = reply.request_state
                reply = await self._watched_call(call, on_progress, call_key)
            return reply

        return await self._submit(
            _Work(
                f"tools/call {tool}",
                send,
                lambda result: self._interpret_call(result, translate.call_outcome),
                lambda failure, sent: translate.call_outcome_from_failure(failure, sent=sent),
                self._call_limits().max_time + self.settings.request_timeout,
                before_send=on_sending,
            )
        )

    async def _answer_inputs(
        self, client: Client, asked: types.InputRequiredResult
    ) -> types.InputResponses:
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

    def stop_call(self, call_key: str) -> bool:
        """Stop the plain call sent with ``call_key`` (the user's stop); whether one was running."""
        watch = self._calls.get(call_key)
        if watch is None:
            return False
        watch.stop()
        return True

    def _call_limits(self) -> CallLimits:
        limits = self.settings.server_call_limits
        found = limits.get(self.server.alias) or limits.get(self.server.id)
        return found or CallLimits(self.settings.call_idle_timeout, self.settings.call_timeout)

    async def _watched_call(
        self,
        call: Callable[[Any], Awaitable[R]],
        on_progress: ProgressListener | None,
        call_key: str | None,
    ) -> R | _Abandoned:
        """Run ``call`` (given the SDK progress callback) under the idle and total limits."""
        limits = self._call_limits()
        start = anyio.current_time()
        watch = _CallWatch()
        if call_key is not None:
            self._calls[call_key] = watch

        def deadline() -> float:
            return min(anyio.current_time() + limits.idle_timeout, start + limits.max_time)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if watch.scope is not None:
                watch.scope.deadline = deadline()  # a sign of life
            if on_progress is not None:
                await on_progress(Progress(done, total, message))

        try:
            with anyio.CancelScope(deadline=deadline()) as scope:
                watch.scope = scope
                if watch.stopped:
                    scope.cancel()
                return await call(progress)
        finally:
            if call_key is not None and self._calls.get(call_key) is watch:
                del self._calls[call_key]
        if watch.stopped:
            return _Abandoned(by_user=True, reason=STOPPED_BY_YOU)
        if anyio.current_time() >= start + limits.max_time:
            why = f"still no answer after the maximum of {limits.max_time:g} s"
        else:
            why = f"no sign of life from the server for {limits.idle_timeout:g} s"
        return _Abandoned(
            by_user=False, reason=f"{why}; Mooring stopped waiting and told the server to stop"
        )

    def _interpret_call(self, reply: Any, interpret: Callable[[Any], CallOutcome]) -> CallOutcome:
        if isinstance(reply, _Abandoned):
            return StoppedByUser(reply.reason) if reply.by_user else NoAnswer(reply.reason)
        return self._observed_call(interpret(reply))

    async def get_task(self, task_id: str, *, wire: TaskWire | None = None) -> Observation:
        """``tasks/get``: a snapshot, or why there is none (gone, unavailable, auth, malformed).

        ``wire`` is the protocol that created the task (default: the 2026 extension).
        """
        if wire is TaskWire.LEGACY:
            return await self._legacy_get(task_id)

        async def send(client: Client) -> tasks_ext.GetTaskResult:
            return await tasks_ext.get_task(client.session, task_id)

        return await self._submit(
            _Work(
                "tasks/get",
                send,
                lambda reply: self._observed(
                    task_id, translate.observation(reply, task_id=task_id)
                ),
                lambda failure, _sent: self._observed(
                    task_id, translate.observation_from_failure(failure)
                ),
                self.settings.request_timeout,
            )
        )

    async def update_task(
        self,
        task_id: str,
        responses: dict[str, dict[str, Any]],
        *,
        wire: TaskWire | None = None,
    ) -> AckOutcome:
        """``tasks/update`` with answers by input-request key (on the 2025-11-25 wire: the
        replies to the questions the task asked on ``tasks/result``)."""
        if wire is TaskWire.LEGACY:
            return await self._legacy_answer(task_id, responses)

        async def send(client: Client) -> tasks_ext.AckResult:
            return await tasks_ext.update_task(client.session, task_id, dict(responses))

        return await self._submit(
            _Work(
                "tasks/update",
                send,
                lambda _ack: translate.ACKNOWLEDGED,
                lambda failure, _sent: translate.ack_from_failure(failure),
                self.settings.request_timeout,
            )
        )

    async def cancel_task(self, task_id: str, *, wire: TaskWire | None = None) -> AckOutcome:
        """``tasks/cancel``: a request; the server reports the outcome through ``tasks/get``."""
        if wire is TaskWire.LEGACY:
            return await self._legacy_cancel(task_id)

        async def send(client: Client) -> tasks_ext.AckResult:
            return await tasks_ext.cancel_task(client.session, task_id)

        return await self._submit(
            _Work(
                "tasks/cancel",
                send,
                lambda _ack: translate.ACKNOWLEDGED,
                lambda failure, _sent: translate.ack_from_failure(failure),
                self.settings.request_timeout,
            )
        )

    async def read_resource(self, uri: str) -> ResourceOutcome:
        """``resources/read``: text parts as they are, binary parts by size only."""

        async def send(client: Client) -> types.ReadResourceResult:
            return await client.read_resource(uri, cache_mode="bypass")

        def interpret(result: types.ReadResourceResult) -> ResourceOutcome:
            return ResourceRead(
                tuple(
                    ResourceText(
                        uri=part.uri,
                        mime_type=part.mime_type,
                        text=part.text if isinstance(part, types.TextResourceContents) else None,
                        blob_bytes=len(part.blob) * 3 // 4
                        if isinstance(part, types.BlobResourceContents)
                        else 0,
                    )
                    for part in result.contents
                )
            )

        return await self._submit(
            _Work(
                "resources/read",
                send,
                interpret,
                lambda failure, _sent: ResourceUnavailable(failure.reason),
                self.settings.request_timeout,
            )
        )

    # -- prompts and resources (the requests: mcp/library.py) ----------------------------------

    async def list_prompts(self) -> list[PromptInfo] | Unlisted:
        """``prompts/list`` (all pages); empty when the server offers no prompts."""
        return await self._listing("prompts/list", library.list_prompts)

    async def list_resources(self) -> list[ResourceInfo] | Unlisted:
        """``resources/list`` then ``resources/templates/list`` (all pages of each)."""
        return await self._listing("resources/list", library.list_resources)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> PromptOutcome:
        """``prompts/get``: the prompt's messages as text."""
        return await self._submit(
            _Work(
                f"prompts/get {name}",
                lambda client: library.get_prompt(client, name, arguments),
                lambda text: text,
                lambda failure, _sent: PromptUnavailable(failure.reason),
                self.settings.request_timeout,
            )
        )

    async def _listing(
        self, label: str, read: Callable[[Client, ServerDefinition], Awaitable[list[R]]]
    ) -> list[R] | Unlisted:
        return await self._submit(
            _Work(
                label,
                lambda client: read(client, self.server),
                lambda items: items,
                lambda failure, _sent: Unlisted(failure.reason),
                self.settings.request_timeout,
            )
        )

    # -- the 2025-11-25 Tasks wire ----------------------------------------------------------------

    async def _legacy_call(
        self,
        tool: str,
        arguments: dict[str, Any],
        on_sending: Callable[[], Awaitable[None]] | None,
        on_progress: ProgressListener | None,
        call_key: str | None,
    ) -> CallOutcome:
        """``tools/call`` on a 2025-11-25 server: with ``params.task`` when the tool takes one
        (Mooring prefers the task wherever the server offers both)."""

        async def send(client: Client) -> Any:
            if tool not in self._task_support:
                listed = await client.list_tools(cache_mode="bypass")
                for item in listed.tools:
                    execution = item.execution
                    support = execution.task_support if execution is not None else None
                    self._task_support[item.name] = support or "forbidden"
            params: dict[str, Any] = {"name": tool, "arguments": arguments}
            if self._task_support.get(tool) in tasks_legacy.TASK_SUPPORTING:
                params["task"] = {}
            raw = await self._watched_call(
                lambda progress: tasks_legacy.send_raw(
                    client.session, "tools/call", params, on_progress=progress
                ),
                on_progress,
                call_key,
            )
            if isinstance(raw, _Abandoned):
                return raw
            created = tasks_legacy.created_task(raw)
            if created is not None:
                return created
            return types.CallToolResult.model_validate(raw)

        def interpret(reply: tasks_legacy.LegacyTask | types.CallToolResult) -> CallOutcome:
            if isinstance(reply, tasks_legacy.LegacyTask):
                return TaskCreated(tasks_legacy.server_task(reply), wire=TaskWire.LEGACY)
            return ImmediateResult(reply.model_dump(by_alias=True, mode="json", exclude_none=True))

        return await self._submit(
            _Work(
                f"tools/call {tool}",
                send,
                lambda reply: self._interpret_call(reply, interpret),
                lambda failure, sent: translate.call_outcome_from_failure(failure, sent=sent),
                self._call_limits().max_time + self.settings.request_timeout,
                before_send=on_sending,
            )
        )

    async def _legacy_get(self, task_id: str) -> Observation:
        """``tasks/get``, plus ``tasks/result`` for what the bare ``Task`` leaves out: the payload
        of an ended task, the questions of one in ``input_required``."""

        async def send(client: Client) -> Observation:
            raw = await tasks_legacy.send_raw(client.session, "tasks/get", {"taskId": task_id})
            try:
                task = tasks_legacy.parse_task(raw)
            except ValueError as exc:
                return MalformedReply(str(exc))
            if task.task_id != task_id:
                return MalformedReply(f"reply is about task {task.task_id!r}, not {task_id!r}")
            if task.status in ("completed", "failed"):
                result, error = await self._legacy_payload(client, task_id)
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
                asked = await self._questions.wait(task_id, None, self.settings.question_wait)
                if not asked:
                    return StatusUnavailable(
                        "the server says the task needs input but has not sent its question yet"
                    )
                requests = {k: {"method": q.method, "params": q.params} for k, q in asked.items()}
                return tasks_legacy.server_task(task, input_requests=requests)
            return tasks_legacy.server_task(task)

        return await self._submit(
            _Work(
                "tasks/get",
                send,
                lambda seen: self._observed(task_id, seen),
                lambda failure, _sent: translate.observation_from_failure(failure),
                self.settings.request_timeout + self.settings.question_wait,
            )
        )

    async def _legacy_payload(
        self, client: Client, task_id: str
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """``(result, error)`` of an ended task: from the held stream, or ``tasks/result``."""
        if task_id in self._payloads:
            return self._payloads[task_id]
        try:
            raw = await tasks_legacy.send_raw(client.session, "tasks/result", {"taskId": task_id})
        except MCPError as exc:
            if exc.code == translate.CONNECTION_CLOSED:
                raise
            payload: tuple[dict[str, Any] | None, dict[str, Any] | None] = (
                None,
                translate.error_dict(exc),
            )
        else:
            payload = (_without_related_task(raw), None)
        self._payloads[task_id] = payload
        return payload

    def _ensure_result_stream(self, task_id: str) -> None:
        """Hold one ``tasks/result`` open per task: the server asks its questions on it and
        answers it with the payload once the task ends."""
        running = self._result_streams.get(task_id)
        if running is not None and not running.done():
            return

        async def send(client: Client) -> None:
            try:
                raw = await tasks_legacy.send_raw(
                    client.session, "tasks/result", {"taskId": task_id}
                )
            except MCPError as exc:
                if exc.code == translate.CONNECTION_CLOSED:
                    raise
                self._payloads[task_id] = (None, translate.error_dict(exc))
            else:
                self._payloads[task_id] = (_without_related_task(raw), None)

        async def hold() -> None:
            await self._submit(
                _Work(
                    "tasks/result",
                    send,
                    lambda _none: None,
                    lambda failure, _sent: logger.info(
                        "%s: tasks/result for %s ended: %s",
                        self.server.alias,
                        task_id,
                        failure.reason,
                    ),
                    self.settings.result_stream_timeout,
                )
            )
            if task_id in self._payloads:
                await self._notified(task_id)  # the task ended: poll it now

        stream = asyncio.get_running_loop().create_task(
            hold(), name=f"tasks/result:{self.server.alias}"
        )
        self._result_streams[task_id] = stream
        stream.add_done_callback(lambda _t: self._forget_stream(task_id, stream))

    def _forget_stream(self, task_id: str, stream: asyncio.Task[None]) -> None:
        if self._result_streams.get(task_id) is stream:
            del self._result_streams[task_id]
        if not stream.cancelled() and stream.exception() is not None:
            logger.error("tasks/result stream failed", exc_info=stream.exception())

    async def _legacy_answer(
        self, task_id: str, responses: dict[str, dict[str, Any]]
    ) -> AckOutcome:
        """Reply to the questions a 2025-11-25 task asked (asking the server to ask again, on a
        new ``tasks/result``, when this connection has not heard them: after a restart)."""
        for key, answer in responses.items():
            asked = self._questions.open(task_id)
            if key not in asked:
                self._ensure_result_stream(task_id)
                asked = await self._questions.wait(task_id, key, self.settings.question_wait)
            if key not in asked:
                return RequestFailed("the server is not asking this question right now")
            asked[key].give(answer)
        return translate.ACKNOWLEDGED

    async def _legacy_cancel(self, task_id: str) -> AckOutcome:
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

        return await self._submit(
            _Work(
                "tasks/cancel",
                send,
                lambda ack: ack,
                lambda failure, _sent: translate.ack_from_failure(failure),
                self.settings.request_timeout,
            )
        )

    async def _on_elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        answer = await self._server_request(context, "elicitation/create", params)
        if answer is None:
            return types.ElicitResult(action="decline")
        try:
            return types.ElicitResult.model_validate(answer)
        except ValidationError:
            return types.ErrorData(code=types.INVALID_PARAMS, message="unusable answer")

    async def _on_sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        answer = await self._server_request(context, "sampling/createMessage", params)
        if answer is None or answer.get("action") in ("decline", "cancel"):
            # The spec's code for a user who rejects a sampling request.
            return types.ErrorData(code=-1, message="User rejected sampling request")
        try:
            return types.CreateMessageResult.model_validate(answer)
        except ValidationError:
            return types.ErrorData(code=types.INVALID_PARAMS, message="unusable answer")

    async def _server_request(
        self, context: ClientRequestContext, method: str, params: BaseModel
    ) -> dict[str, Any] | None:
        """A question from the server: a task's (kept until the user answers it through the
        ledger) or a plain call's (handed to ``input_handler``); ``None`` declines it.

        A task's question says so in its related-task ``_meta``. One without it is the question
        of the task that announced ``input_required`` just before, if one did (FastMCP 3.x asks
        so): kept for the user like any task's question, not handed to ``input_handler``
        (with no one there to ask, that would decline it at once)."""
        body = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        task_id = tasks_legacy.related_task(context.meta) or tasks_legacy.related_task(
            body.get("_meta")
        )
        if task_id is not None:
            self._awaiting_input.pop(task_id, None)
        else:
            task_id = await self._announced_task()
        if task_id is None:
            if self._input_handler is None:
                return None
            return await self._input_handler(self.server, method, body)
        question = self._questions.ask(task_id, method, body)
        try:
            await self._notified(task_id)  # the monitor asks tasks/get, which shows it
            await question.answered.wait()
            return question.answer
        finally:
            self._questions.settle(task_id, question)

    # -- the queue ------------------------------------------------------------------------------

    async def _submit(self, work: _Work[R]) -> R:
        self._last_used = time.monotonic()
        try:
            return await self._submitted(work)
        finally:
            self._last_used = time.monotonic()

    async def _submitted(self, work: _Work[R]) -> R:
        if self._closing or self._status.state is ConnectionState.STOPPED:
            work.settle_failure(Failure(FailureKind.TRANSPORT, "the connection is stopped"))
        elif (
            self._status.state is ConnectionState.FAILED
            and self._last_failure is not None
            and anyio.current_time() - self._last_attempt_end < self.settings.min_retry_interval
        ):
            work.settle_failure(self._last_failure)
        else:
            if not self._started:
                self.start()
            self._queue.append(work)
            self._wake.set()
            if self._status.state is not ConnectionState.READY:
                self._demand.set()
            try:
                await work.done.wait()
            except BaseException:
                # The caller went away: stop the request if it is running, drop it if queued.
                work.scope.cancel()
                with contextlib.suppress(ValueError):
                    self._queue.remove(work)
                raise
        if work.error is not None:
            raise work.error
        return work.outcome  # type: ignore[return-value]  # settled means set

    def _is_closing(self) -> bool:
        return self._closing

    def _settle_queue(self, failure: Failure) -> None:
        while self._queue:
            self._queue.popleft().settle_failure(failure)

    def _settle_in_flight(self, failure: Failure) -> None:
        # Requests cancelled with their transport never settled themselves.
        for work in list(self._in_flight):
            work.settle_failure(failure)
        self._in_flight.clear()

    # -- the owner task -------------------------------------------------------------------------

    async def _owner(self) -> None:
        try:
            with self._stop_scope:
                delay = 0.0
                while True:
                    if delay > 0:
                        with anyio.move_on_after(delay):
                            await self._demand.wait()
                    self._demand = anyio.Event()
                    if self._is_closing():
                        break
                    delay = await self._session()
        finally:
            self._set_status(ConnectionState.STOPPED, "stopped")
            stopped = Failure(FailureKind.TRANSPORT, "the connection was stopped")
            self._settle_in_flight(stopped)
            self._settle_queue(stopped)
            self._finished.set()

    def credentials_changed(self) -> None:
        """The account's credentials changed (it signed in): a failed connection, or one whose
        attempt began under the old credentials, starts a new attempt at once, and the requests
        waiting are served by that attempt rather than failed by the stale one."""
        self._credentials += 1
        self._last_failure = None
        self._failures = 0
        if self._status.state is ConnectionState.READY:
            return  # it holds a session already; the new tokens are used at its next refresh
        if self._connect_scope is not None:
            self._connect_scope.cancel()
        self._demand.set()

    async def _session(self) -> float:
        """Connect, serve until the transport dies; the delay before the next attempt."""
        self._set_status(ConnectionState.CONNECTING, self._status.reason)
        credentials = self._credentials
        watch = SessionWatch(on_end=lambda: self._wake.set())
        ready = False
        failure: Failure | None = None
        stderr = StderrLog(self.server, self.settings.stderr_dir)
        connect_statuses: list[int] = []
        try:
            with http_trace(connect_statuses):
                deadline = anyio.current_time() + self.settings.connect_timeout
                with anyio.CancelScope(deadline=deadline) as connect_scope:
                    self._connect_scope = connect_scope
                    async with AsyncExitStack() as stack:
                        opened = await self._open_transport(
                            stack, self.server, self.profile_id, stderr
                        )
                        transport = WatchedTransport(opened, watch)
                        client = Client(
                            transport,
                            extensions=[
                                tasks_ext.TasksClientExtension(
                                    self.subscription.frame,
                                    self.subscription.hint,
                                    self._task_status_said,
                                )
                            ],
                            cache=None,
                            client_info=types.Implementation(name="mooring", version=__version__),
                            elicitation_callback=self._on_elicitation,
                            sampling_callback=self._on_sampling,
                            message_handler=self._on_message,
                        )
                        await stack.enter_async_context(client)
                        connect_scope.deadline = math.inf
                        self._connect_scope = None
                        ready = True
                        self._on_ready(client)
                        await self._serve(client, watch)
                if connect_scope.cancelled_caught and not ready:
                    failure = Failure(
                        FailureKind.TRANSPORT,
                        f"the server did not answer within {self.settings.connect_timeout:g} s",
                    )
        except Exception as exc:  # the transport's own failure, classified below
            failure = translate.classify(exc, http_statuses=connect_statuses)
            if failure is None:
                logger.warning("%s: unexpected connection error", self.server.alias, exc_info=exc)
                failure = Failure(FailureKind.TRANSPORT, translate.describe_exception(exc))
        finally:
            self._connect_scope = None
            tail = stderr.tail()
            stderr.close()
            self._questions.clear()
            self._awaiting_input.clear()
            self._running.clear()
            self._says_status = False
            self._payloads.clear()
            self._last_attempt_end = anyio.current_time()
            # Requests that arrived during this attempt were served or are settled below; only
            # requests arriving from now on may cut the backoff short.
            self._demand = anyio.Event()
        reason = (failure.reason if failure else watch.reason) or "the connection closed"
        if not ready and credentials != self._credentials:
            return 0.0  # begun under the old credentials: its failure answers nothing; again now
        if not ready:
            failure = self._startup_failure(failure, watch, tail)
            self._failures += 1
            self._last_failure = failure
            self._settle_queue(failure)
            self._set_status(
                ConnectionState.FAILED, failure.reason, supports_tasks=False, task_wire=None
            )
            return min(
                self.settings.backoff_initial * 2.0 ** (self._failures - 1),
                self.settings.backoff_max,
            )
        lost = f"connection lost: {reason}" + (f" ({tail})" if tail else "")
        self._settle_in_flight(Failure(FailureKind.TRANSPORT, lost))
        self._failures = 0
        self._set_status(ConnectionState.CONNECTING, lost)
        return 0.0

    def _startup_failure(self, failure: Failure | None, watch: SessionWatch, tail: str) -> Failure:
        base = failure or Failure(FailureKind.TRANSPORT, watch.reason or "the connection closed")
        if base.kind is FailureKind.AUTH:
            return base
        target = self.server.target
        if self.server.transport is Transport.STDIO:
            if watch.over or (failure is not None and "connection closed" in failure.reason):
                text = f"{target!r} exited before it answered"
            else:
                text = f"could not start {target!r}: {base.reason}"
            return replace(base, reason=text + (f": {tail}" if tail else ""))
        return replace(base, reason=f"could not reach {target}: {base.reason}")

    def _on_ready(self, client: Client) -> None:
        capabilities = client.server_capabilities
        extensions = capabilities.extensions or {}
        version = client.protocol_version
        wire: TaskWire | None = None
        if tasks_ext.TASKS_EXTENSION in extensions and version in MODERN_PROTOCOL_VERSIONS:
            wire = TaskWire.EXTENSION
        elif version == tasks_legacy.LEGACY_VERSION and tasks_legacy.supports_tool_tasks(
            capabilities.model_dump(by_alias=True, exclude_none=True)
        ):
            wire = TaskWire.LEGACY
        self._last_failure = None
        self._set_status(
            ConnectionState.READY,
            "",
            supports_tasks=wire is not None,
            protocol_version=version,
            task_wire=wire,
        )

    # -- notifications/tools/list_changed -------------------------------------------------------

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        """Notifications outside any request: a 2025-era server's changed tool list, and the
        acknowledgement of the task listen stream (which tasks the server will report on)."""
        if isinstance(message, types.ToolListChangedNotification):
            await self._tools_changed()
        elif isinstance(message, types.PromptListChangedNotification):
            await self._lists_changed(PROMPTS)
        elif isinstance(message, types.ResourceListChangedNotification):
            await self._lists_changed(RESOURCES)
        elif isinstance(message, types.SubscriptionsAcknowledgedNotification):
            accepted = (message.params.notifications.model_extra or {}).get("taskIds")
            if isinstance(accepted, list):
                self.subscription.acknowledged([i for i in accepted if isinstance(i, str)])

    async def _listen_for_tools(self, client: Client, watch: SessionWatch) -> None:
        """Hold a ``subscriptions/listen`` stream for tool, prompt and resource list changes
        (the 2026 wire delivers them only there), once a long-lived watcher wants notifications:
        a one-shot command's lists are read fresh and open no stream. A hint: a server that
        refuses is not asked again on this session."""
        if not self._long_lived:
            self._long_lived_now = anyio.Event()
            await self._long_lived_now.wait()
        capabilities = client.server_capabilities
        lists = self._on_lists_changed is not None
        try:
            async with client.listen(
                tools_list_changed=self._on_tools_changed is not None
                and capabilities.tools is not None,
                prompts_list_changed=lists and capabilities.prompts is not None,
                resources_list_changed=lists and capabilities.resources is not None,
            ) as subscription:
                async for event in subscription:
                    if isinstance(event, PromptsListChanged):
                        await self._lists_changed(PROMPTS)
                    elif isinstance(event, ResourcesListChanged):
                        await self._lists_changed(RESOURCES)
                    else:
                        await self._tools_changed()
        except MCPError as exc:
            if exc.code != translate.CONNECTION_CLOSED:
                logger.info("%s: no tool list changes: %s", self.server.alias, exc.message)
        except Exception as exc:  # noqa: BLE001  (a hint channel: never fatal)
            if not watch.over:
                logger.info("%s: tool list changes ended: %r", self.server.alias, exc)

    async def _lists_changed(self, kind: str) -> None:
        if self._on_lists_changed is not None:
            await self._on_lists_changed(kind)

    async def _tools_changed(self) -> None:
        self._task_support.clear()  # read again with the new list
        if self._on_tools_changed is not None:
            await self._on_tools_changed()

    async def _serve(self, client: Client, watch: SessionWatch) -> None:
        async with anyio.create_task_group() as tg:
            offers = client.server_capabilities
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS and (
                (self._on_tools_changed is not None and offers.tools is not None)
                or (
                    self._on_lists_changed is not None
                    and (offers.prompts is not None or offers.resources is not None)
                )
            ):
                tg.start_soon(self._listen_for_tools, client, watch)
            if (
                self._on_task_notification is not None
                and self._status.task_wire is TaskWire.EXTENSION
            ):
                tg.start_soon(self.subscription.run, client.session, lambda: watch.over)
            while True:
                if watch.over:
                    break
                if not self._queue:
                    self._wake = anyio.Event()
                    await self._wake.wait()
                    continue
                work = self._queue.popleft()
                if work.settled:
                    continue
                self._in_flight.add(work)
                tg.start_soon(self._run, client, watch, work)
            # The transport is gone: in-flight answers can never arrive.
            tg.cancel_scope.cancel()

    async def _run(self, client: Client, watch: SessionWatch, work: _Work[Any]) -> None:
        statuses: list[int] = []
        token = otel_context.attach(work.trace_context)
        try:
            with http_trace(statuses), work.scope:
                try:
                    if work.before_send is not None:
                        # The caller persists "sent" here; a dying transport must not cut that
                        # write in half.
                        try:
                            with anyio.CancelScope(shield=True):
                                await work.before_send()
                        except Exception as exc:  # noqa: BLE001  (the caller's own failure)
                            work.fail(exc)
                            return
                        if watch.over:
                            work.settle_failure(
                                Failure(FailureKind.TRANSPORT, watch.reason or "connection lost")
                            )
                            return
                    work.sent = True
                    with anyio.fail_after(work.timeout):
                        reply = await work.send(client)
                    work.settle(work.interpret(reply))
                except TimeoutError:
                    work.settle_failure(
                        Failure(FailureKind.TRANSPORT, f"no answer within {work.timeout:g} s")
                    )
                except Exception as exc:  # noqa: BLE001  (classified; the rest reach the caller)
                    failure = translate.classify(exc, http_statuses=statuses)
                    if failure is None:
                        work.fail(exc)
                        return
                    work.settle_failure(failure)
                    if kills_session(exc):
                        watch.end(failure.reason)
            if work.scope.cancelled_caught and not work.settled:
                work.settle_failure(Failure(FailureKind.TRANSPORT, "abandoned by the caller"))
        finally:
            otel_context.detach(token)
            if work.settled:
                self._in_flight.discard(work)

    # -- notifications/tasks ---------------------------------------------------------------------

    def _observed_call(self, outcome: CallOutcome) -> CallOutcome:
        if isinstance(outcome, TaskCreated):
            self._observed(outcome.task.task_id, outcome.task)
        return outcome

    def _observed(self, task_id: str, seen: Observation) -> Observation:
        """Watch the tasks that are still running; forget ended or unknown ones."""
        if isinstance(seen, ServerTask) and seen.status not in _ENDED:
            self._running.add(task_id)
        elif isinstance(seen, TaskGone | ServerTask):
            self._running.discard(task_id)
            self._awaiting_input.pop(task_id, None)
        self.subscription.observed(task_id, seen)
        return seen

    def want_task_notifications(self, wanted: bool) -> None:
        """Hold a ``subscriptions/listen`` stream for the running tasks (only a long-lived
        watcher wants one; a one-shot command never opens it), and, from then on, the one for
        tool list changes."""
        self.subscription.want(wanted)
        if wanted and not self._long_lived:
            self._long_lived = True
            if self._long_lived_now is not None:
                self._long_lived_now.set()

    async def _notified(self, task_id: str) -> None:
        await self.subscription.hint(task_id)

    def _task_status_said(self, task_id: str, status: str | None) -> None:
        """A 2025-11-25 status notification: note a task that announced ``input_required``
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

    async def _announced_task(self) -> str | None:
        """The task whose ``input_required`` announcement a question without a related task
        answers (the oldest waiting), if any; waits a little for it while a task of a server
        that announces runs."""
        if not self._awaiting_input and self._says_status and self._running:
            announced = self._input_announced
            with anyio.move_on_after(self.settings.announce_wait):
                await announced.wait()
        if not self._awaiting_input:
            return None
        task_id = next(iter(self._awaiting_input))
        del self._awaiting_input[task_id]
        return task_id


def _without_related_task(raw: dict[str, Any]) -> dict[str, Any]:
    """A ``tasks/result`` payload as the original call would have returned it."""
    meta = raw.get("_meta")
    if isinstance(meta, dict) and tasks_legacy.RELATED_TASK in meta:
        meta = {k: v for k, v in meta.items() if k != tasks_legacy.RELATED_TASK}
        raw = {**raw, "_meta": meta} if meta else {k: v for k, v in raw.items() if k != "_meta"}
    return raw
