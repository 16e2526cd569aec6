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

The connection speaks whichever Tasks wire the server negotiated through that wire's strategy
(:mod:`mooring.mcp.wire`: the 2026 extension, the 2025-11-25 Tasks), holds plain calls to their
idle and total limits (:class:`~mooring.mcp.requests.PlainCalls`), and routes a server's sampling
and elicitation requests to the user (``input_handler``, or a task's ledger entry).

Callers get outcome values, never exceptions, for anything the server or the network did:
:class:`~mooring.core.tasks.calls.NotSent` when nothing reached the server and
:class:`~mooring.core.tasks.calls.NoAnswer` when the request may have reached it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import replace
from typing import Any, TypeVar

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
from mooring.core.ports import ConnectionState, ConnectionStatus, HttpSessions
from mooring.core.resources import ResourceOutcome, ResourceRead, ResourceText, ResourceUnavailable
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.calls import (
    AckOutcome,
    CallOutcome,
    NoAnswer,
    StoppedByUser,
    TaskCreated,
)
from mooring.core.tasks.reconcile import Observation
from mooring.core.tasks.wire import TaskWire
from mooring.core.tools import ToolInfo
from mooring.mcp import library, tasks_ext, translate
from mooring.mcp.requests import (
    Abandoned,
    CallLimits,
    ConnectionSettings,
    PlainCalls,
    ProgressListener,
    Work,
    parse_call_limits,
)
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
from mooring.mcp.wire import TaskWireStrategy, negotiated
from mooring.mcp.wire.extension import ExtensionWire
from mooring.mcp.wire.legacy import LegacyWire

__all__ = [  # the settings are defined with the requests they bound, and found here too
    "CallLimits",
    "ConnectionSettings",
    "InputHandler",
    "McpConnection",
    "ToolsChanged",
    "parse_call_limits",
]

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
        http_sessions: HttpSessions | None = None,
    ) -> None:
        """``replay_budget``: the listen streams' replay budget this connection shares with
        its gateway's others (``None``: one of its own, ``settings.listen_replay_per_second``).
        ``http_sessions``: where an HTTP server's session is remembered, so that one a crashed
        engine left open is resumed (the real transports only)."""
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
            sessions=http_sessions,
        )
        self._on_task_notification = on_task_notification
        self._status = ConnectionStatus(server_id=server.id, state=ConnectionState.CONNECTING)
        self._status_changed = anyio.Event()
        self._queue: deque[Work[Any]] = deque()
        self._wake = anyio.Event()
        self._demand = anyio.Event()
        self._in_flight: set[Work[Any]] = set()
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
        self.calls = PlainCalls(server, self.settings)
        """The plain calls in flight, under their limits (the user may stop one)."""
        self._extension = ExtensionWire(self)
        self._legacy = LegacyWire(self)
        self._wires: dict[TaskWire, TaskWireStrategy] = {
            TaskWire.EXTENSION: self._extension,
            TaskWire.LEGACY: self._legacy,
        }
        self._negotiated: TaskWireStrategy | None = None
        """The wire the server negotiated on the session now open (``None``: no Tasks)."""
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
            or self.calls.running
            or any(wire.busy for wire in self._wires.values())
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
                self._legacy.tools_listed(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
            return tools

        def interpret(tools: list[types.Tool]) -> list[ToolInfo]:
            return [translate.tool_info(self.server.id, tool) for tool in tools]

        def on_failure(failure: Failure, _sent: bool) -> list[ToolInfo]:
            logger.warning("%s: tools/list failed: %s", self.server.alias, failure.reason)
            return []

        return await self.submit(
            Work("tools/list", send, interpret, on_failure, self.settings.request_timeout)
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

        async def send(client: Client) -> CallOutcome | Abandoned:
            # The wire of the session it goes out on (a server without Tasks is called as the
            # 2026 wire calls: declaring the extension, the server decides).
            wire = self._negotiated or self._extension
            return await wire.call(client, tool, arguments, on_progress, call_key)

        return await self.submit(
            Work(
                f"tools/call {tool}",
                send,
                self._called,
                lambda failure, sent: translate.call_outcome_from_failure(failure, sent=sent),
                self.calls.timeout,
                before_send=on_sending,
            )
        )

    def _called(self, reply: CallOutcome | Abandoned) -> CallOutcome:
        if isinstance(reply, Abandoned):
            return StoppedByUser(reply.reason) if reply.by_user else NoAnswer(reply.reason)
        if isinstance(reply, TaskCreated):
            self.observed(reply.task.task_id, reply.task)
        return reply

    def stop_call(self, call_key: str) -> bool:
        """Stop the plain call sent with ``call_key`` (the user's stop); whether one was running."""
        return self.calls.stop(call_key)

    async def get_task(self, task_id: str, *, wire: TaskWire | None = None) -> Observation:
        """``tasks/get``: a snapshot, or why there is none (gone, unavailable, auth, malformed).

        ``wire`` is the protocol that created the task (default: the 2026 extension).
        """
        return await self._wires[wire or TaskWire.EXTENSION].get_task(task_id)

    async def update_task(
        self,
        task_id: str,
        responses: dict[str, dict[str, Any]],
        *,
        wire: TaskWire | None = None,
    ) -> AckOutcome:
        """``tasks/update`` with answers by input-request key (on the 2025-11-25 wire: the
        replies to the questions the task asked on ``tasks/result``)."""
        return await self._wires[wire or TaskWire.EXTENSION].update_task(task_id, responses)

    async def cancel_task(self, task_id: str, *, wire: TaskWire | None = None) -> AckOutcome:
        """``tasks/cancel``: a request; the server reports the outcome through ``tasks/get``."""
        return await self._wires[wire or TaskWire.EXTENSION].cancel_task(task_id)

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

        return await self.submit(
            Work(
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
        return await _listing(self, "prompts/list", library.list_prompts)

    async def list_resources(self) -> list[ResourceInfo] | Unlisted:
        """``resources/list`` then ``resources/templates/list`` (all pages of each)."""
        return await _listing(self, "resources/list", library.list_resources)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> PromptOutcome:
        """``prompts/get``: the prompt's messages as text."""
        return await self.submit(
            Work(
                f"prompts/get {name}",
                lambda client: library.get_prompt(client, name, arguments),
                lambda text: text,
                lambda failure, _sent: PromptUnavailable(failure.reason),
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
        """A question from the server: a 2025-11-25 task's (kept by that wire until the user
        answers it through the ledger) or a plain call's (handed to ``input_handler``); ``None``
        declines it.

        A task's question says so in its related-task ``_meta``. One without it is the question
        of the task that announced ``input_required`` just before, if one did (FastMCP 3.x asks
        so): kept for the user like any task's question, not handed to ``input_handler``
        (with no one there to ask, that would decline it at once)."""
        body = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        task_id = await self._legacy.task_asking(context.meta, body)
        if task_id is not None:
            return await self._legacy.ask(task_id, method, body)
        if self._input_handler is None:
            return None
        return await self._input_handler(self.server, method, body)

    # -- the queue ------------------------------------------------------------------------------

    async def submit(self, work: Work[R]) -> R:
        """Queue ``work`` for the owner task and wait for its outcome (how the task wires send
        their requests)."""
        self._last_used = time.monotonic()
        try:
            return await self._submitted(work)
        finally:
            self._last_used = time.monotonic()

    async def _submitted(self, work: Work[R]) -> R:
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
                                    self._legacy.status_said,
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
            for wire in self._wires.values():
                wire.session_ended()
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
        version = client.protocol_version
        wire = negotiated(client.server_capabilities, version)
        self._negotiated = self._wires[wire] if wire is not None else None
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
            await self._lists_changed()
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
                        await self._lists_changed()
        except MCPError as exc:
            if exc.code != translate.CONNECTION_CLOSED:
                logger.info("%s: no tool list changes: %s", self.server.alias, exc.message)
        except Exception as exc:  # noqa: BLE001  (a hint channel: never fatal)
            if not watch.over:
                logger.info("%s: tool list changes ended: %r", self.server.alias, exc)

    async def _lists_changed(self, kind: str | None = None) -> None:
        """A list of the server's changed: its prompts or resources (``kind``), else its tools."""
        if kind is not None:
            if self._on_lists_changed is not None:
                await self._on_lists_changed(kind)
            return
        self._legacy.tools_changed()
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
            if self._on_task_notification is not None and self._negotiated is not None:
                tg.start_soon(self._negotiated.follow, client.session, lambda: watch.over)
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

    async def _run(self, client: Client, watch: SessionWatch, work: Work[Any]) -> None:
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

    # -- tasks ----------------------------------------------------------------------------------

    def observed(self, task_id: str, seen: Observation) -> Observation:
        """Note what a reply or a poll said about a task: for each wire's bookkeeping and the
        listen stream (watch the tasks still running, forget ended or unknown ones)."""
        for wire in self._wires.values():
            wire.observed(task_id, seen)
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


async def _listing(
    connection: McpConnection,
    label: str,
    read: Callable[[Client, ServerDefinition], Awaitable[list[R]]],
) -> list[R] | Unlisted:
    """A listing request (prompts, resources) queued on ``connection``."""
    return await connection.submit(
        Work(
            label,
            lambda client: read(client, connection.server),
            lambda items: items,
            lambda failure, _sent: Unlisted(failure.reason),
            connection.settings.request_timeout,
        )
    )
