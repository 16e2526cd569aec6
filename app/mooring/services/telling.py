"""Write, then tell: the one place a task change is persisted and then announced.

Every service that changes a task record (the runner, the monitor, the reconciler, the
choices for an unknown outcome) goes through :class:`TaskWriter`, so no listener — a window,
a notification, a model — can ever see a change that is not yet on disk, and a change on disk is
always announced: :class:`~mooring.core.events.TaskDidChange` for every change, then
:class:`~mooring.core.events.ToolRoundDidFinish` when the change ended the call.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from mooring.core.clock import Clock
from mooring.core.events import EventBus, IssueDidChange, TaskDidChange, ToolRoundDidFinish
from mooring.core.ids import new_id
from mooring.core.issues import Issue, IssueKind
from mooring.core.ports import IssueBoard, TaskLedger
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.reconcile import Reconciliation
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState


class TaskWriter:
    """Persists task changes in one transaction each, then tells the event bus."""

    def __init__(self, *, ledger: TaskLedger, events: EventBus) -> None:
        self._ledger = ledger
        self._events = events

    async def apply(self, rec: Reconciliation, *, note: str | None = None) -> list[TaskInput]:
        """Persist a reconciliation (record, result or error, new input requests) and tell.

        Returns the input requests that were new. Nothing is told for an unchanged one.
        """
        new_inputs = await self._ledger.apply(rec)
        if rec.changed:
            self._tell(rec.record, rec.previous_state, tuple(new_inputs), note or rec.note)
        return new_inputs

    def announce(self, rec: Reconciliation, new_inputs: list[TaskInput]) -> None:
        """Tell about a reconciliation the caller persisted itself with ``ledger.apply`` (when
        a failpoint or span must sit between the write and the telling)."""
        if rec.changed:
            self._tell(rec.record, rec.previous_state, tuple(new_inputs), rec.note)

    async def save(
        self,
        record: TaskRecord,
        *,
        previous_state: LocalState,
        expected_updated_at: datetime | None = None,
        note: str | None = None,
    ) -> None:
        """Persist a changed record (only over ``expected_updated_at``, when given) and tell."""
        await self._ledger.save(record, expected_updated_at=expected_updated_at)
        self._tell(record, previous_state, (), note)

    def tell_unchanged(self, record: TaskRecord, *, note: str) -> None:
        """Tell listeners about a record that is already persisted (changed by another
        process); nothing is written."""
        self._events.emit(TaskDidChange(record, record.state, note=note))
        if record.is_terminal:
            self._events.emit(ToolRoundDidFinish(record))

    def _tell(
        self,
        record: TaskRecord,
        previous_state: LocalState,
        new_inputs: tuple[TaskInput, ...],
        note: str | None,
    ) -> None:
        self._events.emit(TaskDidChange(record, previous_state, new_inputs, note))
        if record.is_terminal and record.state is not previous_state:
            self._events.emit(ToolRoundDidFinish(record))


class IssueDesk:
    """Raises and resolves persistent issues: persisted first, then announced."""

    def __init__(self, *, board: IssueBoard, events: EventBus, clock: Clock) -> None:
        self._board = board
        self._events = events
        self._clock = clock

    async def raise_issue(self, kind: IssueKind, subject: str, title: str, detail: str) -> Issue:
        """Record a problem for the user (one open issue per kind and subject: raising it again
        updates its text) and tell listeners."""
        issue = await self._board.raise_issue(
            Issue(
                id=new_id(),
                kind=kind,
                subject=subject,
                title=title,
                detail=detail,
                created_at=self._clock.now(),
            )
        )
        self._events.emit(IssueDidChange(issue))
        return issue

    async def resolve(self, kind: IssueKind | None, subject: str) -> None:
        """Resolve the open issues about ``subject`` (of ``kind``, or of any kind)."""
        for issue in await self._board.open_issues():
            if issue.subject == subject and (kind is None or issue.kind is kind):
                await self.dismiss(issue)

    async def dismiss(self, issue: Issue) -> None:
        """Mark one issue resolved and tell listeners."""
        await self._board.resolve(issue.id)
        self._events.emit(
            IssueDidChange(dataclasses.replace(issue, resolved_at=self._clock.now()), True)
        )
