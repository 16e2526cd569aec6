"""The storage adapter for the core ports: async methods over the single writer thread."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from mooring.core.clock import Clock
from mooring.core.conversation import ToolRound
from mooring.core.issues import Issue
from mooring.core.servers import CredentialProfile, ServerDefinition
from mooring.core.tasks.checks import PollMark
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.parts import TaskParts
from mooring.core.tasks.reconcile import Reconciliation
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.storage import repositories as repo
from mooring.storage.db import Database
from mooring.storage.read_batches import ReadBatches, WriteBatches
from mooring.storage.rules import SqlRuleBook

log = logging.getLogger("mooring.storage")


CHECK_GATHER_S = 0.25
"""How long a scheduled poll's check waits for the other checks of its tick before they are
stored together (a check the caller waits on to go on, as a launch reconciliation's, is stored
at once; the monitor asks it only of tasks polled every 2.5 s or more, so the wait stays within
a tenth of their interval). The polls due in one tick (the monitor's 250 ms ``POLL_TICK``) go
out together, but
their answers come back one by one: stored as they came, a thousand tasks polled every 5 s
made ~35 small transactions a second, each two hand-offs to the writer thread and a tussle
for the GIL with it. Gathered for a tick, the host's CPU per ``tasks/get`` fell by ~10 %
(measured side by side). The poll's server slot is free meanwhile (the monitor frees it once
the server answered): only the check's own telling waits."""


class SqlStore:
    """Implements ``ServerCatalog``, ``AccountBook``, ``TaskLedger`` and ``IssueBoard`` on one
    :class:`Database`; its :attr:`rules` is the ``RuleBook`` on the same database."""

    def __init__(self, db: Database, clock: Clock, *, check_gather_s: float | None = None) -> None:
        """``check_gather_s``: how long a check waits to be stored with others (default
        :data:`CHECK_GATHER_S`)."""
        self.db = db
        self.clock = clock
        self.rules = SqlRuleBook(db)
        """The approval rules and their audit trail."""
        self._checks = _CheckBatches(
            db, gather_s=CHECK_GATHER_S if check_gather_s is None else check_gather_s
        )
        self._reads = ReadBatches(db)
        self._writes = WriteBatches(db)
        """The point reads a poll or a reconciliation makes per task, batched."""

    # ServerCatalog
    async def list_servers(self) -> list[ServerDefinition]:
        return await self.db.run(repo.list_servers)

    async def find_server(self, alias: str) -> ServerDefinition | None:
        return await self.db.run(lambda s: repo.find_server(s, alias))

    async def get_server(self, server_id: str) -> ServerDefinition | None:
        return await self._reads.run(lambda s: repo.get_server(s, server_id))

    async def add_server(self, server: ServerDefinition) -> None:
        await self.db.run(lambda s: repo.add_server(s, server))

    async def set_trusted(self, server_id: str, trusted: bool) -> None:
        await self.db.run(lambda s: repo.set_server_trusted(s, server_id, trusted))

    async def update_server(self, server: ServerDefinition) -> None:
        await self.db.run(lambda s: repo.update_server(s, server))

    async def remove_server(self, server_id: str) -> None:
        at = self.clock.now()
        await self.db.run(lambda s: repo.remove_server(s, server_id, at=at))

    async def is_removed(self, server_id: str) -> bool:
        removed = await self._reads.run(lambda s: repo.server_removed_at(s, server_id))
        return removed is not None

    async def builtin_ever_configured(self) -> bool:
        return await self.db.run(repo.builtin_server_ever_configured)

    # AccountBook
    async def list_profiles(self, server_id: str) -> list[CredentialProfile]:
        return await self.db.run(lambda s: repo.list_profiles(s, server_id))

    async def add_profile(self, profile: CredentialProfile) -> None:
        await self.db.run(lambda s: repo.add_profile(s, profile))

    async def remove_profile(self, profile_id: str) -> None:
        at = self.clock.now()
        await self.db.run(lambda s: repo.remove_profile(s, profile_id, at=at))

    async def is_profile_removed(self, profile_id: str) -> bool:
        removed = await self._reads.run(lambda s: repo.profile_removed_at(s, profile_id))
        return removed is not None

    # TaskLedger
    async def begin_operation(self, tool_round: ToolRound, record: TaskRecord) -> None:
        def write(session: Session) -> None:
            repo.add_tool_round(session, tool_round)
            repo.add_task_record(session, record)

        await self.db.run(write)

    async def get(self, record_id: str) -> TaskRecord | None:
        return await self._reads.run(lambda s: repo.get_task_record(s, record_id))

    async def by_task_id(self, server_id: str, task_id: str) -> TaskRecord | None:
        return await self._reads.run(lambda s: repo.task_record_by_task_id(s, server_id, task_id))

    async def find(self, key: str) -> TaskRecord | None:
        return await self.db.run(lambda s: repo.find_task_record(s, key))

    async def matching(self, key: str, *, limit: int = 20) -> list[TaskRecord]:
        return await self.db.run(lambda s: repo.task_records_matching(s, key, limit=limit))

    async def save(
        self, record: TaskRecord, *, expected_updated_at: datetime | None = None
    ) -> None:
        await self.db.run(
            lambda s: repo.save_task_record(s, record, expected_updated_at=expected_updated_at)
        )

    async def apply(self, reconciliation: Reconciliation) -> list[TaskInput]:
        # Batched with the others asked for meanwhile (a listen stream's replay brings news of
        # a thousand tasks at once), each in its own savepoint.
        return await self._writes.run(lambda s: repo.apply_reconciliation(s, reconciliation))

    async def mark_checked(self, mark: PollMark, *, gather: bool = False) -> bool:
        return await self._checks.add(mark, gather=gather)

    async def store_checks(self) -> None:
        await self._checks.flush()

    async def unfinished(self) -> list[TaskRecord]:
        return await self.db.run(repo.list_unfinished_task_records)

    async def list_records(
        self, *, states: Sequence[LocalState] | None = None, limit: int | None = None
    ) -> list[TaskRecord]:
        return await self.db.run(lambda s: repo.list_task_records(s, states=states, limit=limit))

    async def parts(self, records: Sequence[TaskRecord], *, fresh: bool = True) -> list[TaskParts]:
        return await self.db.run(lambda s: repo.read_task_parts(s, records, fresh=fresh))

    async def counts(self) -> dict[LocalState, int]:
        return await self.db.run(repo.count_task_records)

    async def inputs(self, record_id: str) -> list[TaskInput]:
        return await self._reads.run(lambda s: repo.list_task_inputs(s, record_id))

    async def inputs_of(self, record_ids: Collection[str]) -> dict[str, list[TaskInput]]:
        ids = list(record_ids)
        return await self.db.run(lambda s: repo.inputs_of(s, ids))

    async def with_inputs(self, record_id: str) -> tuple[TaskRecord, list[TaskInput]] | None:
        return await self._reads.run(lambda s: repo.task_record_with_inputs(s, record_id))

    async def save_answer(self, record_id: str, key: str, answer: dict[str, Any]) -> None:
        at = self.clock.now()
        await self.db.run(lambda s: repo.save_answer(s, record_id, key, answer, at=at))

    async def settle_answers(
        self, record_id: str, keys: Sequence[str], *, outcome: str | None = None
    ) -> None:
        at = self.clock.now()
        await self.db.run(
            lambda s: repo.mark_answer_delivered(s, record_id, keys, at=at, outcome=outcome)
        )

    async def tool_round(self, round_id: str) -> ToolRound | None:
        return await self._reads.run(lambda s: repo.get_tool_round(s, round_id))

    # IssueBoard
    async def raise_issue(self, issue: Issue) -> Issue:
        return await self.db.run(lambda s: repo.raise_issue(s, issue))

    async def open_issues(self) -> list[Issue]:
        return await self.db.run(repo.list_open_issues)

    async def resolve(self, issue_id: str) -> None:
        at = self.clock.now()
        await self.db.run(lambda s: repo.resolve_issue(s, issue_id, at=at))


