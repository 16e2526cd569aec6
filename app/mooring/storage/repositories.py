"""Repositories: functions of a :class:`Session` that speak in core objects.

Each takes the session of the caller's transaction, so several changes (a state transition, the
final result into its tool round, new input requests) commit together or not at all — "write,
then tell" starts here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, and_, delete, func, insert, literal, or_, select, update
from sqlalchemy.orm import Session

from mooring.core.approval.rules import (
    ApprovalAuditEntry,
    ApprovalRule,
    Decision,
    Scope,
)
from mooring.core.conversation import Conversation, Message, Role, RoundOutcome, ToolRound
from mooring.core.errors import RecordChanged
from mooring.core.issues import Issue, IssueKind
from mooring.core.servers import CredentialProfile, ServerDefinition, Transport
from mooring.core.tasks.calls import TaskWire
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.reconcile import Reconciliation
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import TERMINAL_STATES, LocalState, TaskFlag
from mooring.storage import tables as t

# -- servers -------------------------------------------------------------------------------


def _server(row: Row[Any]) -> ServerDefinition:
    return ServerDefinition(
        id=row.id,
        alias=row.alias,
        transport=Transport(row.transport),
        command=row.command,
        args=tuple(row.args),
        env=dict(row.env),
        cwd=row.cwd,
        url=row.url,
        headers=dict(row.headers),
        trusted=row.trusted,
        enabled=row.enabled,
        builtin=row.builtin,
        allowed_tools=None if row.allowed_tools is None else tuple(row.allowed_tools),
        hidden_tools=tuple(row.hidden_tools),
        created_at=row.created_at,
    )


def add_server(session: Session, server: ServerDefinition) -> None:
    """Store a new server definition."""
    session.execute(
        insert(t.servers).values(
            id=server.id,
            alias=server.alias,
            transport=server.transport.value,
            command=server.command,
            args=list(server.args),
            env=server.env,
            cwd=server.cwd,
            url=server.url,
            headers=server.headers,
            trusted=server.trusted,
            enabled=server.enabled,
            builtin=server.builtin,
            allowed_tools=None if server.allowed_tools is None else list(server.allowed_tools),
            hidden_tools=list(server.hidden_tools),
            created_at=server.created_at,
        )
    )


def list_servers(session: Session) -> list[ServerDefinition]:
    """Every server that has not been removed, by alias."""
    rows = session.execute(
        select(t.servers).where(t.servers.c.removed_at.is_(None)).order_by(t.servers.c.alias)
    )
    return [_server(r) for r in rows]


def get_server(session: Session, server_id: str) -> ServerDefinition | None:
    """A server by id, even a removed one (its tasks still name it)."""
    row = session.execute(select(t.servers).where(t.servers.c.id == server_id)).first()
    return _server(row) if row else None


def find_server(session: Session, alias: str) -> ServerDefinition | None:
    """A live server by alias."""
    row = session.execute(
        select(t.servers).where(and_(t.servers.c.alias == alias, t.servers.c.removed_at.is_(None)))
    ).first()
    return _server(row) if row else None


def server_removed_at(session: Session, server_id: str) -> datetime | None:
    """When a server was removed, or ``None`` while it exists."""
    removed: datetime | None = session.execute(
        select(t.servers.c.removed_at).where(t.servers.c.id == server_id)
    ).scalar_one_or_none()
    return removed


def builtin_server_ever_configured(session: Session) -> bool:
    """Whether a built-in server exists or ever existed."""
    found = session.execute(
        select(t.servers.c.id).where(t.servers.c.builtin.is_(True)).limit(1)
    ).first()
    return found is not None


def set_server_trusted(session: Session, server_id: str, trusted: bool) -> None:
    """Trust (or stop trusting) a server's tool annotations."""
    session.execute(update(t.servers).where(t.servers.c.id == server_id).values(trusted=trusted))


def remove_server(session: Session, server_id: str, *, at: datetime) -> None:
    """Remove a server; the row stays so its tasks can still be explained."""
    session.execute(update(t.servers).where(t.servers.c.id == server_id).values(removed_at=at))


# -- credential profiles ---------------------------------------------------------------------


