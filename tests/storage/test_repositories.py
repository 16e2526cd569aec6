"""Repositories round-trip core objects through a real SQLite file."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.orm import Session

from mooring.core.approval.rules import ApprovalAuditEntry, ApprovalRule, Decision, Scope
from mooring.core.conversation import RoundOutcome, ToolRound
from mooring.core.ids import argument_digest, new_id
from mooring.core.issues import Issue, IssueKind
from mooring.core.servers import CredentialProfile, ServerDefinition, Transport
from mooring.core.tasks.reconcile import ServerTask, StatusUnavailable, reconcile
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState, TaskFlag
from mooring.storage import repositories as repo
from mooring.storage.db import Database
from tests.core.tasks.factories import T0

S = LocalState


def a_server(alias: str = "demo", **changes: object) -> ServerDefinition:
    values: dict[str, object] = {
        "id": new_id(),
        "alias": alias,
        "transport": Transport.STDIO,
        "command": "python",
        "args": ("-m", "demo"),
        "env": {"LANG": "C"},
        "created_at": T0,
    }
    values.update(changes)
    return ServerDefinition(**values)  # type: ignore[arg-type]


def an_operation(server: ServerDefinition) -> tuple[ToolRound, TaskRecord]:
    args = {"path": "suppliers.csv"}
    tool_round = ToolRound(
        id=new_id(),
        server_id=server.id,
        tool="import_suppliers",
        arguments=args,
        argument_digest=argument_digest(args),
        created_at=T0,
    )
    record = TaskRecord(
        id=new_id(),
        server_id=server.id,
        tool="import_suppliers",
        argument_digest=tool_round.argument_digest,
        state=S.CREATING,
        created_at=T0,
        updated_at=T0,
        tool_round_id=tool_round.id,
        trace_context="00-" + "a" * 32 + "-" + "b" * 16 + "-01",
    )
    return tool_round, record


def begin(db: Database, tool_round: ToolRound, record: TaskRecord) -> None:
    def write(session: Session) -> None:
        repo.add_tool_round(session, tool_round)
        repo.add_task_record(session, record)

    db.call_sync(write)


def test_servers_round_trip_and_removal_keeps_history(db: Database) -> None:
    stdio = a_server("demo", trusted=True, builtin=True)
    http = a_server(
        "remote",
        transport=Transport.HTTP,
        command=None,
        args=(),
        url="http://127.0.0.1:9/mcp",
        headers={"X-Team": "blue"},
    )
    db.call_sync(lambda s: repo.add_server(s, stdio))
    db.call_sync(lambda s: repo.add_server(s, http))
    assert db.call_sync(repo.list_servers) == [stdio, http]
    assert db.call_sync(lambda s: repo.find_server(s, "remote")) == http

    db.call_sync(lambda s: repo.remove_server(s, stdio.id, at=T0))
    assert db.call_sync(repo.list_servers) == [http]
    assert db.call_sync(lambda s: repo.get_server(s, stdio.id)) == stdio
    assert db.call_sync(repo.builtin_server_ever_configured)
    # The alias is free again for a new server.
    db.call_sync(lambda s: repo.add_server(s, a_server("demo")))


def test_live_aliases_are_unique(db: Database) -> None:
    db.call_sync(lambda s: repo.add_server(s, a_server("demo")))
    with pytest.raises(Exception, match="UNIQUE"):
        db.call_sync(lambda s: repo.add_server(s, a_server("demo")))


def test_profiles_round_trip(db: Database) -> None:
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    profile = CredentialProfile(id=new_id(), server_id=server.id, label="work", created_at=T0)
    db.call_sync(lambda s: repo.add_profile(s, profile))
    assert db.call_sync(lambda s: repo.list_profiles(s, server.id)) == [profile]


def test_task_record_round_trips_every_field(db: Database) -> None:
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    tool_round, record = an_operation(server)
    begin(db, tool_round, record)
    assert db.call_sync(lambda s: repo.get_task_record(s, record.id)) == record

    working = record.transition(
        S.WORKING,
        at=T0 + timedelta(seconds=1),
        task_id="t-" + "x" * 30,
        server_status="working",
        status_message="validated 12,000 of 200,000 rows",
        flags=frozenset({TaskFlag.STATUS_UNAVAILABLE}),
        server_created_at=T0,
        server_updated_at=T0,
        next_poll_at=T0 + timedelta(seconds=2),
        ttl_ms=60_000,
        poll_interval_ms=500,
        poll_count=3,
        poll_failures=1,
        anomaly_count=2,
        cancel_requested=True,
        reason="status temporarily unavailable",
    )
    db.call_sync(lambda s: repo.save_task_record(s, working))
    assert db.call_sync(lambda s: repo.get_task_record(s, record.id)) == working
    assert db.call_sync(lambda s: repo.find_task_record(s, working.task_id or "")) == working
    assert db.call_sync(lambda s: repo.find_task_record(s, record.id[:8])) == working
    assert db.call_sync(repo.list_unfinished_task_records) == [working]
    assert db.call_sync(repo.count_task_records) == {S.WORKING: 1}


def test_a_stored_terminal_record_is_never_overwritten(db: Database) -> None:
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    tool_round, record = an_operation(server)
    begin(db, tool_round, record)
    done = record.transition(S.COMPLETED, at=T0)
    db.call_sync(lambda s: repo.save_task_record(s, done))
    stale = record.transition(S.UNKNOWN_OUTCOME, at=T0)
    with pytest.raises(ValueError, match="terminal"):
        db.call_sync(lambda s: repo.save_task_record(s, stale))
    assert db.call_sync(lambda s: repo.get_task_record(s, record.id)) == done


def test_completion_and_its_result_commit_together(db: Database) -> None:
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    tool_round, record = an_operation(server)
    begin(db, tool_round, record)
    working = record.transition(S.WORKING, at=T0, task_id="task-1")
    db.call_sync(lambda s: repo.save_task_record(s, working))

    result = {"content": [{"type": "text", "text": "saved 3 suppliers"}], "isError": False}
    rec = reconcile(
        working,
        ServerTask(task_id="task-1", status="completed", result=result),
        now=T0 + timedelta(seconds=3),
    )
    db.call_sync(lambda s: repo.apply_reconciliation(s, rec))

    stored_round = db.call_sync(lambda s: repo.get_tool_round(s, tool_round.id))
    assert stored_round is not None
    assert stored_round.outcome is RoundOutcome.RESULT
    assert stored_round.result == result
    stored = db.call_sync(lambda s: repo.get_task_record(s, record.id))
    assert stored is not None
    assert stored.state is S.COMPLETED


def test_a_failed_write_leaves_neither_half(db: Database) -> None:
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    tool_round, record = an_operation(server)
    begin(db, tool_round, record)
    working = record.transition(S.WORKING, at=T0, task_id="task-1")
    db.call_sync(lambda s: repo.save_task_record(s, working))
    rec = reconcile(
        working,
        ServerTask(task_id="task-1", status="completed", result={"content": []}),
        now=T0,
    )

    def apply_then_fail(session: Session) -> None:
        repo.apply_reconciliation(session, rec)
        raise RuntimeError("crash between the two writes")

    with pytest.raises(RuntimeError):
        db.call_sync(apply_then_fail)
    assert db.call_sync(lambda s: repo.get_task_record(s, record.id)) == working
    stored_round = db.call_sync(lambda s: repo.get_tool_round(s, tool_round.id))
    assert stored_round is not None
    assert stored_round.outcome is RoundOutcome.PENDING


def test_input_requests_are_stored_once_and_answers_tracked(db: Database) -> None:
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    tool_round, record = an_operation(server)
    begin(db, tool_round, record)
    working = record.transition(S.WORKING, at=T0, task_id="task-1")
    db.call_sync(lambda s: repo.save_task_record(s, working))
    requests = {
        "id-column": {"method": "elicitation/create", "params": {"message": "Which column?"}}
    }
    first = reconcile(
        working,
        ServerTask(task_id="task-1", status="input_required", input_requests=requests),
        now=T0,
    )
    assert len(db.call_sync(lambda s: repo.apply_reconciliation(s, first))) == 1
    again = reconcile(
        first.record,
        ServerTask(task_id="task-1", status="input_required", input_requests=requests),
        now=T0 + timedelta(seconds=1),
    )
    assert db.call_sync(lambda s: repo.apply_reconciliation(s, again)) == []

    answer = {"action": "accept", "content": {"column": "vendor_no"}}
    db.call_sync(lambda s: repo.save_answer(s, record.id, "id-column", answer, at=T0))
    [stored] = db.call_sync(lambda s: repo.list_task_inputs(s, record.id))
    assert stored.answer == answer
    assert stored.awaiting_delivery
    with pytest.raises(ValueError, match="already answered"):
        db.call_sync(lambda s: repo.save_answer(s, record.id, "id-column", answer, at=T0))
    db.call_sync(lambda s: repo.mark_answer_delivered(s, record.id, ["id-column"], at=T0))
    [acked] = db.call_sync(lambda s: repo.list_task_inputs(s, record.id))
    assert not acked.awaiting_delivery


def test_status_unavailable_updates_flags_but_not_state(db: Database) -> None:
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    tool_round, record = an_operation(server)
    begin(db, tool_round, record)
    working = record.transition(S.WORKING, at=T0, task_id="task-1")
    db.call_sync(lambda s: repo.save_task_record(s, working))
    rec = reconcile(working, StatusUnavailable("timeout"), now=T0)
    db.call_sync(lambda s: repo.apply_reconciliation(s, rec))
    stored = db.call_sync(lambda s: repo.get_task_record(s, record.id))
    assert stored is not None
    assert stored.state is S.WORKING
    assert TaskFlag.STATUS_UNAVAILABLE in stored.flags


def test_rules_audit_and_issues_round_trip(db: Database) -> None:
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    rule = ApprovalRule(
        id=new_id(),
        server_identity=server.identity,
        tool_pattern="list_*",
        decision=Decision.ALLOW,
        scope=Scope.ALWAYS,
        created_at=T0,
    )
    db.call_sync(lambda s: repo.add_rule(s, rule))
    assert db.call_sync(repo.list_rules) == [rule]
    entry = ApprovalAuditEntry(
        id=new_id(),
        at=T0,
        server_id=server.id,
        tool="delete_supplier",
        argument_digest="sha256:1",
        outcome="denied",
        actor="user",
    )
    db.call_sync(lambda s: repo.add_audit(s, entry))

    issue = Issue(
        id=new_id(),
        kind=IssueKind.SERVER_UNAVAILABLE,
        subject=server.id,
        title="demo does not start",
        detail="command not found",
        created_at=T0,
    )
    db.call_sync(lambda s: repo.raise_issue(s, issue))
    refreshed = Issue(
        id=new_id(),
        kind=IssueKind.SERVER_UNAVAILABLE,
        subject=server.id,
        title="demo still does not start",
        detail="exit code 1",
        created_at=T0,
    )
    kept = db.call_sync(lambda s: repo.raise_issue(s, refreshed))
    assert kept.id == issue.id
    [open_issue] = db.call_sync(repo.list_open_issues)
    assert open_issue.title == "demo still does not start"
    db.call_sync(lambda s: repo.resolve_issue(s, issue.id, at=T0))
    assert db.call_sync(repo.list_open_issues) == []


def test_a_write_based_on_a_stale_version_is_refused_and_the_newer_one_kept(
    db: Database,
) -> None:
    from mooring.core.errors import RecordChanged

    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    tool_round, record = an_operation(server)
    begin(db, tool_round, record)
    working = record.transition(S.WORKING, at=T0, task_id="task-1")
    db.call_sync(lambda s: repo.save_task_record(s, working))
    # Two processes read the same version; one cancels, the other polls.
    cancelled = working.evolve(at=T0 + timedelta(seconds=1), cancel_requested=True)
    db.call_sync(
        lambda s: repo.save_task_record(s, cancelled, expected_updated_at=working.updated_at)
    )
    polled = reconcile(
        working,
        ServerTask(task_id="task-1", status="working", status_message="step 2"),
        now=T0 + timedelta(seconds=2),
    )
    with pytest.raises(RecordChanged):
        db.call_sync(lambda s: repo.apply_reconciliation(s, polled))
    stored = db.call_sync(lambda s: repo.get_task_record(s, record.id))
    assert stored is not None
    assert stored.cancel_requested is True


def test_a_cancel_request_once_stored_is_never_cleared(db: Database) -> None:
    server = a_server()
    db.call_sync(lambda s: repo.add_server(s, server))
    tool_round, record = an_operation(server)
    begin(db, tool_round, record)
    working = record.transition(S.WORKING, at=T0, task_id="task-1", cancel_requested=True)
    db.call_sync(lambda s: repo.save_task_record(s, working))
    unaware = working.evolve(at=T0 + timedelta(seconds=1), cancel_requested=False)
    db.call_sync(lambda s: repo.save_task_record(s, unaware))  # a blind write
    stored = db.call_sync(lambda s: repo.get_task_record(s, record.id))
    assert stored is not None
    assert stored.cancel_requested is True


def test_every_task_record_field_has_its_column() -> None:
    import dataclasses

    from mooring.core.tasks.record import TaskRecord
    from mooring.storage import tables

    fields = {f.name for f in dataclasses.fields(TaskRecord)}
    assert fields == set(tables.task_records.c.keys())
