"""One ``subscriptions/listen`` stream per connection for the tasks it watches (2026 wire).

The Tasks extension (SEP-2663) subscribes by a fixed list of ``taskIds``: a listen request can
neither follow "every task of the session" nor be amended, and a server answers each new
request with the current state of every listed task. So :class:`TaskSubscription`

* opens a stream only while someone wants notifications (a long-lived watcher: the window,
  ``mooring tasks watch``, ``mooring chat``); one-shot commands never open one;
* opens the first stream at once, and takes tasks seen later into a replacement stream with the
  full set (the old stream stays open until then): at most once per ``reopen_after`` seconds,
  and sooner while few tasks are watched — a reopen makes the server replay every listed task,
  so reopens are spaced to keep that replay under a :class:`ReplayBudget` of frames a second,
  which the listening connections of a gateway share (a task that starts among a few others is
  heard of within a fraction of a second, not seconds; ten servers reconciling 1,000 tasks at
  launch do not replay 2,000 frames a second at the window between them);
  tasks that end are simply dropped at the next reopen (a last stream is closed when none is
  left);
* remembers the last state it saw of each watched task (from ``tasks/get``, the call that
  created it, or a frame) and drops a frame that repeats it — the replay after a reopen costs a
  dictionary look-up per task, not a database read — and frames about tasks it did not ask for;
* knows which tasks the server *covers*: those its ``notifications/subscriptions/acknowledged``
  accepted on the stream now open. The poller asks about a covered task only as a safety net; so
  when a stream ends (the server closed it, it failed, the connection went) rather than being
  replaced, the tasks it covered are handed to ``on_lost`` at once and polled normally again. A
  replacement keeps them covered until its own acknowledgement: the server replays every listed
  task's state when the new stream opens, so nothing said in between is lost.

A frame that reports something new is handed on as the observation it is (it carries the full
``DetailedTask``); a malformed one is logged and dropped (the next poll reads the task); the
2025-11-25 wire's hints are handed on without one (``None``: only ``tasks/get`` can tell).
"""

from __future__ import annotations

import logging
import math
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

import anyio
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from mooring.core.tasks.reconcile import MalformedReply, Observation, ServerTask, TaskGone
from mooring.mcp import tasks_ext, translate

logger = logging.getLogger("mooring.mcp.listen")

TaskNotified = Callable[[str, Observation | None], Awaitable[None]]
"""Told ``(task_id, observation)`` of news about a task; ``None``: something happened, look."""

CoverageChanged = Callable[[frozenset[str], bool], None]
"""Told ``(task_ids, covered)``: the server now reports these tasks' changes on the open
stream (``True``), or no longer does (``False``: poll them normally again)."""

_TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})

_Marker = tuple[object, ...]


def _marker(seen: ServerTask) -> _Marker:
    """What makes a task's state news to the user (``lastUpdatedAt`` alone is not)."""
    return (
        seen.status,
        seen.status_message,
        seen.poll_interval_ms,
        seen.ttl_ms,
        frozenset(seen.input_requests),
        seen.result is not None,
        seen.error is not None,
    )


class ReplayBudget:
    """How many replayed frames a second the listen streams of one gateway may cost, together:
    each stream that is listening gets an equal share (its server's replays and the host's
    reading of them are the cost; ten streams at the full rate each were ten times it)."""

    def __init__(self, per_second: float) -> None:
        self.per_second = per_second
        self._members: weakref.WeakSet[TaskSubscription] = weakref.WeakSet()

    def join(self, member: TaskSubscription) -> None:
        """Count ``member`` among those sharing the budget while it listens."""
        self._members.add(member)

    def share(self) -> float:
        """The frames a second one listening stream may cost now."""
        listening = sum(1 for member in self._members if member.listening)
        return self.per_second / max(1, listening)


