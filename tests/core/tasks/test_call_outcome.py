"""What each answer to tools/call does to an operation record in ``creating``."""

from __future__ import annotations

from datetime import timedelta

from mooring.core.tasks.calls import (
    AuthFailed,
    CallRejected,
    ImmediateResult,
    NoAnswer,
    NotSent,
    TaskCreated,
)
from mooring.core.tasks.reconcile import Outcome, ServerTask, apply_call_outcome
from mooring.core.tasks.states import LocalState
from tests.core.tasks.factories import T0, make_record

S = LocalState
NOW = T0 + timedelta(seconds=1)


def test_created_task_takes_its_id_and_first_status_together() -> None:
    created = ServerTask(
        task_id="t-123", status="working", status_message="queued", poll_interval_ms=500
    )
    rec = apply_call_outcome(make_record(S.CREATING), TaskCreated(created), now=NOW)
    assert rec.record.state is S.WORKING
    assert rec.record.task_id == "t-123"
    assert rec.record.poll_interval_ms == 500
    assert rec.record.poll_count == 0  # the create answer is not a poll


def test_created_task_already_waiting_for_input_keeps_its_requests() -> None:
    requests = {"k": {"method": "elicitation/create", "params": {"message": "?"}}}
    created = ServerTask(task_id="t", status="input_required", input_requests=requests)
    rec = apply_call_outcome(make_record(S.CREATING), TaskCreated(created), now=NOW)
    assert rec.record.state is S.INPUT_REQUIRED
    assert rec.input_requests == requests


def test_plain_result_completes_at_once() -> None:
    result = {"content": [{"type": "text", "text": "3 suppliers"}]}
    rec = apply_call_outcome(make_record(S.CREATING), ImmediateResult(result), now=NOW)
    assert (rec.record.state, rec.result) == (S.COMPLETED, result)
    assert rec.record.task_id is None


def test_json_rpc_error_fails_with_the_error_kept() -> None:
    error = {"code": -32602, "message": "Unknown tool: nope"}
    rec = apply_call_outcome(make_record(S.CREATING), CallRejected(error), now=NOW)
    assert (rec.record.state, rec.error) == (S.FAILED, error)


def test_not_sent_is_a_failure_that_says_nothing_ran() -> None:
    for outcome in (NotSent("command not found"), AuthFailed("401")):
        rec = apply_call_outcome(make_record(S.CREATING), outcome, now=NOW)
        assert rec.record.state is S.FAILED
        assert rec.record.reason is not None
        assert "nothing was run" in rec.record.reason


def test_no_answer_is_an_unknown_outcome_not_a_failure() -> None:
    rec = apply_call_outcome(make_record(S.CREATING), NoAnswer("connection reset"), now=NOW)
    assert rec.record.state is S.UNKNOWN_OUTCOME
    assert rec.record.reason is not None
    assert "may or may not have run" in rec.record.reason


def test_only_records_in_creating_take_a_call_outcome() -> None:
    rec = apply_call_outcome(make_record(S.WORKING), NoAnswer("late"), now=NOW)
    assert rec.outcome is Outcome.UNCHANGED
