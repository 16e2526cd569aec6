"""Running one tool call: intent first, then the request, then the answer — each persisted
before anyone is told.

1. the tool round and an operation record in ``awaiting_approval`` are written;
2. the approval broker decides (asking the user when the policy says so) and audits; a refusal
   ends the record ``denied`` and nothing is sent — the model is told why;
3. the record moves to ``creating`` (the intent) before ``tools/call`` goes out through the
   server's connection, declaring the Tasks extension;
4. the answer — a task (id and first status together), a plain result, an error, or silence —
   is applied purely and persisted in one transaction;
5. listeners are told; a task is handed to the monitor.

Silence after sending is ``unknown_outcome``: the call is never re-sent by Mooring on its own.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from opentelemetry.trace import Span

from mooring.core.clock import Clock
from mooring.core.conversation import ToolRound
from mooring.core.errors import RecordChanged
from mooring.core.events import EventBus
from mooring.core.failpoints import failpoint
from mooring.core.ids import argument_digest, new_id
from mooring.core.ports import Gateway, ServerConnection, TaskLedger
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.calls import Progress
from mooring.core.tasks.codes import DENIED_CODE, UNKNOWN_TOOL_CODE
from mooring.core.tasks.reconcile import Outcome, Reconciliation, apply_call_outcome
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.core.tools import ToolAnnotations
from mooring.services.approvals import ApprovalBroker, argument_size
from mooring.services.task_monitor import TaskMonitor
from mooring.services.telling import TaskWriter
from mooring.services.tool_index import Availability, ToolIndex
from mooring.services.tracing import (
    APPROVAL,
    CREATE,
    PERSIST,
    QUEUE,
    ROOT,
    ns,
    record_attributes,
    traceparent_of,
    tracer,
)

log = logging.getLogger("mooring.calls")


class ToolRunner:
    """Starts tool calls on behalf of the model or the user."""

    def __init__(
        self,
        *,
        ledger: TaskLedger,
        gateway: Gateway,
        monitor: TaskMonitor,
        broker: ApprovalBroker,
        events: EventBus,
        clock: Clock,
        capture_content: bool = False,
        owner: str | None = None,
        tool_index: ToolIndex | None = None,
    ) -> None:
        self._tool_index = tool_index or ToolIndex(gateway=gateway, events=events)
        self._writer = TaskWriter(ledger=ledger, events=events)
        self._owner = owner
        self._capture_content = capture_content
        self._broker = broker
        self._ledger = ledger
        self._gateway = gateway
        self._monitor = monitor
        self._events = events
        self._clock = clock
        self._calls: dict[str, ServerConnection] = {}

    def stop(self, record_id: str) -> bool:
        """Stop a plain call this process is waiting for (the server is told with
        ``notifications/cancelled``; the round then says "stopped by you"). Tasks are
        cancelled through the monitor instead. Whether such a call was running."""
        connection = self._calls.get(record_id)
        return connection is not None and connection.stop_call(record_id)

    async def call(
        self,
        server: ServerDefinition,
        tool: str,
        arguments: dict[str, Any],
        *,
        conversation_id: str | None = None,
        profile_id: str | None = None,
        on_persisted: Any = None,
        remembered_approvals: bool = True,
    ) -> TaskRecord:
        """Send one tool call and return its record once the server answered (or did not).

        ``on_persisted`` (optional callable) is given the record as soon as the intent is saved,
        before anything is sent — the CLI prints the operation id then. Without
        ``remembered_approvals``, approvals remembered for the conversation do not count.
        """
        with tracer().start_as_current_span(
            f"{ROOT} {tool}",
            attributes={
                "mcp.tool.name": tool,
                "mcp.server.alias": server.alias,
                "mooring.arguments.bytes": argument_size(arguments),
            },
        ) as root:
            if self._capture_content:
                root.set_attribute("mooring.arguments", json.dumps(arguments, default=str))
            record = await self._call(
                root,
                server,
                tool,
                arguments,
                conversation_id,
                profile_id,
                on_persisted,
                remembered=remembered_approvals,
            )
            root.set_attributes(record_attributes(record))
            root.set_attribute("mooring.state", record.state.value)
            return record

    async def _call(
        self,
        root: Span,
        server: ServerDefinition,
        tool: str,
        arguments: dict[str, Any],
        conversation_id: str | None,
        profile_id: str | None,
        on_persisted: Any,
        *,
        remembered: bool = True,
    ) -> TaskRecord:
        now = self._clock.now()
        digest = argument_digest(arguments)
        tool_round = ToolRound(
            id=new_id(),
            conversation_id=conversation_id,
            server_id=server.id,
            tool=tool,
            arguments=arguments,
            argument_digest=digest,
            created_at=now,
        )
        record = TaskRecord(
            id=new_id(),
            server_id=server.id,
            credential_profile_id=profile_id,
            tool=tool,
            argument_digest=digest,
            state=LocalState.AWAITING_APPROVAL,
            created_at=now,
            updated_at=now,
            conversation_id=conversation_id,
            tool_round_id=tool_round.id,
            trace_context=traceparent_of(root),
            owner=self._owner,
        )
        await self._ledger.begin_operation(tool_round, record)
        if on_persisted is not None:
            on_persisted(record)

        connection = await self._gateway.connect(server, profile_id)
        lookup = await self._tool_index.lookup(server, tool, profile_id)
        if lookup.availability is Availability.MISSING:
            # Nothing to approve: the server does not offer it (the model may have invented it).
            return await self._refuse(
                record,
                f"{server.alias} does not offer a tool called {tool!r}; nothing was sent.",
                UNKNOWN_TOOL_CODE,
                note="unknown tool",
            )
        # Unknown (server unreachable): no hint relaxes Ask.
        annotations = lookup.tool.annotations if lookup.tool else ToolAnnotations()
        with tracer().start_as_current_span(APPROVAL) as approval:
            review = await self._broker.review(
                server=server,
                tool=tool,
                annotations=annotations,
                arguments=arguments,
                tool_round_id=tool_round.id,
                conversation_id=conversation_id,
                digest=digest,
                remembered=remembered,
            )
            approval.set_attribute("mooring.approval.outcome", review.outcome.value)
        if not review.proceed:
            return await self._refuse(record, review.reason, DENIED_CODE, note=review.outcome.value)

        creating = record.transition(LocalState.CREATING, at=self._clock.now())
        await self._writer.save(
            creating,
            previous_state=record.state,
            expected_updated_at=record.updated_at,
            note="intent persisted",
        )
        record = creating
        failpoint("call.after-intent")
        sent: list[TaskRecord] = []
        queue = tracer().start_span(QUEUE)

        async def mark_sent() -> None:
            at = self._clock.now()
            marked = record.evolve(at=at, sent_at=at)
            # If another process reconciled this record meanwhile, this raises and nothing is
            # sent (on_sending failures stop the request).
            await self._ledger.save(marked, expected_updated_at=record.updated_at)
            sent.append(marked)
            queue.end(end_time=ns(at))  # the queue ends where the run begins: when sent

        progress_gate = asyncio.Lock()
        answered: list[bool] = []

        async def show_progress(progress: Progress) -> None:
            # A plain call's sign of life: persisted, then told (the round's card shows it).
            async with progress_gate:
                if not answered:
                    await save_progress(progress)

        async def save_progress(progress: Progress) -> None:
            latest = sent[-1] if sent else record
            at = self._clock.now()
            alive = latest.evolve(
                at=at,
                progress=progress.progress,
                progress_total=progress.total,
                progress_message=progress.message,
                last_sign_of_life_at=at,
            )
            try:
                await self._writer.save(
                    alive,
                    previous_state=alive.state,
                    expected_updated_at=latest.updated_at,
                    note="progress",
                )
            except RecordChanged:
                return  # another writer moved it on; the next progress tries again
            sent.append(alive)

        self._calls[record.id] = connection
        try:
            with tracer().start_as_current_span(CREATE) as create:
                outcome = await connection.call_tool(
                    tool,
                    arguments,
                    on_sending=mark_sent,
                    on_progress=show_progress,
                    call_key=record.id,
                )
                create.set_attribute("mooring.call.outcome", type(outcome).__name__)
        finally:
            self._calls.pop(record.id, None)
            async with progress_gate:  # no progress write may land after the answer's
                answered.append(True)
        if queue.is_recording():
            queue.end()  # never handed over (not sent): the queue ends with the attempt
        record = sent[-1] if sent else record
        failpoint("call.after-send")
        rec = apply_call_outcome(record, outcome, now=self._clock.now())
        with tracer().start_as_current_span(PERSIST):
            new_inputs = await self._ledger.apply(rec)
        failpoint("call.after-task-id")
        self._writer.announce(rec, new_inputs)
        log.info(
            "call %s %s/%s → %s%s",
            record.id,
            server.alias,
            tool,
            rec.record.state,
            f" (task {rec.record.task_id})" if rec.record.task_id else "",
        )
        if rec.record.is_monitored:
            self._monitor.track(rec.record)
        elif rec.record.is_terminal:
            await self._monitor.emit_run_span(rec.record)
        return rec.record

    async def _refuse(self, record: TaskRecord, reason: str, code: int, *, note: str) -> TaskRecord:
        """End a call that was never sent: ``denied``, with the reason as its error."""
        denied = record.transition(LocalState.DENIED, at=self._clock.now(), reason=reason)
        await self._writer.apply(
            Reconciliation(
                outcome=Outcome.TRANSITIONED,
                record=denied,
                previous_state=record.state,
                error={"code": code, "message": reason},
            ),
            note=note,
        )
        return denied
