"""The task ledger: operation records, their input requests, and applying a reconciliation in
one transaction."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Row,
    and_,
    bindparam,
    func,
    insert,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from mooring.core.conversation import RoundOutcome
from mooring.core.errors import RecordChanged
from mooring.core.tasks.checks import PollMark
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.reconcile import Reconciliation
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import TERMINAL_STATES, LocalState
from mooring.storage import tables as t
from mooring.storage.records import RECORD_FIELDS, record_from, record_values
from mooring.storage.repositories.rounds import finish_tool_round

# -- the task ledger -------------------------------------------------------------------------


def _record_values(record: TaskRecord) -> dict[str, Any]:
    return record_values(record)


def _record(row: Row[Any]) -> TaskRecord:
    return record_from(row._mapping)


def add_task_record(session: Session, record: TaskRecord) -> None:
    """Persist a new operation (normally in ``creating``, before anything is sent)."""
    session.execute(insert(t.task_records).values(**_record_values(record)))


def _save_statement(*, guarded: bool) -> Any:
    c = t.task_records.c
    conditions = [
        c.id == bindparam("record_id"),
        c.state.not_in([literal_column(f"'{s.value}'") for s in TERMINAL_STATES]),
    ]
    if guarded:
        conditions.append(c.updated_at == bindparam("base", type_=c.updated_at.type))
    values: dict[str, Any] = {
        name: bindparam(f"v_{name}", type_=c[name].type) for name in RECORD_FIELDS if name != "id"
    }
    values["cancel_requested"] = or_(c.cancel_requested, values["cancel_requested"])
    return update(t.task_records).where(and_(*conditions)).values(**values)


# Built once, as a poll's statements are below: a record's save built at each call cost ~540 us.
_SAVE = _save_statement(guarded=False)
_SAVE_OVER = _save_statement(guarded=True)


def save_task_record(
    session: Session, record: TaskRecord, *, expected_updated_at: datetime | None = None
) -> None:
    """Persist a changed record.

    A stored terminal record is never overwritten. With ``expected_updated_at`` the write only
    applies to that stored version (compare-and-swap): another process may have moved the
    record on meanwhile, and its write must not be lost. A cancel request, once stored, stays.
    """
    params = {f"v_{name}": value for name, value in _record_values(record).items()}
    params["record_id"] = params.pop("v_id")
    if expected_updated_at is None:
        done = session.execute(_SAVE, params)
    else:
        done = session.execute(_SAVE_OVER, {**params, "base": expected_updated_at})
    if done.rowcount != 1:  # type: ignore[attr-defined]  # CursorResult has rowcount
        stored = get_task_record(session, record.id)
        if stored is None:
            raise LookupError(f"no task record {record.id}")
        if stored.is_terminal:
            raise RecordChanged(record.id, f"it is {stored.state}: terminal, not overwritten")
        raise RecordChanged(record.id, f"it is {stored.state} now")


def _mark_statement() -> Any:
    c = t.task_records.c
    # Inline constants: an expanding IN cannot run once per mark (executemany).
    active: list[ColumnElement[str]] = [
        literal_column(f"'{s.value}'") for s in LocalState if s not in TERMINAL_STATES
    ]
    return (
        update(t.task_records)
        .where(
            and_(
                c.id == bindparam("mark_id"),
                c.updated_at == bindparam("base", type_=c.updated_at.type),
                c.state.in_(active),
            )
        )
        .values(
            last_checked_at=bindparam("checked", type_=c.last_checked_at.type),
            poll_count=bindparam("count"),
            next_poll_at=bindparam("next", type_=c.next_poll_at.type),
        )
    )


# The statements a poll runs, built once: building one, and SQLAlchemy's cache key of its
# literal values, cost more than running it (~70 of ~130 us for a record's read).
_MARK = _mark_statement()
_GET_RECORD = select(t.task_records).where(t.task_records.c.id == bindparam("record_id"))
_INPUTS = (
    select(t.task_inputs)
    .where(t.task_inputs.c.record_id == bindparam("record_id"))
    .order_by(t.task_inputs.c.created_at, t.task_inputs.c.key)
)


def mark_checked(session: Session, marks: Sequence[PollMark]) -> int:
    """Store checks that found nothing new: one statement for all of them, a few columns each,
    only over the version each was made against (a record moved on meanwhile, or finished, is
    left alone). Returns how many records were marked."""
    if not marks:
        return 0
    params = [
        {
            "mark_id": m.record_id,
            "base": m.base_updated_at,
            "checked": m.last_checked_at,
            "count": m.poll_count,
            "next": m.next_poll_at,
        }
        for m in marks
    ]
    # One mark runs as a single statement (executemany's set-up costs more than the row).
    done = session.execute(_MARK, params[0] if len(params) == 1 else params)
    return int(done.rowcount)  # type: ignore[attr-defined]  # CursorResult has rowcount


CHUNK = 500
"""Ids per ``IN (...)`` (well under SQLite's bound-parameter limit)."""


def _chunks(ids: Sequence[str]) -> list[Sequence[str]]:
    """``ids`` in slices short enough for one ``IN`` list each."""
    return [ids[i : i + CHUNK] for i in range(0, len(ids), CHUNK)]


def unmarked(session: Session, marks: Sequence[PollMark]) -> frozenset[str]:
    """Of ``marks`` just stored by :func:`mark_checked`, the records it left alone (they had
    moved on meanwhile). Only asked when fewer rows changed than there were marks."""
    c = t.task_records.c
    wanted = {m.record_id: m for m in marks}
    stored = {
        row.id
        for ids in _chunks(list(wanted))
        for row in session.execute(
            select(c.id, c.last_checked_at, c.poll_count).where(c.id.in_(ids))
        )
        if (row.last_checked_at, row.poll_count)
        == (wanted[row.id].last_checked_at, wanted[row.id].poll_count)
    }
    return frozenset(wanted.keys() - stored)


def get_task_record(session: Session, record_id: str) -> TaskRecord | None:
    """A record by local operation id."""
    row = session.execute(_GET_RECORD, {"record_id": record_id}).first()
    return _record(row) if row else None


def task_record_by_task_id(session: Session, server_id: str, task_id: str) -> TaskRecord | None:
    """The record of the server's task ``task_id``: an exact, indexed lookup (never a prefix)."""
    row = session.execute(
        select(t.task_records).where(
            (t.task_records.c.server_id == server_id) & (t.task_records.c.task_id == task_id)
        )
    ).one_or_none()
    return _record(row) if row is not None else None


def find_task_record(session: Session, key: str) -> TaskRecord | None:
    """A record by local operation id, server task id, or a unique prefix of either."""
    exact = session.execute(
        select(t.task_records).where(
            (t.task_records.c.id == key) | (t.task_records.c.task_id == key)
        )
    ).all()
    if len(exact) == 1:
        return _record(exact[0])
    if exact:
        return None
    pattern = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    prefixed = session.execute(
        select(t.task_records)
        .where(
            t.task_records.c.id.like(pattern, escape="\\")
            | t.task_records.c.task_id.like(pattern, escape="\\")
        )
        .limit(2)
    ).all()
    return _record(prefixed[0]) if len(prefixed) == 1 else None


def task_records_matching(session: Session, key: str, *, limit: int = 20) -> list[TaskRecord]:
    """Every record whose operation id or task id is ``key`` or starts with it, newest first
    (what an ambiguous ``find`` could have meant)."""
    pattern = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = session.execute(
        select(t.task_records)
        .where(
            t.task_records.c.id.like(pattern, escape="\\")
            | t.task_records.c.task_id.like(pattern, escape="\\")
        )
        .order_by(t.task_records.c.created_at.desc(), t.task_records.c.id)
        .limit(limit)
    ).all()
    return [_record(row) for row in rows]


def list_task_records(
    session: Session, *, states: Iterable[LocalState] | None = None, limit: int | None = None
) -> list[TaskRecord]:
    """Records, newest first, optionally only those in ``states``."""
    query = select(t.task_records).order_by(t.task_records.c.created_at.desc(), t.task_records.c.id)
    if states is not None:
        query = query.where(t.task_records.c.state.in_([s.value for s in states]))
    if limit is not None:
        query = query.limit(limit)
    return [_record(r) for r in session.execute(query)]


# Named positively (IN, not NOT IN) so the state index finds the few active rows among the many
# finished ones instead of scanning the ledger.
_ACTIVE = sorted(s.value for s in LocalState if s not in TERMINAL_STATES)


def list_unfinished_task_records(session: Session) -> list[TaskRecord]:
    """Every record that is not terminal (what launch reconciliation looks at)."""
    rows = session.execute(
        select(t.task_records)
        .where(t.task_records.c.state.in_(_ACTIVE))
        .order_by(t.task_records.c.created_at)
    )
    return [_record(r) for r in rows]


def unfinished_task_ids(session: Session) -> set[str]:
    """The ids of the records that are not terminal (from the state index alone)."""
    rows = session.execute(select(t.task_records.c.id).where(t.task_records.c.state.in_(_ACTIVE)))
    return set(rows.scalars())


def count_task_records(session: Session) -> dict[LocalState, int]:
    """How many records are in each state."""
    rows = session.execute(
        select(t.task_records.c.state, func.count()).group_by(t.task_records.c.state)
    )
    return {LocalState(row[0]): int(row[1]) for row in rows}


# -- task inputs -----------------------------------------------------------------------------


def _input(row: Row[Any]) -> TaskInput:
    return TaskInput(
        record_id=row.record_id,
        key=row.key,
        method=row.method,
        params=dict(row.params),
        created_at=row.created_at,
        answer=row.answer,
        answered_at=row.answered_at,
        acknowledged_at=row.acknowledged_at,
        outcome=row.outcome,
    )


def add_task_inputs(
    session: Session, record_id: str, requests: dict[str, dict[str, Any]], *, at: datetime
) -> list[TaskInput]:
    """Store input requests not seen before (keys repeat across polls); return the new ones."""
    known = set(
        session.execute(
            select(t.task_inputs.c.key).where(t.task_inputs.c.record_id == record_id)
        ).scalars()
    )
    added: list[TaskInput] = []
    for key, request in requests.items():
        if key in known:
            continue
        item = TaskInput(
            record_id=record_id,
            key=key,
            method=str(request.get("method", "")),
            params=dict(request.get("params") or {}),
            created_at=at,
        )
        session.execute(
            insert(t.task_inputs).values(
                record_id=record_id,
                key=key,
                method=item.method,
                params=item.params,
                created_at=at,
            )
        )
        added.append(item)
    return added


def list_task_inputs(session: Session, record_id: str) -> list[TaskInput]:
    """A task's input requests in the order they arrived."""
    return [_input(r) for r in session.execute(_INPUTS, {"record_id": record_id})]


def inputs_of(session: Session, record_ids: Collection[str]) -> dict[str, list[TaskInput]]:
    """The input requests of every record in ``record_ids``, by record, each in the order
    they arrived (a record without any is left out)."""
    found: dict[str, list[TaskInput]] = {}
    for ids in _chunks(list(record_ids)):
        rows = session.execute(
            select(t.task_inputs)
            .where(t.task_inputs.c.record_id.in_(ids))
            .order_by(t.task_inputs.c.created_at, t.task_inputs.c.key)
        )
        for row in rows:
            found.setdefault(row.record_id, []).append(_input(row))
    return found


def task_record_with_inputs(
    session: Session, record_id: str
) -> tuple[TaskRecord, list[TaskInput]] | None:
    """A record and its input requests (None: no such record)."""
    record = get_task_record(session, record_id)
    return None if record is None else (record, list_task_inputs(session, record_id))


def save_answer(
    session: Session, record_id: str, key: str, answer: dict[str, Any], *, at: datetime
) -> None:
    """Save the user's answer (before it is sent); an answer once saved is not replaced."""
    done = session.execute(
        update(t.task_inputs)
        .where(
            and_(
                t.task_inputs.c.record_id == record_id,
                t.task_inputs.c.key == key,
                t.task_inputs.c.answer.is_(None),
            )
        )
        .values(answer=answer, answered_at=at)
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]  # CursorResult has rowcount
        raise ValueError(f"input {key!r} of {record_id} is unknown or already answered")


def mark_answer_delivered(
    session: Session,
    record_id: str,
    keys: Sequence[str],
    *,
    at: datetime,
    outcome: str | None = None,
) -> None:
    """The server acknowledged these answers (or, with ``outcome``, they could not be)."""
    values: dict[str, Any] = {"acknowledged_at": at} if outcome is None else {"outcome": outcome}
    session.execute(
        update(t.task_inputs)
        .where(and_(t.task_inputs.c.record_id == record_id, t.task_inputs.c.key.in_(list(keys))))
        .values(**values)
    )


# -- applying a reconciliation ---------------------------------------------------------------

_ROUND_OUTCOME = {
    LocalState.COMPLETED: RoundOutcome.RESULT,
    LocalState.FAILED: RoundOutcome.ERROR,
    LocalState.CANCELLED: RoundOutcome.CANCELLED,
    LocalState.EXPIRED: RoundOutcome.LOST,
    LocalState.ABANDONED: RoundOutcome.LOST,
    LocalState.DENIED: RoundOutcome.DENIED,
}


def apply_reconciliation(session: Session, rec: Reconciliation) -> list[TaskInput]:
    """Persist everything one reconciliation decided, in the caller's transaction.

    The record, the final result or error in its tool round, and new input requests commit
    together; returns the input requests that were new.
    """
    if not rec.changed:
        return []
    record = rec.record
    save_task_record(session, record, expected_updated_at=rec.base_updated_at)
    if rec.state_changed and record.is_terminal and record.tool_round_id is not None:
        finish_tool_round(
            session,
            record.tool_round_id,
            outcome=_ROUND_OUTCOME[record.state],
            at=record.updated_at,
            result=rec.result,
            error=rec.error,
        )
    if rec.input_requests:
        return add_task_inputs(session, record.id, rec.input_requests, at=record.updated_at)
    return []
