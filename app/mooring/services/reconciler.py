"""Launch reconciliation: find every piece of work Mooring started and learn the truth about it.

Never re-sends an original tool call. Per record, by what was persisted:

- ``awaiting_approval``: the question died with the process → ``denied`` (audited as aborted);
- ``creating`` without a task id: the request may have gone out → ``unknown_outcome`` and a
  persistent issue offering retry or abandon;
- ``unknown_outcome``: the issue is (re)raised;
- ``working`` / ``input_required``: grouped by server and account, each group connected
  concurrently, and every task asked ``tasks/get`` through its own group's connection — a slow
  or dead server delays only its own tasks. At most ``per_server`` status requests are in
  flight to one server at a time (accounts of a server share the bound); servers go in
  parallel. Unacknowledged answers and cancels are resent by the monitor's refresh;
- a task whose server or account was removed becomes an explained, persistent issue.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable

from mooring.core.approval.request import ApprovalOutcome
from mooring.core.approval.rules import ApprovalAuditEntry
from mooring.core.clock import Clock
from mooring.core.errors import KnownError, RecordChanged
from mooring.core.events import EventBus
from mooring.core.ids import new_id
from mooring.core.issues import IssueKind
from mooring.core.ports import (
    AccountBook,
    ConnectionState,
    Gateway,
    IssueBoard,
    RuleBook,
    ServerCatalog,
    TaskLedger,
)
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.codes import DENIED_CODE
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.observations import StatusUnavailable
from mooring.core.tasks.reconcile import Outcome, Reconciliation, interrupted_create, reconcile
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.core.views import ReconcileReport
from mooring.services.task_monitor import TaskMonitor
from mooring.services.telling import IssueDesk, TaskWriter
from mooring.services.tool_index import ToolIndex
from mooring.services.tracing import RECONCILE, child_span

log = logging.getLogger("mooring.reconcile")


class Reconciler:
    """Runs the launch pass; safe to run again at any time."""

    def __init__(
        self,
        *,
        ledger: TaskLedger,
        catalog: ServerCatalog,
        issues: IssueBoard,
        rules: RuleBook,
        gateway: Gateway,
        monitor: TaskMonitor,
        events: EventBus,
        clock: Clock,
        accounts: AccountBook,
        owner: str | None = None,
        owner_alive: Callable[[str], bool] = lambda _owner: False,
        desk: IssueDesk | None = None,
        per_server: int = 8,
        redact: Callable[[ServerDefinition, str], Awaitable[str]] | None = None,
    ) -> None:
        self._desk = desk or IssueDesk(board=issues, events=events, clock=clock)
        self._redact = redact
        """Takes a server's secrets out of what it said (its issue and its tasks keep the
        rest), as the connection-failure issue does."""
        self._writer = TaskWriter(ledger=ledger, events=events)
        self._per_server = per_server
        self._owner = owner
        self._owner_alive = owner_alive
        self._accounts = accounts
        self._running: asyncio.Future[ReconcileReport] | None = None
        self._ledger = ledger
        self._catalog = catalog
        self._issues = issues
        self._rules = rules
        self._gateway = gateway
        self._monitor = monitor
        self._events = events
        self._clock = clock

    async def run(self) -> ReconcileReport:
        """Reconcile every unfinished record; returns what happened.

        One pass at a time: asked while a pass runs (a ``reconcile`` command reaching an engine
        that is reconciling at launch), this waits for that pass and returns its report; two
        passes over the same records would only refuse each other's writes.
        """
        if self._running is not None:
            return await asyncio.shield(self._running)
        # Shielded: a caller that stops waiting (a face gone) does not cut the pass short.
        self._running = asyncio.get_running_loop().create_task(self._pass(), name="reconcile")
        self._running.add_done_callback(self._pass_ended)
        return await asyncio.shield(self._running)

    def _pass_ended(self, _done: asyncio.Task[ReconcileReport]) -> None:
        self._running = None

    async def _pass(self) -> ReconcileReport:
        report = ReconcileReport()
        groups: dict[tuple[str, str | None], list[TaskRecord]] = defaultdict(list)
        for record in await self._ledger.unfinished():
            report.checked += 1
            if (
                record.state in (LocalState.AWAITING_APPROVAL, LocalState.CREATING)
                and record.task_id is None
                and record.owner is not None
                and (record.owner == self._owner or self._owner_alive(record.owner))
            ):
                # Being asked or sent right now: by this engine (a pass run while it works)
                # or by another live process. Only a dead owner's is reconciled.
                report.in_progress.append(record)
                continue
            match record.state:
                case LocalState.AWAITING_APPROVAL:
                    await self._withdraw_question(record)
                    report.withdrawn.append(record)
                case LocalState.CREATING if record.task_id is None:
                    settled = await self._interrupted(record)
                    if settled.state is LocalState.UNKNOWN_OUTCOME:
                        report.unknown.append(settled)
                    else:
                        report.never_sent.append(settled)
                case LocalState.UNKNOWN_OUTCOME:
                    await self._raise_unknown(record)
                    report.unknown.append(record)
                case _ if record.task_id is not None:
                    groups[(record.server_id, record.credential_profile_id)].append(record)
        gates: dict[str, asyncio.Semaphore] = {}  # one bound per server, its accounts share it
        # Answer delivery needs each task's inputs: read for all of them at once, not per task.
        inputs = await self._ledger.inputs_of(
            [record.id for records in groups.values() for record in records]
        )
        results = await asyncio.gather(
            *(
                self._group(key[0], key[1], records, report, gates, inputs)
                for key, records in groups.items()
            ),
            return_exceptions=True,
        )
        for (server_id, _profile), result in zip(groups, results, strict=True):
            if isinstance(result, BaseException):
                log.error("reconciling server %s failed", server_id, exc_info=result)
                for record in groups[(server_id, _profile)]:
                    self._monitor.track(record)  # keep watching; the monitor retries
        log.info(
            "reconciled %d records: %d refreshed, %d unknown, %d orphaned, %d servers unreachable",
            report.checked,
            len(report.refreshed),
            len(report.unknown),
            len(report.orphaned),
            len(report.unreachable),
        )
        return report

    async def _group(
        self,
        server_id: str,
        profile_id: str | None,
        records: list[TaskRecord],
        report: ReconcileReport,
        gates: dict[str, asyncio.Semaphore],
        inputs: dict[str, list[TaskInput]],
    ) -> None:
        server = await self._catalog.get_server(server_id)
        removed = server is None or await self._catalog.is_removed(server_id)
        account_gone = profile_id is not None and await self._accounts.is_profile_removed(
            profile_id
        )
        if server is None or removed or account_gone:
            name = server.alias if server else server_id
            await self.orphan(records, name, account_gone=account_gone and not removed)
            report.orphaned.extend(records)
            return
        connection = await self._gateway.connect(server, profile_id)
        status = await connection.settled()
        if status.state is not ConnectionState.READY:
            reason = status.reason or status.state.value
            if self._redact is not None:
                reason = await self._redact(server, reason)
            report.unreachable[server.alias] = reason
            await self._raise(
                IssueKind.SERVER_UNAVAILABLE,
                server.id,
                f"{server.alias} cannot be reached; {len(records)} task(s) wait",
                f"{reason}. Their last known state is kept; Mooring keeps trying.",
            )
            for record in records:
                # Like a failed poll: the last known state stays, flagged as unavailable.
                unavailable = reconcile(record, StatusUnavailable(reason), now=self._clock.now())
                try:
                    await self._writer.apply(unavailable)
                except KnownError as exc:  # changed by another process meanwhile
                    log.info("task %s: %s", record.id, exc.message)
                self._monitor.track(unavailable.record)
            return
        await self._resolve(IssueKind.SERVER_UNAVAILABLE, server.id)
        gate = gates.setdefault(server.id, asyncio.Semaphore(self._per_server))
        refreshed: list[TaskRecord | None] = [None] * len(records)

        async def refresh(index: int, record: TaskRecord) -> None:
            async with gate:
                try:
                    with child_span(RECONCILE, record, attributes={"mooring.relaunch": True}):
                        refreshed[index] = await self._monitor.refresh(
                            record, connection=connection, inputs=inputs.get(record.id, [])
                        )
                except KnownError as exc:  # e.g. changed by another window meanwhile
                    log.info("task %s: %s; the monitor will look again", record.id, exc.message)
                    self._monitor.track(record, now=True)

        # A few workers take the records in turn, rather than a task per record waiting at the
        # gate: 1,000 waiting tasks (each a coroutine, a frame, a context, a waiter) were a large
        # share of what the window's garbage collector walked during a launch reconciliation.
        queue = iter(enumerate(records))

        async def worker() -> None:
            for index, record in queue:
                await refresh(index, record)

        async with asyncio.TaskGroup() as group:
            for _ in range(min(self._per_server, len(records))):
                group.create_task(worker())
        for done in refreshed:
            if done is not None:
                self._monitor.track(done)
                report.refreshed.append(done)

    async def orphan_tasks_of(self, server: ServerDefinition, profile_id: str | None) -> None:
        """After a server (``profile_id`` ``None``) or one of its accounts was removed: its
        running tasks are no longer followed (an issue says so at once) and its connection
        ends. Their records stay as they were."""
        records = [
            r
            for r in await self._ledger.unfinished()
            if r.server_id == server.id
            and r.task_id is not None
            and (profile_id is None or r.credential_profile_id == profile_id)
        ]
        for record in records:
            self._monitor.untrack(record.id)
        await self.orphan(records, server.alias, account_gone=profile_id is not None)
        await self._gateway.disconnect(server.id, profile_id, every_account=profile_id is None)

    async def orphan(self, records: list[TaskRecord], name: str, *, account_gone: bool) -> None:
        """Raise an issue for each task whose server (or, with ``account_gone``, account) was
        removed: it is never asked about again, least of all with another account's
        credentials. Its record stays as it was."""
        why = "its account was removed" if account_gone else "its server was removed"
        for record in records:
            await self._raise(
                IssueKind.ORPHANED_TASK,
                record.id,
                f"{record.tool} on {name}: {why}",
                "Mooring cannot ask about this task any more (it is never asked about with "
                "another account's credentials). Add the server or account again to resume "
                "watching it, or dismiss this.",
            )

    async def _raise(self, kind: IssueKind, subject: str, title: str, detail: str) -> None:
        await self._desk.raise_issue(kind, subject, title, detail)

    async def _resolve(self, kind: IssueKind, subject: str) -> None:
        await self._desk.resolve(kind, subject)

    async def _interrupted(self, record: TaskRecord) -> TaskRecord:
        rec = interrupted_create(record, now=self._clock.now())
        try:
            await self._writer.apply(rec, note="interrupted")
        except RecordChanged as exc:  # settled meanwhile (by the face that sent it, say)
            log.info("task %s: %s", record.id, exc.message)
            return await self._ledger.get(record.id) or record
        if rec.record.state is LocalState.UNKNOWN_OUTCOME:
            await self._raise_unknown(rec.record)
        return rec.record

    async def _raise_unknown(self, record: TaskRecord) -> None:
        server = await self._catalog.get_server(record.server_id)
        name = server.alias if server else record.server_id
        await self._raise(
            IssueKind.UNKNOWN_OUTCOME,
            record.id,
            f"{record.tool} on {name} may or may not have run",
            "The request was sent but no answer came back. Mooring will not send it "
            "again by itself. Retry it (it may run twice) or mark it abandoned.",
        )

    async def _withdraw_question(self, record: TaskRecord) -> None:
        reason = "The approval question was withdrawn: Mooring stopped before it was answered."
        denied = record.transition(LocalState.DENIED, at=self._clock.now(), reason=reason)
        if record.tool_round_id is not None:
            await self._rules.record_approval(
                ApprovalAuditEntry(
                    id=new_id(),
                    at=self._clock.now(),
                    server_id=record.server_id,
                    tool=record.tool,
                    argument_digest=record.argument_digest,
                    outcome=ApprovalOutcome.ABORTED.value,
                    actor="program",
                    tool_round_id=record.tool_round_id,
                )
            )
        await self._writer.apply(
            Reconciliation(
                outcome=Outcome.TRANSITIONED,
                record=denied,
                previous_state=record.state,
                error={"code": DENIED_CODE, "message": reason},
            ),
            note="approval withdrawn",
        )


class UnknownOutcomes:
    """The user's choices for a call that may or may not have run: abandon it, or retry it."""

    def __init__(
        self,
        *,
        ledger: TaskLedger,
        catalog: ServerCatalog,
        issues: IssueBoard,
        gateway: Gateway,
        events: EventBus,
        clock: Clock,
        tool_index: ToolIndex | None = None,
        desk: IssueDesk | None = None,
    ) -> None:
        self._ledger = ledger
        self._catalog = catalog
        self._tool_index = tool_index or ToolIndex(gateway=gateway, events=events)
        self._desk = desk or IssueDesk(board=issues, events=events, clock=clock)
        self._writer = TaskWriter(ledger=ledger, events=events)
        self._clock = clock

    async def _resolve_issues(self, record_id: str) -> None:
        await self._desk.resolve(None, record_id)

    async def abandon(self, record: TaskRecord, *, reason: str | None = None) -> TaskRecord:
        """Mark an unknown outcome abandoned (nothing is sent)."""
        if record.state is not LocalState.UNKNOWN_OUTCOME:
            raise KnownError(
                f"Only a call with an unknown outcome can be abandoned; this one is "
                f"{record.state}.",
                code="not_unknown",
            )
        done = record.transition(
            LocalState.ABANDONED,
            at=self._clock.now(),
            reason=reason or "Abandoned by the user; it may or may not have run.",
        )
        await self._writer.apply(
            Reconciliation(outcome=Outcome.TRANSITIONED, record=done, previous_state=record.state),
            note="abandoned",
        )
        await self._resolve_issues(record.id)
        return done

    async def retry_is_safe(self, record: TaskRecord) -> bool:
        """Whether a retry cannot duplicate a side effect: an idempotent tool on a trusted
        server (anything else needs the user's explicit go-ahead)."""
        server = await self._catalog.get_server(record.server_id)
        if server is None or not server.trusted:
            return False
        lookup = await self._tool_index.lookup(server, record.tool, record.credential_profile_id)
        return lookup.tool is not None and lookup.tool.annotations.idempotent is True
