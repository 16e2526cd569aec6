"""What the server said about a task, persisted and told ("write, then tell"), its next poll
planned, then the answers and cancel it was waiting for sent.

A check that learned nothing new stores only the check (when, how many, when next), gathered
with the other checks of its tick and stored with them.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from datetime import datetime

from mooring.core.clock import Clock
from mooring.core.errors import RecordChanged
from mooring.core.failpoints import failpoint
from mooring.core.ports import ServerConnection, TaskLedger
from mooring.core.tasks.checks import quiet_poll
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.reconcile import Observation, Reconciliation, reconcile
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.services.keyed_locks import KeyedLocks
from mooring.services.polling.delivery import Delivery
from mooring.services.polling.recall import ServerDirectory, StoredRecords
from mooring.services.polling.recording import Recorder
from mooring.services.polling.scheduler import PollScheduler
from mooring.services.polling.streams import ListenStreams
from mooring.services.telling import TaskWriter
from mooring.services.tracing import PERSIST, child_span

log = logging.getLogger("mooring.tasks")


class Observer:
    """Asks a task's server about it (``tasks/get``) or takes what a notification said."""

    def __init__(
        self,
        *,
        ledger: TaskLedger,
        writer: TaskWriter,
        clock: Clock,
        locks: KeyedLocks,
        schedule: PollScheduler,
        streams: ListenStreams,
        servers: ServerDirectory,
        stored: StoredRecords,
        delivery: Delivery,
        recorder: Recorder,
    ) -> None:
        self._ledger = ledger
        self._writer = writer
        self._clock = clock
        self._locks = locks
        self._schedule = schedule
        self._streams = streams
        self._servers = servers
        self._stored = stored
        self._delivery = delivery
        self._recorder = recorder

    async def refresh(
        self,
        record: TaskRecord,
        *,
        connection: ServerConnection | None = None,
        inputs: list[TaskInput] | None = None,
    ) -> TaskRecord:
        """:meth:`check` under the record's lock (see ``TaskMonitor.refresh``)."""
        async with self._locks.hold(record.id):
            self._stored.drop(record.id)
            return await self.check(record, connection=connection, inputs=inputs)

    async def check(
        self,
        record: TaskRecord,
        *,
        connection: ServerConnection | None = None,
        inputs: list[TaskInput] | None = None,
        read_at: datetime | None = None,
        answered: Callable[[], None] | None = None,
        gather: bool = False,
    ) -> TaskRecord:
        """Ask the server about ``record`` once and :meth:`observe` its answer (``answered``
        is called once it is in). Runs under the record's lock."""
        if record.task_id is None:
            return record
        if connection is None:
            connection = await self._servers.connection(record)
        if connection is None:
            log.warning("task %s: its server %s no longer exists", record.id, record.server_id)
            return record
        try:
            observation = await connection.get_task(record.task_id, wire=record.wire)
        finally:
            if answered is not None:
                answered()
        return await self.observe(
            record, observation, connection, stored=inputs, read_at=read_at, gather=gather
        )

    async def notice(
        self, record: TaskRecord, seen: Observation, connection: ServerConnection | None
    ) -> TaskRecord:
        """:meth:`observe` what a notification said (not a poll)."""
        return await self.observe(record, seen, connection, polled=False)

    async def observe(
        self,
        record: TaskRecord,
        observation: Observation,
        connection: ServerConnection | None,
        *,
        polled: bool = True,
        stored: list[TaskInput] | None = None,
        read_at: datetime | None = None,
        gather: bool = False,
    ) -> TaskRecord:
        """Persist what the server said (a poll's answer, or a notification: not ``polled``),
        tell, plan the next poll a full interval from now, then deliver saved answers and a
        pending cancel (through ``connection``, looked up when ``None`` and needed). A
        notification that leaves the state as it was delivers no answers: only a change of
        state, a question, or the next poll can settle them. ``stored``: the record's input
        requests as read with it, if they were; ``read_at``: when they were read from the
        ledger (what this call stores is then kept for the next poll, see
        :data:`~mooring.services.polling.recall.RECORD_REREAD`)."""
        now = self._clock.now()
        rec = reconcile(record, observation, now=now)
        if not polled and rec.changed:  # heard from the server, but not a tasks/get
            rec = dataclasses.replace(
                rec, record=dataclasses.replace(rec.record, poll_count=record.poll_count)
            )
        rec = self._with_next_poll(rec)
        if rec.record.is_monitored:
            self._schedule.heard(rec.record, now)
        if rec.state_changed:
            failpoint("poll.before-persist")
        if rec.state_changed and rec.record.is_terminal:
            with child_span(PERSIST, rec.record):
                new_inputs = await self._ledger.apply(rec)
            await self._recorder.emit_run_span(rec.record)
            stored_inputs = None
        else:
            rec, new_inputs, stored_inputs = await self._store(record, rec, stored, gather=gather)
        current = rec.record
        if current.is_monitored and current.next_poll_at is not None:
            self._schedule.remember(current)
            at = self._schedule.poll_at(current, covered=self._streams.covered(current))
            self._schedule.plan(current.id, at, replace=True)
        else:
            self._schedule.unschedule(current.id)  # over: before anyone hears of it
        self._writer.announce(rec, new_inputs)  # after the run span: a listener may stop us
        answers = polled or rec.state_changed or current.state is LocalState.INPUT_REQUIRED
        cancel = self._delivery.cancel_pending(current)
        if (answers or cancel) and connection is None:
            connection = await self._servers.connection(current)
        if connection is None:
            return current  # its server was removed meanwhile
        delivering = False
        if answers:
            delivering = await self._delivery.deliver_pending(
                current, connection, observation, stored_inputs
            )
        if cancel:
            await self._delivery.send_cancel(current, connection)
        if (
            read_at is not None
            and stored_inputs is not None
            and not delivering
            and current.is_monitored
            and not current.cancel_requested
        ):
            self._stored.keep(current, stored_inputs, read_at)
        return current

    async def _store(
        self,
        before: TaskRecord,
        rec: Reconciliation,
        stored: list[TaskInput] | None = None,
        *,
        gather: bool = False,
    ) -> tuple[Reconciliation, list[TaskInput], list[TaskInput] | None]:
        """Persist a poll: in full when it learned something, else only the check (a few
        columns, batched with other tasks' checks; the stored version stays ``before``'s).

        ``stored``: ``before``'s inputs, if read with it. Also returns the task's stored inputs
        when they were read (with those this save added), so answer delivery need not read
        them again."""
        if stored is None and rec.input_requests and not rec.state_changed:
            stored = await self._ledger.inputs(before.id)  # still asking: the same questions?
        known = {item.key for item in stored or ()}
        mark = quiet_poll(before, rec, known_inputs=known)
        if mark is None:
            added = await self._ledger.apply(rec)
            return rec, added, None if stored is None else [*stored, *added]
        if not await self._ledger.mark_checked(mark, gather=gather):
            raise RecordChanged(before.id, "its check was not stored over a newer version")
        return dataclasses.replace(rec, record=mark.applied_to(before)), [], stored

    def _with_next_poll(self, rec: Reconciliation) -> Reconciliation:
        record = rec.record
        if not rec.changed or not record.is_monitored:
            return rec
        at = self._schedule.next_poll_at(record)
        return dataclasses.replace(rec, record=dataclasses.replace(record, next_poll_at=at))