def add_profile(session: Session, profile: CredentialProfile) -> None:
    """Store a new account for a server (its secrets go to the keyring, not here)."""
    session.execute(
        insert(t.credential_profiles).values(
            id=profile.id,
            server_id=profile.server_id,
            label=profile.label,
            created_at=profile.created_at,
        )
    )


def list_profiles(session: Session, server_id: str) -> list[CredentialProfile]:
    """The live accounts of one server."""
    rows = session.execute(
        select(t.credential_profiles).where(
            and_(
                t.credential_profiles.c.server_id == server_id,
                t.credential_profiles.c.removed_at.is_(None),
            )
        )
    )
    return [
        CredentialProfile(id=r.id, server_id=r.server_id, label=r.label, created_at=r.created_at)
        for r in rows
    ]


def remove_profile(session: Session, profile_id: str, *, at: datetime) -> None:
    """Remove an account; the row stays so its tasks can still be explained."""
    session.execute(
        update(t.credential_profiles)
        .where(t.credential_profiles.c.id == profile_id)
        .values(removed_at=at)
    )


def profile_removed_at(session: Session, profile_id: str) -> datetime | None:
    """When an account was removed (``None`` while it exists or is unknown)."""
    removed: datetime | None = session.execute(
        select(t.credential_profiles.c.removed_at).where(t.credential_profiles.c.id == profile_id)
    ).scalar_one_or_none()
    return removed


# -- conversations and tool rounds ----------------------------------------------------------


def add_conversation(session: Session, conversation: Conversation) -> None:
    """Store a new conversation."""
    session.execute(
        insert(t.conversations).values(
            id=conversation.id,
            title=conversation.title,
            created_at=conversation.created_at,
            updated_at=conversation.updated_at,
        )
    )


def list_conversations(session: Session) -> list[Conversation]:
    """Conversations, most recently active first."""
    rows = session.execute(select(t.conversations).order_by(t.conversations.c.updated_at.desc()))
    return [
        Conversation(id=r.id, title=r.title, created_at=r.created_at, updated_at=r.updated_at)
        for r in rows
    ]


def add_message(session: Session, message: Message) -> None:
    """Append a message and mark its conversation active."""
    session.execute(
        insert(t.messages).values(
            id=message.id,
            conversation_id=message.conversation_id,
            role=message.role.value,
            content=message.content,
            created_at=message.created_at,
        )
    )
    session.execute(
        update(t.conversations)
        .where(t.conversations.c.id == message.conversation_id)
        .values(updated_at=message.created_at)
    )


def list_messages(session: Session, conversation_id: str) -> list[Message]:
    """A conversation's messages in order."""
    rows = session.execute(
        select(t.messages)
        .where(t.messages.c.conversation_id == conversation_id)
        .order_by(t.messages.c.created_at, t.messages.c.id)
    )
    return [
        Message(
            id=r.id,
            conversation_id=r.conversation_id,
            role=Role(r.role),
            content=r.content,
            created_at=r.created_at,
        )
        for r in rows
    ]


def _round(row: Row[Any]) -> ToolRound:
    return ToolRound(
        id=row.id,
        conversation_id=row.conversation_id,
        server_id=row.server_id,
        tool=row.tool,
        arguments=dict(row.arguments),
        argument_digest=row.argument_digest,
        approval=row.approval,
        outcome=RoundOutcome(row.outcome),
        result=row.result,
        error=row.error,
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


def add_tool_round(session: Session, tool_round: ToolRound) -> None:
    """Store a new tool round."""
    session.execute(
        insert(t.tool_rounds).values(
            id=tool_round.id,
            conversation_id=tool_round.conversation_id,
            server_id=tool_round.server_id,
            tool=tool_round.tool,
            arguments=tool_round.arguments,
            argument_digest=tool_round.argument_digest,
            approval=tool_round.approval,
            outcome=tool_round.outcome.value,
            result=tool_round.result,
            error=tool_round.error,
            created_at=tool_round.created_at,
            finished_at=tool_round.finished_at,
        )
    )


def get_tool_round(session: Session, round_id: str) -> ToolRound | None:
    """A tool round by id."""
    row = session.execute(select(t.tool_rounds).where(t.tool_rounds.c.id == round_id)).first()
    return _round(row) if row else None


def finish_tool_round(
    session: Session,
    round_id: str,
    *,
    outcome: RoundOutcome,
    at: datetime,
    result: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
) -> None:
    """Record how a tool round ended (its final result or error is kept here for good)."""
    session.execute(
        update(t.tool_rounds)
        .where(t.tool_rounds.c.id == round_id)
        .values(outcome=outcome.value, result=result, error=error, finished_at=at)
    )


# -- the task ledger -------------------------------------------------------------------------


# A task record's fields map to the columns of the same names, in one place: a new field needs
# the dataclass field, the column and a migration, and nothing here unless it needs converting.
_RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(TaskRecord))
_TO_COLUMN: dict[str, Callable[[Any], Any]] = {
    "state": lambda state: state.value,
    "flags": lambda flags: sorted(f.value for f in flags),
    "wire": lambda wire: wire.value if wire is not None else None,
}
_FROM_COLUMN: dict[str, Callable[[Any], Any]] = {
    "state": LocalState,
    "flags": lambda values: frozenset(TaskFlag(f) for f in values),
    "wire": lambda value: TaskWire(value) if value is not None else None,
}