class TaskSubscription:
    """The listen half of one connection: what it watches, and the one stream for it."""

    def __init__(
        self,
        *,
        alias: str,
        reopen_after: float,
        notify: TaskNotified | None,
        replay_budget: ReplayBudget | None = None,
        on_coverage: CoverageChanged | None = None,
    ) -> None:
        """``replay_budget``: shared with the gateway's other connections (``None``: reopen
        once per ``reopen_after`` whatever the number of tasks watched)."""
        self._alias = alias
        self._on_coverage = on_coverage
        self._covered: frozenset[str] = frozenset()
        self._reopen_after = reopen_after
        self._budget = replay_budget
        if replay_budget is not None:
            replay_budget.join(self)
        self._running = False
        self._notify = notify
        self._wanted = False
        self._watched: set[str] = set()
        self._seen: dict[str, _Marker] = {}
        self._listened: frozenset[str] = frozenset()
        self._opened_at = -math.inf
        self._scope: anyio.CancelScope | None = None
        self._changed = anyio.Event()
        self.opened = 0
        """How many listen requests this connection sent (for diagnostics and tests)."""

    # -- what to watch ---------------------------------------------------------------------------

    @property
    def wanted(self) -> bool:
        """Whether a long-lived watcher wants task notifications from this connection."""
        return self._wanted

    def want(self, wanted: bool) -> None:
        """Open (or close) the stream; the watched set is kept either way."""
        if wanted == self._wanted:
            return
        self._wanted = wanted
        if not wanted and self._scope is not None:
            self._scope.cancel()
        self._changed.set()

    @property
    def listening(self) -> bool:
        """Whether this subscription wants a stream for its tasks on a live session: one is
        open, about to open, or (once the server closed one) waiting for news to open again."""
        return self._running and self._wanted and bool(self._watched)

    @property
    def watched(self) -> frozenset[str]:
        """The task ids still running, as last seen."""
        return frozenset(self._watched)

    def observed(self, task_id: str, seen: Observation) -> None:
        """Note what ``tasks/get`` (or the call that created it) said about ``task_id``."""
        if isinstance(seen, ServerTask):
            if seen.status in _TERMINAL:
                self._unwatch(task_id)
            else:
                self._seen[task_id] = _marker(seen)
                self._watch(task_id)
        elif isinstance(seen, TaskGone):
            self._unwatch(task_id)

    def _watch(self, task_id: str) -> None:
        if task_id in self._watched:
            return
        self._watched.add(task_id)
        if self._scope is not None and task_id not in self._listened:
            # Keep the current stream until the reopen window has passed, then take all.
            self._scope.deadline = min(self._scope.deadline, self._opened_at + self.reopen_window)
        self._changed.set()

    def _unwatch(self, task_id: str) -> None:
        self._seen.pop(task_id, None)
        self._covered -= {task_id}
        if task_id not in self._watched:
            return
        self._watched.discard(task_id)
        if not self._watched and self._scope is not None:
            self._scope.cancel()  # nothing left to hear about
        self._changed.set()

    # -- what the server covers ------------------------------------------------------------------

    def covers(self, task_id: str) -> bool:
        """Whether the open stream's server accepted ``task_id``: it reports its changes."""
        return task_id in self._covered

    def acknowledged(self, task_ids: Sequence[str]) -> None:
        """The server's ``notifications/subscriptions/acknowledged`` for the open stream: the
        task ids it accepted (a server without the feature accepts none)."""
        if self._scope is None:
            return  # no task stream open: not ours
        covered = frozenset(task_ids) & self._listened & self._watched
        gained, lost = covered - self._covered, self._covered - covered
        self._covered = covered
        self._tell_coverage(lost, covered=False)
        self._tell_coverage(gained, covered=True)

    def _lose_coverage(self) -> None:
        lost, self._covered = self._covered, frozenset()
        self._tell_coverage(lost, covered=False)

    def _tell_coverage(self, task_ids: frozenset[str], *, covered: bool) -> None:
        if task_ids and self._on_coverage is not None:
            try:
                self._on_coverage(task_ids, covered)
            except Exception:  # a listener's fault must not end the stream
                logger.exception("%s: coverage listener failed", self._alias)

    # -- what arrives ----------------------------------------------------------------------------

    async def frame(self, params: tasks_ext.TaskNotificationParams) -> None:
        """A ``notifications/tasks`` frame: hand on news, drop repeats and strangers."""
        task_id = params.task_id
        if task_id not in self._listened:
            return  # not asked for on this connection's stream
        seen = translate.observation(params, task_id=task_id)
        if isinstance(seen, MalformedReply):
            # Not news: the next poll reads the task (tasks/get stays the authority).
            logger.debug("%s: malformed task notification: %s", self._alias, seen.detail)
            return
        if isinstance(seen, ServerTask) and self._seen.get(task_id) == _marker(seen):
            return  # a repeat (e.g. the replay after a reopen): nothing to do
        self.observed(task_id, seen)
        await self._tell(task_id, seen)

    async def hint(self, task_id: str) -> None:
        """Something happened to ``task_id`` that only ``tasks/get`` can tell (2025-11-25)."""
        await self._tell(task_id, None)

    async def _tell(self, task_id: str, seen: Observation | None) -> None:
        if self._notify is not None:
            await self._notify(task_id, seen)

    # -- the stream ------------------------------------------------------------------------------

    async def run(self, session: ClientSession, over: Callable[[], bool]) -> None:
        """Hold the stream while it is wanted and there is something to watch, for one session.

        Only a hint channel: a server that refuses task subscriptions is not asked again on
        this session, and polling carries on.
        """
        self._listened = frozenset()
        self._running = True
        try:
            while not over():
                if not self._wanted or not self._watched:
                    self._lose_coverage()
                    await self._next_change()
                    continue
                wait = self._opened_at + self.reopen_window - anyio.current_time()
                if wait > 0:
                    await anyio.sleep(wait)  # the coalescing window: more tasks may come
                    continue
                ended = await self._listen_once(session)
                if ended is None:
                    return
                if ended:
                    self._lose_coverage()
                    await self._next_change()  # the server closed it: listen again on news
        finally:
            self._running = False
            self._lose_coverage()  # the session is over (or we gave up on it): poll again

    @property
    def reopen_window(self) -> float:
        """How long a stream is kept now before a reopen takes in the tasks seen since, in
        seconds (without a replay budget: ``reopen_after``)."""
        if self._budget is None:
            return self._reopen_after
        share = self._budget.share()
        if share <= 0:
            return self._reopen_after
        return min(self._reopen_after, len(self._watched) / share)

    async def _next_change(self) -> None:
        self._changed = anyio.Event()
        await self._changed.wait()

    async def _listen_once(self, session: ClientSession) -> bool | None:
        """One listen request for the whole watched set. ``True``: the server ended it;
        ``False``: replaced or closed on purpose; ``None``: give up on this session."""
        task_ids = sorted(self._watched)
        self._listened = frozenset(task_ids)
        self._opened_at = anyio.current_time()
        self.opened += 1
        with anyio.CancelScope() as scope:
            self._scope = scope
            try:
                await tasks_ext.listen_for_tasks(session, task_ids)
            except MCPError as exc:
                if exc.code != translate.CONNECTION_CLOSED:
                    logger.info("%s: no task notifications: %s", self._alias, exc.message)
                return None
            except Exception as exc:  # noqa: BLE001  (a hint channel: never fatal)
                logger.info("%s: task notifications ended: %r", self._alias, exc)
                return None
            finally:
                self._scope = None
        return not scope.cancelled_caught
