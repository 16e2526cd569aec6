"""Storing a reconciliation that did not come from a poll, and tracing a task's whole run."""

from __future__ import annotations

from mooring.core.clock import Clock
from mooring.core.ports import TaskLedger
from mooring.core.tasks.reconcile import Outcome, Reconciliation
from mooring.core.tasks.record import TaskRecord
from mooring.services.telling import TaskWriter
from mooring.services.tracing import emit_run_span


class Recorder:
    """Persists, then tells; counts each task's notifications for its run span."""

    def __init__(self, *, ledger: TaskLedger, writer: TaskWriter, clock: Clock) -> None:
        self._ledger = ledger
        self._writer = writer
        self._clock = clock
        self._notifications: dict[str, int] = {}

    async def apply(self, rec: Reconciliation) -> None:
        """Store ``rec`` with its new inputs, trace the run if it ended, then tell."""
        if rec.outcome is Outcome.UNCHANGED:
            return
        new_inputs = await self._ledger.apply(rec)
        if rec.state_changed and rec.record.is_terminal:
            await self.emit_run_span(rec.record)
        self._writer.announce(rec, new_inputs)

    async def emit_run_span(self, record: TaskRecord) -> None:
        """Trace the task's run, creation to terminal state, once it is known to be over."""
        if record.task_id is None:
            return
        waits = [
            (item.answered_at - item.created_at).total_seconds() * 1000
            for item in await self._ledger.inputs(record.id)
            if item.answered_at is not None
        ]
        emit_run_span(
            record,
            start=record.sent_at or record.created_at,
            end=self._clock.now(),
            input_wait_ms=int(sum(waits)),
            notifications=self._notifications.pop(record.id, 0),
        )

    def count_notification(self, record_id: str) -> None:
        """A notification about the record was acted on."""
        self._notifications[record_id] = self._notifications.get(record_id, 0) + 1

    def forget(self, record_id: str) -> None:
        self._notifications.pop(record_id, None)

    def keys(self) -> set[str]:
        return set(self._notifications)