def _record_values(record: TaskRecord) -> dict[str, Any]:
    values = {name: getattr(record, name) for name in _RECORD_FIELDS}
    for name, convert in _TO_COLUMN.items():
        values[name] = convert(values[name])
    return values


def _record(row: Row[Any]) -> TaskRecord:
    mapping = row._mapping
    values = {name: mapping[name] for name in _RECORD_FIELDS}
    for name, convert in _FROM_COLUMN.items():
        values[name] = convert(values[name])
    return TaskRecord(**values)


def add_task_record(session: Session, record: TaskRecord) -> None:
    """Persist a new operation (normally in ``creating``, before anything is sent)."""
    session.execute(insert(t.task_records).values(**_record_values(record)))


def save_task_record(
    session: Session, record: TaskRecord, *, expected_updated_at: datetime | None = None
) -> None:
    """Persist a changed record.

    A stored terminal record is never overwritten. With ``expected_updated_at`` the write only
    applies to that stored version (compare-and-swap): another process may have moved the
    record on meanwhile, and its write must not be lost. A cancel request, once stored, stays.
    """
    values = _record_values(record)
    del values["id"]
    values["cancel_requested"] = or_(
        t.task_records.c.cancel_requested, literal(bool(record.cancel_requested))
    )
    terminal = [s.value for s in TERMINAL_STATES]
    conditions = [t.task_records.c.id == record.id, t.task_records.c.state.not_in(terminal)]
    if expected_updated_at is not None:
        conditions.append(t.task_records.c.updated_at == expected_updated_at)
    done = session.execute(update(t.task_records).where(and_(*conditions)).values(**values))
    if done.rowcount != 1:  # type: ignore[attr-defined]  # CursorResult has rowcount
        stored = get_task_record(session, record.id)
        if stored is None:
            raise LookupError(f"no task record {record.id}")
        if stored.is_terminal:
            raise RecordChanged(record.id, f"it is {stored.state}: terminal, not overwritten")
        raise RecordChanged(record.id, f"it is {stored.state} now")


def get_task_record(session: Session, record_id: str) -> TaskRecord | None:
    """A record by local operation id."""
    row = session.execute(select(t.task_records).where(t.task_records.c.id == record_id)).first()
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


def list_unfinished_task_records(session: Session) -> list[TaskRecord]:
    """Every record that is not terminal (what launch reconciliation looks at)."""
    terminal = [s.value for s in TERMINAL_STATES]
    rows = session.execute(
        select(t.task_records)
        .where(t.task_records.c.state.not_in(terminal))
        .order_by(t.task_records.c.created_at)
    )
    return [_record(r) for r in rows]


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
    rows = session.execute(
        select(t.task_inputs)
        .where(t.task_inputs.c.record_id == record_id)
        .order_by(t.task_inputs.c.created_at, t.task_inputs.c.key)
    )
    return [_input(r) for r in rows]


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


# -- approval rules and audit ----------------------------------------------------------------


