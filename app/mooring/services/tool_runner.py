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

import logging
from typing import Any

from mooring.core.clock import Clock
from mooring.core.conversation import ToolRound
from mooring.core.events import EventBus, TaskDidChange
from mooring.core.ids import argument_digest, new_id
from mooring.core.ports import ConnectionState, Gateway, TaskLedger
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.reconcile import Outcome, Reconciliation, apply_call_outcome
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.core.tools import ToolAnnotations
from mooring.services.approvals import ApprovalBroker
from mooring.services.task_monitor import TaskMonitor

log = logging.getLogger("mooring.calls")

DENIED_CODE = -32002
"""Error code Mooring records for a call refused before sending (not a server code)."""


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
    ) -> None:
        self._broker = broker
        self._ledger = ledger
        self._gateway = gateway
        self._monitor = monitor
        self._events = events
        self._clock = clock

    async def call(
        self,
        server: ServerDefinition,
        tool: str,
        arguments: dict[str, Any],
        *,
        conversation_id: str | None = None,
        profile_id: str | None = None,
        on_persisted: Any = None,
    ) -> TaskRecord:
        """Send one tool call and return its record once the server answered (or did not).

        ``on_persisted`` (optional callable) is given the record as soon as the intent is saved,
        before anything is sent — the CLI prints the operation id then.
        """
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
        )
        await self._ledger.begin_operation(tool_round, record)
        if on_persisted is not None:
            on_persisted(record)

        connection = await self._gateway.connect(server, profile_id)
        annotations = ToolAnnotations()
        if connection.status.state is ConnectionState.READY:
            for info in await connection.list_tools():
                if info.name == tool:
                    annotations = info.annotations
        review = await self._broker.review(
            server=server,
            tool=tool,
            annotations=annotations,
            arguments=arguments,
            tool_round_id=tool_round.id,
            conversation_id=conversation_id,
        )
        if not review.proceed:
            denied = record.transition(
                LocalState.DENIED, at=self._clock.now(), reason=review.reason
            )
            await self._ledger.apply(
                Reconciliation(
                    outcome=Outcome.TRANSITIONED,
                    record=denied,
                    previous_state=record.state,
                    error={"code": DENIED_CODE, "message": review.reason},
                )
            )
            self._events.emit(TaskDidChange(denied, record.state, note=review.outcome.value))
            return denied

        creating = record.transition(LocalState.CREATING, at=self._clock.now())
        await self._ledger.save(creating)
        self._events.emit(TaskDidChange(creating, record.state, note="intent persisted"))
        record = creating
        outcome = await connection.call_tool(tool, arguments)
        rec = apply_call_outcome(record, outcome, now=self._clock.now())
        new_inputs = await self._ledger.apply(rec)
        self._events.emit(
            TaskDidChange(rec.record, rec.previous_state, tuple(new_inputs), rec.note)
        )
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
        return rec.record
