"""A poll that learned nothing is stored as a check, never as a new version of the record."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from mooring.core.tasks.checks import quiet_poll
from mooring.core.tasks.reconcile import ServerTask, StatusUnavailable, reconcile
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState, TaskFlag
from tests.core.tasks.factories import T0, make_record

NOW = T0 + timedelta(seconds=30)


def known() -> TaskRecord:
    """A working task as stored after an earlier poll."""
    return make_record(
        server_status="working",
        status_message="validated 1,000 rows",
        ttl_ms=60_000,
        poll_interval_ms=1_000,
        poll_count=4,
        last_checked_at=T0 + timedelta(seconds=20),
        updated_at=T0 + timedelta(seconds=10),
    )


def same(**changes: object) -> ServerTask:
    values: dict[str, object] = {
        "task_id": "task-1",
        "status": "working",
        "status_message": "validated 1,000 rows",
        "created_at": T0,
        "ttl_ms": 60_000,
        "poll_interval_ms": 1_000,
    }
    values.update(changes)
    return ServerTask(**values)  # type: ignore[arg-type]


def test_a_repeated_status_is_only_a_check_of_the_stored_version() -> None:
    before = known()
    rec = reconcile(before, same(), now=NOW)
    rec = dataclasses.replace(
        rec, record=dataclasses.replace(rec.record, next_poll_at=NOW + timedelta(seconds=1))
    )
    mark = quiet_poll(before, rec)
    assert mark is not None
    assert (mark.last_checked_at, mark.poll_count) == (NOW, 5)
    assert mark.base_updated_at == before.updated_at
    after = mark.applied_to(before)
    assert after.updated_at == before.updated_at  # not a new version
    assert after.next_poll_at == NOW + timedelta(seconds=1)
    assert dataclasses.replace(after, last_checked_at=None, poll_count=0, next_poll_at=None) == (
        dataclasses.replace(before, last_checked_at=None, poll_count=0, next_poll_at=None)
    )


@pytest.mark.parametrize(
    "observation",
    [
        same(status_message="validated 2,000 rows"),
        same(status="completed", result={"content": [], "isError": False}),
        same(status="input_required", input_requests={"q": {"method": "elicitation/create"}}),
        same(poll_interval_ms=5_000),
        same(ttl_ms=120_000),
        same(last_updated_at=T0 + timedelta(seconds=25)),
        StatusUnavailable("connection refused"),
    ],
    ids=["message", "completed", "input", "interval", "ttl", "server-time", "unavailable"],
)
def test_anything_new_is_stored_in_full(observation: object) -> None:
    before = known()
    rec = reconcile(before, observation, now=NOW)  # type: ignore[arg-type]
    assert quiet_poll(before, rec) is None


def test_a_task_still_asking_the_same_questions_is_quiet_but_a_new_question_is_not() -> None:
    question = {"method": "elicitation/create", "params": {"message": "which column?"}}
    before = dataclasses.replace(
        known(), state=LocalState.INPUT_REQUIRED, server_status="input_required"
    )
    rec = reconcile(before, same(status="input_required", input_requests={"q": question}), now=NOW)
    assert quiet_poll(before, rec, known_inputs={"q"}) is not None
    assert quiet_poll(before, rec) is None
    again = same(status="input_required", input_requests={"q": question, "q2": question})
    assert quiet_poll(before, reconcile(before, again, now=NOW), known_inputs={"q"}) is None


def test_recovering_from_a_failed_poll_is_stored_in_full() -> None:
    before = dataclasses.replace(
        known(), flags=frozenset({TaskFlag.STATUS_UNAVAILABLE}), poll_failures=2
    )
    assert quiet_poll(before, reconcile(before, same(), now=NOW)) is None


def test_a_terminal_record_is_never_marked() -> None:
    before = make_record(LocalState.COMPLETED)
    assert quiet_poll(before, reconcile(before, same(), now=NOW)) is None