def add_rule(session: Session, rule: ApprovalRule) -> None:
    """Store a user's approval rule."""
    session.execute(
        insert(t.approval_rules).values(
            id=rule.id,
            server_identity=rule.server_identity,
            tool_pattern=rule.tool_pattern,
            decision=rule.decision.value,
            scope=rule.scope.value,
            conversation_id=rule.conversation_id,
            created_at=rule.created_at,
        )
    )


def list_rules(session: Session) -> list[ApprovalRule]:
    """Every stored approval rule, oldest first."""
    rows = session.execute(select(t.approval_rules).order_by(t.approval_rules.c.created_at))
    return [
        ApprovalRule(
            id=r.id,
            server_identity=r.server_identity,
            tool_pattern=r.tool_pattern,
            decision=Decision(r.decision),
            scope=Scope(r.scope),
            conversation_id=r.conversation_id,
            created_at=r.created_at,
        )
        for r in rows
    ]


def remove_rule(session: Session, rule_id: str) -> bool:
    """Delete a rule; whether it existed."""
    done = session.execute(delete(t.approval_rules).where(t.approval_rules.c.id == rule_id))
    return bool(done.rowcount)  # type: ignore[attr-defined]  # CursorResult has rowcount


def list_audit(session: Session, limit: int = 100) -> list[ApprovalAuditEntry]:
    """The newest approval outcomes first."""
    rows = session.execute(
        select(t.approval_audit).order_by(t.approval_audit.c.at.desc()).limit(limit)
    )
    return [
        ApprovalAuditEntry(
            id=r.id,
            at=r.at,
            server_id=r.server_id,
            tool=r.tool,
            argument_digest=r.argument_digest,
            outcome=r.outcome,
            actor=r.actor,
            rule_id=r.rule_id,
            tool_round_id=r.tool_round_id,
        )
        for r in rows
    ]


def set_round_approval(session: Session, round_id: str, approval: str) -> None:
    """Record on the tool round how its approval ended."""
    session.execute(
        update(t.tool_rounds).where(t.tool_rounds.c.id == round_id).values(approval=approval)
    )


def add_audit(session: Session, entry: ApprovalAuditEntry) -> None:
    """Append an approval outcome to the audit table."""
    session.execute(
        insert(t.approval_audit).values(
            id=entry.id,
            at=entry.at,
            server_id=entry.server_id,
            tool=entry.tool,
            argument_digest=entry.argument_digest,
            outcome=entry.outcome,
            actor=entry.actor,
            rule_id=entry.rule_id,
            tool_round_id=entry.tool_round_id,
        )
    )


# -- persistent issues -----------------------------------------------------------------------


def _issue(row: Row[Any]) -> Issue:
    return Issue(
        id=row.id,
        kind=IssueKind(row.kind),
        subject=row.subject,
        title=row.title,
        detail=row.detail,
        created_at=row.created_at,
        resolved_at=row.resolved_at,
    )


def raise_issue(session: Session, issue: Issue) -> Issue:
    """Open an issue, or refresh the open one of the same kind and subject."""
    existing = session.execute(
        select(t.issues).where(
            and_(
                t.issues.c.kind == issue.kind.value,
                t.issues.c.subject == issue.subject,
                t.issues.c.resolved_at.is_(None),
            )
        )
    ).first()
    if existing is not None:
        session.execute(
            update(t.issues)
            .where(t.issues.c.id == existing.id)
            .values(title=issue.title, detail=issue.detail)
        )
        return Issue(
            id=existing.id,
            kind=issue.kind,
            subject=issue.subject,
            title=issue.title,
            detail=issue.detail,
            created_at=existing.created_at,
        )
    session.execute(
        insert(t.issues).values(
            id=issue.id,
            kind=issue.kind.value,
            subject=issue.subject,
            title=issue.title,
            detail=issue.detail,
            created_at=issue.created_at,
        )
    )
    return issue


def list_open_issues(session: Session) -> list[Issue]:
    """Issues the user has not resolved, oldest first."""
    rows = session.execute(
        select(t.issues).where(t.issues.c.resolved_at.is_(None)).order_by(t.issues.c.created_at)
    )
    return [_issue(r) for r in rows]


def resolve_issue(session: Session, issue_id: str, *, at: datetime) -> None:
    """Mark an issue resolved."""
    session.execute(update(t.issues).where(t.issues.c.id == issue_id).values(resolved_at=at))


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
