"""The user's answers and cancels, each saved before it is sent, and resent until the server
acknowledges it (also after a restart)."""

from __future__ import annotations

import logging
from typing import Any

from mooring.core.clock import Clock
from mooring.core.errors import KnownError, NotFound, RecordChanged
from mooring.core.events import AnswerDidSettle, EventBus
from mooring.core.failpoints import failpoint
from mooring.core.ports import ServerConnection, TaskLedger
from mooring.core.tasks.calls import Acknowledged, RequestFailed
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.reconcile import Observation, ServerTask, TaskGone, reconcile
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.services.keyed_locks import KeyedLocks
from mooring.services.polling.recall import ServerDirectory, StoredRecords
from mooring.services.polling.recording import Recorder
from mooring.services.polling.scheduler import PollScheduler
from mooring.services.telling import TaskWriter

log = logging.getLogger("mooring.tasks")

LATE_ANSWER = (
    "The task moved on before this answer was confirmed; the server no longer asks for it."
)
GONE_ANSWER = "The server no longer knows this task; the answer was not delivered."


class Delivery:
    """Answers (``tasks/update``) and cancels (``tasks/cancel``) on the user's behalf."""

    def __init__(
        self,
        *,
        ledger: TaskLedger,
        events: EventBus,
        writer: TaskWriter,
        clock: Clock,
        locks: KeyedLocks,
        servers: ServerDirectory,
        stored: StoredRecords,
        schedule: PollScheduler,
        recorder: Recorder,
    ) -> None:
        self._ledger = ledger
        self._events = events
        self._writer = writer
        self._clock = clock
        self._locks = locks
        self._servers = servers
        self._stored = stored
        self._schedule = schedule
        self._recorder = recorder
        self._cancel_sent: set[str] = set()

    # -- answers -------------------------------------------------------------------------------

    async def answer(self, record_id: str, key: str, answer: dict[str, Any]) -> AnswerDidSettle:
        """Save the user's answer, then send it with ``tasks/update``.

        The answer is persisted first; if sending fails it stays saved and is resent on a later
        poll (also after a restart) while the server still asks for it.
        """
        async with self._locks.hold(record_id):
            self._stored.drop(record_id)  # its inputs change
            return await self._answer(record_id, key, answer)

    async def _answer(self, record_id: str, key: str, answer: dict[str, Any]) -> AnswerDidSettle:
        record = await self._ledger.get(record_id)
        if record is None:
            raise NotFound("task", record_id)
        inputs = {i.key: i for i in await self._ledger.inputs(record_id)}
        if key not in inputs:
            raise KnownError(f"The task did not ask for {key!r}.", code="unknown_input")
        if inputs[key].answer is not None:
            raise KnownError(f"{key!r} was already answered.", code="already_answered")
        await self._ledger.save_answer(record_id, key, answer)
        if record.is_terminal or record.task_id is None:
            await self._ledger.settle_answers(record_id, [key], outcome=LATE_ANSWER)
            settled = AnswerDidSettle(record_id, key, False, LATE_ANSWER)
            self._events.emit(settled)
            return settled
        connection = await self._servers.connection(record)
        if connection is None:
            return AnswerDidSettle(record_id, key, False, "The task's server no longer exists.")
        return await self._send_answer(record, connection, key, answer)

    async def deliver_pending(
        self,
        record: TaskRecord,
        connection: ServerConnection,
        observation: Observation,
        stored: list[TaskInput] | None = None,
    ) -> bool:
        """Resend answers saved but never acknowledged; settle those that came too late.
        Returns whether there were any (the record's inputs may have changed since).
        ``stored``: the record's inputs when the caller has just read them.

        Runs under the record's lock. An answer listed as waiting in ``stored`` is read again
        before it is sent: ``stored`` may predate the lock (a reconciliation reads every task's
        inputs up front), and the answer may have been delivered since."""
        if not isinstance(observation, ServerTask | TaskGone):
            return False  # no news from the server: try again on the next poll
        if stored is None or any(item.awaiting_delivery for item in stored):
            stored = await self._ledger.inputs(record.id)
        pending = [i for i in stored if i.awaiting_delivery]
        for item in pending:
            outstanding = (
                isinstance(observation, ServerTask)
                and record.state is LocalState.INPUT_REQUIRED
                and item.key in observation.input_requests
            )
            if outstanding and record.task_id is not None:
                await self._send_answer(record, connection, item.key, item.answer or {})
            elif record.state is not LocalState.INPUT_REQUIRED:
                await self._ledger.settle_answers(record.id, [item.key], outcome=LATE_ANSWER)
                self._events.emit(AnswerDidSettle(record.id, item.key, False, LATE_ANSWER))
        return bool(pending)

    async def _send_answer(
        self, record: TaskRecord, connection: ServerConnection, key: str, answer: dict[str, Any]
    ) -> AnswerDidSettle:
        assert record.task_id is not None
        failpoint("answer.before-update")
        ack = await connection.update_task(record.task_id, {key: answer}, wire=record.wire)
        match ack:
            case Acknowledged():
                await self._ledger.settle_answers(record.id, [key])
                settled = AnswerDidSettle(record.id, key, True, "Delivered.")
                self._schedule.soon(record.id)
            case RequestFailed(gone=True):
                await self._ledger.settle_answers(record.id, [key], outcome=GONE_ANSWER)
                settled = AnswerDidSettle(record.id, key, False, GONE_ANSWER)
                await self._recorder.apply(
                    reconcile(record, TaskGone(ack.reason), now=self._clock.now())
                )
            case RequestFailed(reason=reason):
                detail = f"Saved; not delivered yet ({reason}). It will be resent."
                return AnswerDidSettle(record.id, key, False, detail)
        self._events.emit(settled)
        return settled

    # -- cancels -------------------------------------------------------------------------------

    async def cancel(self, record_id: str) -> TaskRecord:
        """Persist the cancel request, send ``tasks/cancel``, and keep watching for the outcome."""
        async with self._locks.hold(record_id):
            self._stored.drop(record_id)
            return await self._cancel(record_id)

    def cancel_delivered(self, record_id: str) -> bool:
        """Whether this process's ``tasks/cancel`` for the record reached the server."""
        return record_id in self._cancel_sent

    def cancel_pending(self, record: TaskRecord) -> bool:
        """Whether ``record``'s cancel request is still to reach its server from here."""
        return (
            record.cancel_requested
            and record.id not in self._cancel_sent
            and not record.is_terminal
        )

    async def _cancel(self, record_id: str) -> TaskRecord:
        record = await self._ledger.get(record_id)
        if record is None:
            raise NotFound("task", record_id)
        if record.is_terminal:
            return record
        if record.task_id is None:
            raise KnownError(
                f"Task {record_id} has no server task to cancel (it is {record.state}).",
                code="nothing_to_cancel",
            )
        for _attempt in range(3):
            if record.cancel_requested or record.is_terminal:
                break
            updated = record.evolve(at=self._clock.now(), cancel_requested=True)
            try:
                await self._writer.save(
                    updated,
                    previous_state=record.state,
                    expected_updated_at=record.updated_at,
                    note="cancel requested",
                )
            except RecordChanged:
                record = await self._ledger.get(record_id) or record  # moved on: try again
                continue
            record = updated
        if record.is_terminal:
            return record
        connection = await self._servers.connection(record)
        if connection is not None:
            await self.send_cancel(record, connection)
        return record

    async def send_cancel(self, record: TaskRecord, connection: ServerConnection) -> None:
        """Send ``tasks/cancel`` for a record whose cancel request is stored."""
        assert record.task_id is not None
        failpoint("cancel.before-send")
        ack = await connection.cancel_task(record.task_id, wire=record.wire)
        match ack:
            case Acknowledged():
                self._cancel_sent.add(record.id)
                self._schedule.soon(record.id)
            case RequestFailed(gone=True):
                self._cancel_sent.add(record.id)
                await self._recorder.apply(
                    reconcile(record, TaskGone(ack.reason), now=self._clock.now())
                )
            case RequestFailed():
                log.info("tasks/cancel for %s not delivered yet; will resend", record.id)

    def forget(self, record_id: str) -> None:
        self._cancel_sent.discard(record_id)

    def keys(self) -> set[str]:
        return set(self._cancel_sent)
