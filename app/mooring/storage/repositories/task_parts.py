"""Reading many tasks' parts (record, server alias, tool round, inputs) in one transaction, a few
set-wise queries whatever the number of tasks: what a list of task views costs."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from mooring.core.conversation import ToolRound
from mooring.core.tasks.parts import TaskParts
from mooring.core.tasks.record import TaskRecord
from mooring.storage import tables as t
from mooring.storage.repositories.rounds import _round
from mooring.storage.repositories.tasks import _chunks, _record, inputs_of


def read_task_parts(
    session: Session, records: Sequence[TaskRecord], *, fresh: bool = True
) -> list[TaskParts]:
    """The parts of ``records``, in their order. With ``fresh`` each record is read again (a
    record no longer stored is shown as given)."""
    if not records:
        return []
    ids = list(dict.fromkeys(r.id for r in records))
    latest: dict[str, TaskRecord] = {}
    if fresh:
        for chunk in _chunks(ids):
            for row in session.execute(
                select(t.task_records).where(t.task_records.c.id.in_(chunk))
            ):
                record = _record(row)
                latest[record.id] = record
    shown = [latest.get(r.id, r) for r in records]
    round_ids = list(dict.fromkeys(r.tool_round_id for r in shown if r.tool_round_id))
    rounds: dict[str, ToolRound] = {}
    for chunk in _chunks(round_ids):
        for row in session.execute(select(t.tool_rounds).where(t.tool_rounds.c.id.in_(chunk))):
            rounds[row.id] = _round(row)
    inputs = inputs_of(session, ids)
    aliases: dict[str, str] = {
        row.id: row.alias
        for row in session.execute(
            select(t.servers.c.id, t.servers.c.alias).where(t.servers.c.removed_at.is_(None))
        )
    }
    return [
        TaskParts(
            record=record,
            server_alias=aliases.get(record.server_id),
            tool_round=rounds.get(record.tool_round_id) if record.tool_round_id else None,
            inputs=tuple(inputs.get(record.id, ())),
        )
        for record in shown
    ]