class _CheckBatches:
    """Stores poll marks many at a time: the marks that arrive within :data:`CHECK_GATHER_S` of
    the first, and those that arrive while a batch is being written, go together, so a thousand
    tasks polled in one tick cost a handful of transactions on the writer thread, not a
    thousand. Each caller returns once its own mark is on disk (write, then tell); a caller
    that stops waiting (cancelled) leaves its mark to be stored all the same."""

    def __init__(self, db: Database, *, gather_s: float = CHECK_GATHER_S) -> None:
        self._db = db
        self._gather_s = gather_s
        self._pending: dict[str, tuple[PollMark, list[asyncio.Future[bool]]]] = {}
        self._writer: asyncio.Task[None] | None = None
        self._hurry: asyncio.Event | None = None
        """Set to end the writer's gathering at once (:meth:`flush`)."""

    async def add(self, mark: PollMark, *, gather: bool = True) -> bool:
        """Whether the mark was stored (not: its record had moved on). Not ``gather``: stored
        now, with the marks gathered so far."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()
        earlier = self._pending.get(mark.record_id)
        waiters = earlier[1] if earlier is not None else []
        waiters.append(done)
        self._pending[mark.record_id] = (mark, waiters)  # a later check of a record supersedes
        if self._writer is None or self._writer.done() or self._writer.get_loop() is not loop:
            self._hurry = asyncio.Event()
            self._writer = loop.create_task(self._write_all(self._hurry))
        if not gather and self._hurry is not None:
            self._hurry.set()
        return await done

    async def flush(self) -> None:
        """Store every mark added so far now, without the gathering wait (the monitor stops:
        the checks of polls already answered are kept, whoever still waits for them)."""
        writer = self._writer
        if writer is None or writer.done() or writer.get_loop() is not asyncio.get_running_loop():
            return
        if self._hurry is not None:
            self._hurry.set()
        await asyncio.shield(writer)

    async def _write_all(self, hurry: asyncio.Event) -> None:
        if self._gather_s > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(hurry.wait(), self._gather_s)
        while self._pending:
            batch, self._pending = self._pending, {}
            marks = [mark for mark, _ in batch.values()]
            try:
                left = await self._db.run(functools.partial(_mark_all, marks=marks))
            except Exception as exc:  # noqa: BLE001  # not swallowed: every waiter raises it
                log.warning("could not store %d poll check(s): %s", len(marks), exc)
                outcome: BaseException | None = exc
                left = frozenset()
            else:
                outcome = None
            for record_id, (_, waiters) in batch.items():
                for done in waiters:
                    if done.done():
                        continue
                    if outcome is None:
                        done.set_result(record_id not in left)
                    else:
                        done.set_exception(outcome)


def _mark_all(session: Session, marks: list[PollMark]) -> frozenset[str]:
    """Store ``marks``; returns the records left alone (moved on meanwhile)."""
    if repo.mark_checked(session, marks) == len(marks):
        return frozenset()
    return repo.unmarked(session, marks)
