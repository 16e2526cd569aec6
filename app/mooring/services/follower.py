"""Following tasks that another Mooring process polls, from the database.

One process per data folder polls servers (it holds the :class:`~mooring.core.ports.PollerLock`):
the window or a ``mooring tasks watch``. Any other process follows instead: it re-reads each
task's record from the ledger at the task's poll interval and tells its listeners what changed,
exactly as the poller wrote it — so a server sees one set of status requests, however many
windows and watchers look. When the poller goes away, the follower takes the lock over and
hands its tasks to its own monitor.

It offers the monitor's ``track`` / ``run`` / ``stop``, so a caller can drive either.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from mooring.core.clock import Clock
from mooring.core.events import EventBus, TaskDidChange
from mooring.core.ports import AccountBook, PollerLock, ServerCatalog, TaskLedger
from mooring.core.tasks.record import TaskRecord
from mooring.services.task_monitor import TaskMonitor

log = logging.getLogger("mooring.tasks")

DEFAULT_INTERVAL = timedelta(seconds=1)
"""How often a record is re-read when its server gave no ``pollIntervalMs``."""
SHORTEST = timedelta(milliseconds=50)
LONGEST = timedelta(seconds=30)
LOOK_AGAIN = timedelta(seconds=2)
"""A follower looks at the lock (and, discovering, for new tasks) at least this often."""


def reread_interval(record: TaskRecord) -> timedelta:
    """How long to wait before reading ``record`` again: the task's poll interval, bounded."""
    if record.poll_interval_ms is None:
        return DEFAULT_INTERVAL
    return min(max(timedelta(milliseconds=record.poll_interval_ms), SHORTEST), LONGEST)


class DatabaseFollower:
    """Follows records another process polls; takes polling over when the lock frees."""

    def __init__(
        self,
        *,
        ledger: TaskLedger,
        events: EventBus,
        clock: Clock,
        lock: PollerLock,
        monitor: TaskMonitor,
        on_takeover: Callable[[], None] | None = None,
        discover: bool = False,
    ) -> None:
        self._ledger = ledger
        self.discover = discover
        """Also follow tasks that appear in the ledger later (the window: every task)."""
        self._events = events
        self._clock = clock
        self._lock = lock
        self._monitor = monitor
        self.on_takeover = on_takeover
        """Called once this process holds the lock and its monitor polls."""
        self._latest: dict[str, TaskRecord] = {}
        self._inputs: dict[str, set[str]] = {}
        self._due: dict[str, datetime] = {}
        self._wake = asyncio.Event()
        self._stopping = False
        self._polling = False
        self._scanned_at: datetime | None = None

    @property
    def polling(self) -> bool:
        """Whether this process took polling over (its monitor now polls the tasks)."""
        return self._polling

    def track(self, record: TaskRecord, *, now: bool = False) -> None:
        """Follow ``record`` (read it again at once with ``now``)."""
        if self._polling:
            self._monitor.track(record, now=now)
            return
        if not record.is_monitored:
            return
        self._latest.setdefault(record.id, record)
        self._due[record.id] = (
            self._clock.now() if now else self._clock.now() + reread_interval(record)
        )
        self._wake.set()

    async def run(self) -> None:
        """Follow until :meth:`stop`; once the lock is free, poll with the monitor instead.

        The lock is tried at least every :data:`LOOK_AGAIN`, tasks or not.
        """
        self._stopping = False
        while not self._stopping:
            if self._lock.try_acquire():
                await self._take_over()
                return
            if self.discover and (
                self._scanned_at is None or self._clock.now() - self._scanned_at >= LOOK_AGAIN
            ):
                await self.discover_new()
            now = self._clock.now()
            for record_id, at in sorted(self._due.items(), key=lambda item: item[1]):
                if at <= now and not self._stopping:
                    await self._check(record_id)
            timeout = LOOK_AGAIN.total_seconds()
            if self._due:
                due = (min(self._due.values()) - self._clock.now()).total_seconds()
                timeout = min(max(due, 0), timeout)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)

    async def discover_new(self) -> list[TaskRecord]:
        """Follow the monitored tasks of the ledger not followed yet; returns them. (A look
        made here, by the window before it follows, counts as :meth:`run`'s first.)"""
        self._scanned_at = self._clock.now()
        if await self._ledger.unfinished_ids() <= self._latest.keys():
            return []  # nothing new (a look at the ids, not a read of every record)
        found = [
            r
            for r in await self._ledger.unfinished()
            if r.is_monitored and r.id not in self._latest
        ]
        for record in found:
            self.track(record)
        return found

    async def stop(self) -> None:
        """Stop following (and polling, if it took over)."""
        self._stopping = True
        self._wake.set()
        if self._polling:
            await self._monitor.stop()

    async def _check(self, record_id: str) -> None:
        previous = self._latest[record_id]
        record = await self._ledger.get(record_id)
        if record is None:
            self._due.pop(record_id, None)
            return
        inputs = await self._ledger.inputs(record_id)
        if record_id not in self._inputs:  # what was asked before we looked is not news
            self._inputs[record_id] = {i.key for i in inputs if i.created_at <= previous.updated_at}
        seen = self._inputs[record_id]
        new_inputs = tuple(i for i in inputs if i.key not in seen)
        seen.update(i.key for i in new_inputs)
        self._latest[record_id] = record
        if record.updated_at != previous.updated_at or new_inputs:
            self._events.emit(
                TaskDidChange(record, previous.state, new_inputs, note="changed elsewhere")
            )
        if record.is_monitored:
            self._due[record_id] = self._clock.now() + reread_interval(record)
        else:
            self._due.pop(record_id, None)

    async def _take_over(self) -> None:
        log.info("the poller lock is free: this process polls its %d task(s) now", len(self._due))
        self._polling = True
        for record_id in list(self._due):
            await self._check(record_id)  # the last poller may have finished it: tell first
            if record_id in self._due:
                self._monitor.track(self._latest[record_id], now=True)
        self._due.clear()
        if self.on_takeover is not None:
            self.on_takeover()
        await self._monitor.run()


