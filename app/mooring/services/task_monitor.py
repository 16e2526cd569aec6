"""Watching every active task with one scheduler.

One asyncio task sleeps until the earliest planned poll is due (the pure schedule,
:mod:`mooring.services.polling.scheduler`), or until something wakes it (a new task, a
notification, a cancel). Due records wait in their server's line and are polled as its
``per_server`` slots free up (:mod:`~mooring.services.polling.lines`), so no server gets more
than ``per_server`` status requests at once.

Each poll: load the record (or take the copy kept, :mod:`~mooring.services.polling.recall`),
``tasks/get`` through the task's own server connection and account, reconcile (pure), persist,
then tell listeners ("write, then tell"), then plan the next poll
(:mod:`~mooring.services.polling.observer`). Its other parts: the listen streams and coverage
(:mod:`~mooring.services.polling.streams`), notifications
(:mod:`~mooring.services.polling.notices`), answers and cancels
(:mod:`~mooring.services.polling.delivery`), polls that keep failing
(:mod:`~mooring.services.polling.failures`). One lock per task serialises its poll, a
reconciliation's check, a notification, an answer and a cancel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable
from datetime import datetime
from typing import Any

from mooring.core.clock import Clock
from mooring.core.errors import RecordChanged
from mooring.core.events import AnswerDidSettle, EventBus
from mooring.core.ports import Gateway, ServerCatalog, ServerConnection, TaskLedger
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.polling import PollPolicy
from mooring.core.tasks.reconcile import Observation
from mooring.core.tasks.record import TaskRecord
from mooring.services.keyed_locks import KeyedLocks
from mooring.services.polling.background import Background
from mooring.services.polling.delivery import GONE_ANSWER, LATE_ANSWER, Delivery
from mooring.services.polling.failures import PollFailures
from mooring.services.polling.lines import ServerLines, Turn
from mooring.services.polling.notices import PROGRESS_EVERY, TaskNotices, progress_only
from mooring.services.polling.observer import Observer
from mooring.services.polling.recall import (
    RECORD_REREAD,
    SERVER_REREAD,
    ServerDirectory,
    Stored,
    StoredRecords,
)
from mooring.services.polling.recording import Recorder
from mooring.services.polling.scheduler import POLL_TICK, PollScheduler
from mooring.services.polling.streams import ListenStreams
from mooring.services.telling import IssueDesk, TaskWriter

__all__ = [
    "GONE_ANSWER",
    "LATE_ANSWER",
    "POLL_TICK",
    "PROGRESS_EVERY",
    "RECORD_REREAD",
    "SERVER_REREAD",
    "TaskMonitor",
    "progress_only",
]

log = logging.getLogger("mooring.tasks")


class TaskMonitor:
    """Polls every monitored task on one schedule; answers and cancels on the user's behalf."""

    def __init__(
        self,
        *,
        ledger: TaskLedger,
        catalog: ServerCatalog,
        gateway: Gateway,
        events: EventBus,
        clock: Clock,
        policy: PollPolicy | None = None,
        per_server: int = 4,
        jitter: Callable[[], float] = random.random,
        issues: IssueDesk | None = None,
    ) -> None:
        self._ledger = ledger
        self._clock = clock
        self._writer = TaskWriter(ledger=ledger, events=events)
        self._wake = asyncio.Event()
        self._stopping = False
        self._locks = KeyedLocks()
        self._background = Background()
        self._schedule = PollScheduler(
            clock=clock, policy=policy or PollPolicy(), jitter=jitter, wake=self._wake.set
        )
        self._lines = ServerLines(
            per_server=per_server, take_turn=self._take_turn, abandoned=self._abandoned
        )
        self._failures = PollFailures(schedule=self._schedule, clock=clock, issues=issues)
        self._servers = ServerDirectory(
            catalog=catalog, gateway=gateway, events=events, clock=clock
        )
        self._stored = StoredRecords(events)
        self._recorder = Recorder(ledger=ledger, writer=self._writer, clock=clock)
        self._streams = ListenStreams(
            gateway=gateway, servers=self._servers, background=self._background
        )
        self._delivery = Delivery(
            ledger=ledger,
            events=events,
            writer=self._writer,
            clock=clock,
            locks=self._locks,
            servers=self._servers,
            stored=self._stored,
            schedule=self._schedule,
            recorder=self._recorder,
        )
        self._observer = Observer(
            ledger=ledger,
            writer=self._writer,
            clock=clock,
            locks=self._locks,
            schedule=self._schedule,
            streams=self._streams,
            servers=self._servers,
            stored=self._stored,
            delivery=self._delivery,
            recorder=self._recorder,
        )
        self._notices = TaskNotices(
            ledger=ledger,
            schedule=self._schedule,
            recorder=self._recorder,
            locks=self._locks,
            stored=self._stored,
            background=self._background,
            observe=self._observer.notice,
            forget=self._forget,
        )
        gateway.add_task_listener(self.notified)
        gateway.add_coverage_listener(self.coverage_changed)

    # -- scheduling ----------------------------------------------------------------------------

    @property
    def scheduled(self) -> int:
        """How many tasks wait for their next poll."""
        return self._schedule.scheduled

    def due_at(self, record_id: str) -> datetime | None:
        """When the record's next poll is planned (``None``: not scheduled)."""
        return self._schedule.due_at(record_id)

    def track(self, record: TaskRecord, *, now: bool = False) -> None:
        """Watch ``record``: at its planned time, or at once with ``now`` — never sooner than
        its poll interval after the last word from its server. A running task is put on its
        server's listen stream first (see :meth:`PollScheduler.track`)."""
        if not record.is_monitored:
            return
        self._schedule.locate(record.id, record.server_id)  # saves a read per poll
        self._schedule.remember(record)
        on_stream = self._streams.expect(record)
        self._schedule.track(record, now=now, on_stream=on_stream)

    def untrack(self, record_id: str) -> None:
        """Stop watching a record (its server or account was removed): no further polls."""
        self._schedule.unschedule(record_id)
        self._forget(record_id)

    def poll_soon(self, record_id: str) -> None:
        """Ask the server about this record as soon as its poll interval allows."""
        self._schedule.soon(record_id)

    def coverage_changed(self, server_id: str, task_ids: frozenset[str], covered: bool) -> None:
        """The gateway's coverage listener: a covered task's next poll moves out to the safety
        net; one no longer covered is polled again within its interval (see
        :meth:`PollScheduler.cover`)."""
        self._schedule.cover(server_id, task_ids, covered)

    # -- notifications -------------------------------------------------------------------------

    def notified(self, server_id: str, task_id: str, seen: Observation | None) -> None:
        """The gateway's task listener: acted on in the background, one at a time per task, the
        newest first (:class:`~mooring.services.polling.notices.TaskNotices`)."""
        self._notices.notified(server_id, task_id, seen)

    async def take_notice(self, server_id: str, task_id: str, seen: Observation | None) -> None:
        """Act on a task notification now: news is persisted and told without a ``tasks/get``,
        a repeat does nothing, a bare hint (``seen`` is ``None``) is looked at at once."""
        await self._notices.take(server_id, task_id, seen)

    async def emit_run_span(self, record: TaskRecord) -> None:
        """Trace the task's run, creation to terminal state, once it is known to be over."""
        await self._recorder.emit_run_span(record)

    # -- the loop ------------------------------------------------------------------------------

    async def run(self) -> None:
        """The scheduler loop; runs until :meth:`stop` (and may be started again after).

        While it runs, the gateway holds task notification streams (a one-shot command that
        never runs the loop opens none).
        """
        self._stopping = False
        self._lines.open()
        self._streams.open()
        try:
            await self._loop()
        finally:
            self._streams.close()

    async def _loop(self) -> None:
        while not self._stopping:
            for record_id in self._schedule.take_due():
                self._lines.queue(record_id, self._schedule.server_of(record_id))
            timeout = None
            until = self._schedule.next_due()
            if until is not None:
                self._schedule.asleep_until = until
                timeout = max((until - self._clock.now()).total_seconds(), 0.0)
            self._wake.clear()
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout)
            finally:
                self._schedule.asleep_until = None

    async def stop(self) -> None:
        """Stop scheduling; polls in flight are abandoned (their writes complete or not at all:
        each is one transaction on the writer thread), and those waiting are not made: both are
        planned again, for a later :meth:`run`. The checks of polls already answered are
        stored."""
        self._stopping = True
        self._wake.set()
        await self._lines.close()
        # The checks of polls already answered are kept (gathered to be stored together).
        with contextlib.suppress(Exception):  # a failure was logged; the records are as before
            await self._ledger.store_checks()
        for record_id in self._lines.take_waiting():
            self._abandoned(record_id)
        self._background.cancel()

    async def _take_turn(self, turn: Turn) -> None:
        """One poll in one of the server's slots. The slot is free again as soon as the server
        answered: storing and telling what it said ask nothing of the server (and a check that
        found nothing new waits a moment to be stored with its tick's others)."""
        turn.started = True
        if turn.server_id is None:
            await self._find_server(turn.record_id)
        else:
            await self._poll(turn.record_id, answered=turn.free)

    async def _find_server(self, record_id: str) -> None:
        """A due record whose server is not known here yet: read it, then line it up."""
        try:
            found = await self._ledger.get(record_id)
        except Exception as exc:  # noqa: BLE001  (logged by PollFailures.failed, retried)
            await self._failures.failed(record_id, exc)
            found = None
        except asyncio.CancelledError:
            self._abandoned(record_id)  # stopping: a later run reads it
            raise
        if found is None:
            self._polled(record_id)
            return
        self._schedule.locate(record_id, found.server_id)
        self._lines.queue(record_id, found.server_id)

    # -- one poll ------------------------------------------------------------------------------

    async def _poll(self, record_id: str, *, answered: Callable[[], None] | None = None) -> None:
        """Poll one due record, in one of its server's poll slots (``answered`` is called once
        the server's answer is in)."""
        try:
            async with self._locks.hold(record_id):
                now = self._clock.now()
                held = self._stored.take(record_id)  # none while in flight
                if held is None or now - held.read_at >= RECORD_REREAD:
                    # Read inside the gate: another process may have moved it on meanwhile.
                    # Its inputs come in the same read (answer delivery needs them).
                    read = await self._ledger.with_inputs(record_id)
                    if read is None:
                        return
                    held = Stored(*read, read_at=now)
                if not held.record.is_monitored:
                    # Finished elsewhere (another window or command): tell our listeners.
                    self._writer.tell_unchanged(held.record, note="changed elsewhere")
                    self._forget(record_id)
                    return
                await self._observer.check(
                    held.record,
                    inputs=held.inputs,
                    read_at=held.read_at,
                    answered=answered,
                    gather=self._schedule.gathers(record_id),
                )
        except RecordChanged as exc:
            log.info("task %s changed elsewhere; reading it again", record_id)
            self._schedule.soon(record_id)
            del exc
        except Exception as exc:  # noqa: BLE001  (logged by PollFailures.failed, with its traceback)
            await self._failures.failed(record_id, exc)
        except asyncio.CancelledError:
            self._schedule.replan(record_id)  # abandoned (stopping): a later run polls it
            raise
        else:
            await self._failures.succeeded(record_id)
        finally:
            self._polled(record_id)

    def _abandoned(self, record_id: str) -> None:
        """A record's turn ends without a poll because the monitor stops: planned again."""
        self._schedule.replan(record_id)
        self._polled(record_id)

    def _polled(self, record_id: str) -> None:
        """A record's turn is over (polled or not): line up its next poll if one was planned
        meanwhile, else forget it."""
        if not self._schedule.finish(record_id):
            self._forget(record_id)

    def _forget(self, record_id: str) -> None:
        """Drop what the monitor keeps about a record it no longer watches (a long-running
        window must not grow with every task it ever saw)."""
        if not self._schedule.forget(record_id):
            return  # still scheduled or in flight
        self._delivery.forget(record_id)
        self._recorder.forget(record_id)
        self._stored.drop(record_id)

    @property
    def remembered(self) -> int:
        """How many records the monitor keeps per-record state for (scheduled or not)."""
        return len(
            self._schedule.remembered()
            | self._delivery.keys()
            | self._recorder.keys()
            | self._locks.keys()
            | self._stored.keys()
        )

    async def refresh(
        self,
        record: TaskRecord,
        *,
        connection: ServerConnection | None = None,
        inputs: list[TaskInput] | None = None,
    ) -> TaskRecord:
        """Ask the server about ``record`` once, persist what it says, tell, and reschedule.

        Holds the record's lock, as a poll does: a poll, a notification, an answer or a cancel
        of the same task waits. ``record`` may be stale by then: its save then fails with
        :class:`RecordChanged` (nothing is lost; read it again). ``connection``: the record's
        own server and account connection, when the caller holds it already (the reconciler,
        per group); otherwise it is looked up. ``inputs``: the record's input requests, read
        with it (else read when needed).
        """
        return await self._observer.refresh(record, connection=connection, inputs=inputs)

    # -- the user's actions --------------------------------------------------------------------

    async def answer(self, record_id: str, key: str, answer: dict[str, Any]) -> AnswerDidSettle:
        """Save the user's answer, then send it with ``tasks/update`` (resent on a later poll,
        also after a restart, while the server still asks for it)."""
        return await self._delivery.answer(record_id, key, answer)

    async def cancel(self, record_id: str) -> TaskRecord:
        """Persist the cancel request, send ``tasks/cancel``, and keep watching for the outcome."""
        return await self._delivery.cancel(record_id)

    def cancel_delivered(self, record_id: str) -> bool:
        """Whether this process's ``tasks/cancel`` for the record reached the server."""
        return self._delivery.cancel_delivered(record_id)
