"""Reconciliation rules: what each server observation does to a record."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mooring.core.tasks.reconcile import (
    AuthRequired,
    MalformedReply,
    Observation,
    Outcome,
    ServerTask,
    StatusUnavailable,
    TaskGone,
    interrupted_create,
    reconcile,
)
from mooring.core.tasks.states import TERMINAL_STATES, LocalState, TaskFlag
from mooring.core.tasks.words import state_words
from tests.core.tasks.factories import T0, make_record

S = LocalState
NOW = T0 + timedelta(seconds=5)


def seen(status: str, **extra: object) -> ServerTask:
    fields: dict[str, object] = {"task_id": "task-1", "status": status}
    fields.update(extra)
    return ServerTask(**fields)  # type: ignore[arg-type]


def test_completed_carries_the_result_to_persist() -> None:
    result = {"content": [{"type": "text", "text": "saved 3"}], "isError": False}
    rec = reconcile(make_record(), seen("completed", result=result), now=NOW)
    assert rec.outcome is Outcome.TRANSITIONED
    assert rec.record.state is S.COMPLETED
    assert rec.result == result
    assert rec.record.poll_count == 1
    assert rec.record.last_checked_at == NOW


def test_tool_error_result_is_still_a_completed_task() -> None:
    result = {"content": [{"type": "text", "text": "no such file"}], "isError": True}
    rec = reconcile(make_record(), seen("completed", result=result), now=NOW)
    assert rec.record.state is S.COMPLETED
    assert rec.result == result


def test_failed_carries_the_json_rpc_error() -> None:
    error = {"code": -32603, "message": "database write failed"}
    rec = reconcile(make_record(), seen("failed", error=error), now=NOW)
    assert rec.record.state is S.FAILED
    assert rec.error == error


def test_an_end_that_only_repeats_the_last_progress_line_does_not_keep_it() -> None:
    # A server whose task store keeps the last statusMessage when the task ends (the reference
    # "everything" server): "Generating report..." is no longer what the task is doing.
    record = make_record(status_message="Generating report...")
    result = {"content": [{"type": "text", "text": "# Research Report"}], "isError": False}
    rec = reconcile(
        record, seen("completed", status_message="Generating report...", result=result), now=NOW
    )
    assert rec.record.state is S.COMPLETED
    assert rec.record.status_message is None
    assert str(state_words(rec.record, result)) == "completed"


def test_an_end_without_a_status_message_leaves_none_shown() -> None:
    record = make_record(S.INPUT_REQUIRED, status_message="Which column?")
    rec = reconcile(record, seen("failed", error={"code": -1, "message": "x"}), now=NOW)
    assert rec.record.status_message is None
    assert str(state_words(rec.record)) == "failed"


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_a_final_status_message_sent_with_the_end_is_the_one_shown(status: str) -> None:
    record = make_record(status_message="saved 899 of 6,000 rows")
    final = "Cancelled after 900 of 6,000 rows; the 899 suppliers saved stay saved"
    rec = reconcile(record, seen(status, status_message=final), now=NOW)
    assert rec.record.status_message == final
    assert final in str(state_words(rec.record))


def test_an_expired_task_no_longer_shows_its_last_progress_line() -> None:
    rec = reconcile(
        make_record(status_message="Generating report..."), TaskGone("-32602 gone"), now=NOW
    )
    assert rec.record.state is S.EXPIRED
    assert rec.record.status_message is None
    assert "Generating report" not in str(state_words(rec.record))


def test_status_unavailable_keeps_the_last_known_state() -> None:
    record = make_record(S.INPUT_REQUIRED, status_message="which column?")
    rec = reconcile(record, StatusUnavailable("connection refused"), now=NOW)
    assert rec.record.state is S.INPUT_REQUIRED
    assert rec.record.status_message == "which column?"
    assert TaskFlag.STATUS_UNAVAILABLE in rec.record.flags
    assert rec.record.poll_failures == 1


def test_a_valid_reply_clears_status_unavailable_and_auth_required() -> None:
    record = make_record(
        flags=frozenset({TaskFlag.STATUS_UNAVAILABLE, TaskFlag.AUTH_REQUIRED}), poll_failures=3
    )
    rec = reconcile(record, seen("working", status_message="validated 10 rows"), now=NOW)
    assert rec.outcome is Outcome.UPDATED
    assert rec.record.flags == frozenset()
    assert rec.record.poll_failures == 0
    assert rec.record.status_message == "validated 10 rows"


def test_auth_error_is_not_a_failure() -> None:
    rec = reconcile(make_record(), AuthRequired("401 invalid_token"), now=NOW)
    assert rec.record.state is S.WORKING
    assert TaskFlag.AUTH_REQUIRED in rec.record.flags
    assert rec.record.reason is not None
    assert "Sign-in needed" in rec.record.reason


def test_task_gone_means_expired_with_the_reason_kept() -> None:
    rec = reconcile(make_record(), TaskGone("-32602 Task has expired"), now=NOW)
    assert rec.record.state is S.EXPIRED
    assert rec.record.reason is not None
    assert "-32602 Task has expired" in rec.record.reason


@pytest.mark.parametrize(
    "observation",
    [
        seen("exploded"),
        seen("input_required"),  # no inputRequests: nothing to answer
        ServerTask(task_id="someone-else", status="completed"),
        MalformedReply("missing taskId"),
    ],
)
def test_malformed_reply_keeps_last_valid_state_and_is_counted(observation: Observation) -> None:
    record = make_record(status_message="validated 5 rows")
    rec = reconcile(record, observation, now=NOW)
    assert rec.outcome is Outcome.ANOMALY
    assert rec.record.state is S.WORKING
    assert rec.record.status_message == "validated 5 rows"
    assert rec.record.anomaly_count == 1


def test_input_required_hands_over_the_requests() -> None:
    requests = {"column": {"method": "elicitation/create", "params": {"message": "Which?"}}}
    rec = reconcile(make_record(), seen("input_required", input_requests=requests), now=NOW)
    assert rec.record.state is S.INPUT_REQUIRED
    assert rec.input_requests == requests


def test_server_interval_and_ttl_are_remembered() -> None:
    rec = reconcile(make_record(), seen("working", poll_interval_ms=750, ttl_ms=60_000), now=NOW)
    assert rec.record.poll_interval_ms == 750
    assert rec.record.ttl_ms == 60_000


def test_cancel_that_lost_the_race_says_so() -> None:
    record = make_record(cancel_requested=True)
    rec = reconcile(record, seen("completed", result={"content": []}), now=NOW)
    assert rec.record.state is S.COMPLETED
    assert rec.record.reason == "Completed: the cancel arrived too late."


def test_records_without_a_server_task_are_left_alone() -> None:
    for state in (S.AWAITING_APPROVAL, S.UNKNOWN_OUTCOME, S.CREATING):
        record = make_record(state)
        assert reconcile(record, seen("completed"), now=NOW).outcome is Outcome.UNCHANGED


def test_interrupted_create_that_was_never_sent_fails_honestly() -> None:
    rec = interrupted_create(make_record(S.CREATING), now=NOW)
    assert rec.record.state is S.FAILED
    assert rec.error is not None
    assert "nothing was run" in rec.error["message"]


def test_interrupted_create_after_sending_becomes_unknown_outcome_never_a_retry() -> None:
    rec = interrupted_create(make_record(S.CREATING, sent_at=T0), now=NOW)
    assert rec.record.state is S.UNKNOWN_OUTCOME
    assert rec.record.reason is not None
    assert interrupted_create(make_record(S.WORKING), now=NOW).outcome is Outcome.UNCHANGED


# -- properties ------------------------------------------------------------------------------

statuses = st.sampled_from(["working", "input_required", "completed", "failed", "cancelled"])


@st.composite
def observations(draw: st.DrawFn) -> Observation:
    kind = draw(st.sampled_from(["task", "gone", "unavailable", "auth", "malformed"]))
    if kind == "task":
        status = draw(st.one_of(statuses, st.text(max_size=12)))
        requests = (
            {"k": {"method": "elicitation/create", "params": {}}} if draw(st.booleans()) else {}
        )
        return ServerTask(
            task_id=draw(st.sampled_from(["task-1", "task-1", "task-1", "other"])),
            status=status,
            poll_interval_ms=draw(st.none() | st.integers(0, 10_000)),
            result={"content": []} if status == "completed" else None,
            input_requests=requests,
        )
    if kind == "gone":
        return TaskGone("-32602")
    if kind == "unavailable":
        return StatusUnavailable("timeout")
    if kind == "auth":
        return AuthRequired("401")
    return MalformedReply("garbage")


@settings(max_examples=300)
@given(
    start=st.sampled_from(sorted(TERMINAL_STATES)),
    sequence=st.lists(observations(), max_size=20),
)
def test_terminal_is_absorbing(start: LocalState, sequence: list[Observation]) -> None:
    record = make_record(start)
    for i, observation in enumerate(sequence):
        rec = reconcile(record, observation, now=NOW + timedelta(seconds=i))
        assert rec.outcome is Outcome.UNCHANGED
        assert rec.record == record


@settings(max_examples=300)
@given(
    sequence=st.lists(observations(), min_size=1, max_size=25),
    order=st.randoms(use_true_random=False),
)
def test_no_replay_order_moves_a_record_out_of_a_terminal_state(
    sequence: list[Observation], order: object
) -> None:
    shuffled = list(sequence)
    order.shuffle(shuffled)  # type: ignore[attr-defined]
    record = make_record(S.WORKING)
    terminal_seen: LocalState | None = None
    for i, observation in enumerate(shuffled):
        record = reconcile(record, observation, now=NOW + timedelta(seconds=i)).record
        if terminal_seen is not None:
            assert record.state is terminal_seen
        elif record.is_terminal:
            terminal_seen = record.state
    # And whatever happened, the record is always in a state the table can reach from working.
    assert record.state in {
        S.WORKING,
        S.INPUT_REQUIRED,
        S.COMPLETED,
        S.FAILED,
        S.CANCELLED,
        S.EXPIRED,
    }