ADOPT_EVERY = timedelta(seconds=2)
"""How often the polling process looks for tasks that other processes started."""


class Adopter:
    """The polling process's duty to every task of its data folder: tasks started elsewhere
    (``mooring call --detach``, a following window) are found in the ledger and polled too, so
    a process that follows them is never left waiting on nobody."""

    def __init__(
        self,
        *,
        ledger: TaskLedger,
        catalog: ServerCatalog,
        accounts: AccountBook,
        monitor: TaskMonitor,
        known: set[str] | None = None,
        every: timedelta = ADOPT_EVERY,
    ) -> None:
        self._ledger = ledger
        self._catalog = catalog
        self._accounts = accounts
        self._monitor = monitor
        self._known = set(known or ())
        self._every = every

    def knows(self, record_ids: set[str]) -> None:
        """These are polled already (by whoever started or reconciled them here)."""
        self._known |= record_ids

    async def adopt(self) -> list[TaskRecord]:
        """Hand every monitored task not yet known to the monitor; returns them. A task whose
        server or account was removed is left alone (reconciliation explains it instead)."""
        if await self._ledger.unfinished_ids() <= self._known:
            return []  # nothing new (a look at the ids, not a read of every record)
        found = []
        removed: dict[str, bool] = {}  # per server, then per account: one read each
        for record in await self._ledger.unfinished():
            if not record.is_monitored or record.id in self._known:
                continue
            self._known.add(record.id)
            if record.server_id not in removed:
                removed[record.server_id] = await self._catalog.is_removed(record.server_id)
            profile = record.credential_profile_id
            if profile is not None and profile not in removed:
                removed[profile] = await self._accounts.is_profile_removed(profile)
            if removed[record.server_id] or (profile is not None and removed[profile]):
                continue
            found.append(record)
        # All at once: each server's listen stream then opens with every task it will watch,
        # not with the first few and a reopen (and a replay of them all) for each later one.
        for record in found:
            self._monitor.track(record)
        if found:
            log.info("polling %d task(s) started by other processes", len(found))
        return found

    async def run(self) -> None:
        """Adopt new tasks every ``every`` until cancelled."""
        while True:
            await self.adopt()
            await asyncio.sleep(self._every.total_seconds())
