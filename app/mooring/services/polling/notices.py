"""Task notifications (``notifications/tasks`` frames, 2025-11-25 hints), acted on one at a
time per task, the newest first.

A notification that reports something new is applied as the observation it is (no extra poll)
and moves the next poll a full interval on; one that repeats the known state does nothing at
all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from mooring.core.errors import RecordChanged
from mooring.core.ports import ServerConnection, TaskLedger
from mooring.core.tasks.reconcile import Observation, ServerTask
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import TaskFlag
from mooring.services.keyed_locks import KeyedLocks
from mooring.services.polling.background import Background
from mooring.services.polling.recall import StoredRecords
from mooring.services.polling.recording import Recorder
from mooring.services.polling.scheduler import PollScheduler

log = logging.getLogger("mooring.tasks")

PROGRESS_EVERY = 0.5
"""Seconds: a task's notifications that only move its status message on (progress) are
written at most this often (the newest one then); any other news is written at once."""

Observe = Callable[[TaskRecord, Observation, ServerConnection | None], Awaitable[TaskRecord]]
"""Persist and tell a notification's news (the monitor's ``observe``, not ``polled``)."""


class TaskNotices:
    """The gateway's task listener: each task's notifications, in order, newest first."""

    def __init__(
        self,
        *,
        ledger: TaskLedger,
        schedule: PollScheduler,
        recorder: Recorder,
        locks: KeyedLocks,
        stored: StoredRecords,
        background: Background,
        observe: Observe,
        forget: Callable[[str], None],
    ) -> None:
        self._ledger = ledger
        self._schedule = schedule
        self._recorder = recorder
        self._locks = locks
        self._stored = stored
        self._background = background
        self._observe = observe
        self._forget = forget
        self._notices: dict[tuple[str, str], Notices] = {}
        """Per (server, task id) with notifications being acted on: the newest one waiting."""

    def notified(self, server_id: str, task_id: str, seen: Observation | None) -> None:
        """A ``notifications/tasks`` frame (or a 2025-11-25 hint) about ``task_id``, acted on
        in the background by :meth:`take` — one at a time per task, the newest first (see
        :meth:`_take_all`)."""
        key = (server_id, task_id)
        notices = self._notices.get(key)
        if notices is not None:
            notices.offer(seen)
            return
        # A tracked task's record is known: its first frame needs no look-up by task id (a
        # stream's replay as it opens brings one for each).
        notices = self._notices[key] = Notices(
            seen, record_id=self._schedule.record_of(server_id, task_id)
        )
        self._background.spawn(self._take_all(key, notices))

    async def _take_all(self, key: tuple[str, str], notices: Notices) -> None:
        """Act on one task's notifications, one at a time, newest first.

        Each frame carries the whole task, so a frame still waiting is replaced by a newer one
        (a chatty server's progress cannot queue up ahead of its completion), and a frame that
        only moves the status message on is taken at most every :data:`PROGRESS_EVERY` seconds
        (the newest then); any other news is taken at once.
        """
        server_id, task_id = key
        loop = asyncio.get_running_loop()
        try:
            while notices.waiting:
                wait = notices.taken_at + PROGRESS_EVERY - loop.time()
                if wait > 0 and progress_only(notices.last, notices.newest):
                    notices.wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(notices.wake.wait(), wait)
                    continue
                seen, notices.waiting = notices.newest, False
                notices.record_id = await self._take(server_id, task_id, seen, notices.record_id)
                if isinstance(seen, ServerTask):
                    notices.last, notices.taken_at = seen, loop.time()
        finally:
            del self._notices[key]

    async def take(self, server_id: str, task_id: str, seen: Observation | None) -> None:
        """Act on a task notification (the gateway's listener runs this for each one).

        A frame whose task tells something new is applied as the observation it is — persisted,
        told, the next poll a full interval later — without a ``tasks/get``; one that repeats
        what the record holds does nothing (no poll, no write, no event). A bare hint
        (2025-11-25: ``seen`` is ``None``) is looked at once; anything else waits for the next
        poll.
        """
        await self._take(server_id, task_id, seen, None)

    async def _take(
        self, server_id: str, task_id: str, seen: Observation | None, record_id: str | None
    ) -> str | None:
        """:meth:`take`, given the record's id when it is known already; returns it."""
        if seen is not None and not isinstance(seen, ServerTask):
            return record_id  # not a task to apply: the next poll reads it
        if record_id is None or seen is None:
            found = await self._ledger.by_task_id(server_id, task_id)
            if found is None or not found.is_monitored:
                return None
            if seen is None:
                self._recorder.count_notification(found.id)
                if self._schedule.server_of(found.id) is None:
                    self._schedule.locate(found.id, found.server_id)
                self._schedule.soon(found.id, disciplined=False)
                return found.id
            record_id = found.id
        try:
            async with self._locks.hold(record_id):
                record = await self._ledger.get(record_id)
                if (
                    record is None
                    or not record.is_monitored
                    or not await self._is_news(record, seen)
                ):
                    return record_id
                self._recorder.count_notification(record.id)
                try:
                    # Told on an open connection: it is looked up only if answers or a cancel
                    # must go back (after the listeners were told).
                    await self._observe(record, seen, None)
                except RecordChanged:
                    log.info("task %s changed elsewhere; the next poll reads it", record.id)
                    self._stored.drop(record.id)
        finally:
            self._forget(record_id)  # only if it is over (neither scheduled nor in flight)
        return record_id

    async def _is_news(self, record: TaskRecord, seen: ServerTask) -> bool:
        """Whether ``seen`` tells more than the record already holds."""
        if seen.task_id != record.task_id:
            return False
        if record.flags & {TaskFlag.STATUS_UNAVAILABLE, TaskFlag.AUTH_REQUIRED}:
            return True  # the server answers again: worth saying
        known = (record.server_status, record.status_message)
        if known != (seen.status, seen.status_message) or (
            record.poll_interval_ms,
            record.ttl_ms,
        ) != (seen.poll_interval_ms, seen.ttl_ms):
            return True
        if not seen.input_requests:
            return False
        asked = {item.key for item in await self._ledger.inputs(record.id)}
        return not set(seen.input_requests) <= asked


def progress_only(last: Observation | None, seen: Observation | None) -> bool:
    """Whether ``seen`` differs from the frame ``last`` taken only in its status message."""
    if not isinstance(last, ServerTask) or not isinstance(seen, ServerTask):
        return False
    return (
        seen.status == last.status
        and seen.status not in _TERMINAL_STATUSES
        and seen.task_id == last.task_id
        and (seen.poll_interval_ms, seen.ttl_ms) == (last.poll_interval_ms, last.ttl_ms)
        and seen.input_requests.keys() == last.input_requests.keys()
        and (seen.result, seen.error) == (last.result, last.error)
    )


_TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


@dataclass(eq=False, slots=True)
class Notices:
    """One task's notifications being acted on: the newest still waiting, the last taken."""

    newest: Observation | None
    waiting: bool = True
    """Whether ``newest`` is still to be taken."""
    last: ServerTask | None = None
    taken_at: float = -math.inf
    """Loop time when ``last`` was taken."""
    record_id: str | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def offer(self, seen: Observation | None) -> None:
        """A newer frame replaces the one waiting; it is taken at once unless it is progress
        only."""
        self.newest, self.waiting = seen, True
        if not progress_only(self.last, seen):
            self.wake.set()
