"""What a connection and its task wires share about requests: the settings that bound them, a
request queued for the connection's owner task (:class:`Work`), and plain ``tools/call``
requests held to their idle and total limits (:class:`PlainCalls`).

:class:`~mooring.mcp.connection.McpConnection` runs the queue; the task wires
(:mod:`mooring.mcp.wire`) build the requests of their protocol and submit them to it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

import anyio
from mcp.client import Client
from opentelemetry import context as otel_context

from mooring.core.servers import ServerDefinition
from mooring.core.tasks.calls import Progress
from mooring.mcp.translate import Failure

logger = logging.getLogger("mooring.mcp.connection")

R = TypeVar("R")


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
class Work(Generic[R]):
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


@dataclass(frozen=True, slots=True)
class Abandoned:
    """A plain call Mooring stopped waiting for (the SDK told the server with
    ``notifications/cancelled``)."""

    by_user: bool
    reason: str


@dataclass(eq=False)
class _CallWatch:
    """A plain call in flight: its limits' cancel scope, and whether the user stopped it."""

    scope: anyio.CancelScope | None = None
    stopped: bool = False

    def stop(self) -> None:
        self.stopped = True
        if self.scope is not None:
            self.scope.cancel()


class PlainCalls:
    """The ``tools/call`` requests of one connection that run before the server answers, each
    under the server's :class:`CallLimits` and stoppable by the key the caller gave it."""

    def __init__(self, server: ServerDefinition, settings: ConnectionSettings) -> None:
        self._server = server
        self._settings = settings
        self._calls: dict[str, _CallWatch] = {}

    @property
    def limits(self) -> CallLimits:
        """The server's limits (by alias, then id), or the connection's defaults."""
        limits = self._settings.server_call_limits
        found = limits.get(self._server.alias) or limits.get(self._server.id)
        return found or CallLimits(self._settings.call_idle_timeout, self._settings.call_timeout)

    @property
    def timeout(self) -> float:
        """The deadline of a queued ``tools/call``: the longest it may run, and time to answer."""
        return self.limits.max_time + self._settings.request_timeout

    @property
    def running(self) -> bool:
        """Whether a call with a key is in flight."""
        return bool(self._calls)

    def stop(self, call_key: str) -> bool:
        """Stop the call sent with ``call_key`` (the user's stop); whether one was running."""
        watch = self._calls.get(call_key)
        if watch is None:
            return False
        watch.stop()
        return True

    async def watched(
        self,
        call: Callable[[Any], Awaitable[R]],
        on_progress: ProgressListener | None,
        call_key: str | None,
    ) -> R | Abandoned:
        """Run ``call`` (given the SDK progress callback) under the idle and total limits."""
        limits = self.limits
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
            return Abandoned(by_user=True, reason=STOPPED_BY_YOU)
        if anyio.current_time() >= start + limits.max_time:
            why = f"still no answer after the maximum of {limits.max_time:g} s"
        else:
            why = f"no sign of life from the server for {limits.idle_timeout:g} s"
        return Abandoned(
            by_user=False, reason=f"{why}; Mooring stopped waiting and told the server to stop"
        )
