"""The task record value object."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mooring.core.errors import IllegalTransition
from mooring.core.tasks.states import LocalState, TaskFlag
from tests.core.tasks.factories import T0, make_record

S = LocalState


def test_transition_makes_a_new_record_and_keeps_the_old() -> None:
    record = make_record(S.WORKING)
    later = T0 + timedelta(seconds=1)
    done = record.transition(S.COMPLETED, at=later, status_message="done")
    assert (record.state, done.state) == (S.WORKING, S.COMPLETED)
    assert done.updated_at == later
    assert done.status_message == "done"


def test_an_end_drops_the_live_status_message_unless_one_comes_with_it() -> None:
    record = make_record(S.UNKNOWN_OUTCOME, status_message="Generating report...")
    abandoned = record.transition(S.ABANDONED, at=T0, reason="Abandoned by the user")
    assert abandoned.status_message is None
    working = make_record(S.WORKING, status_message="row 5 of 10")
    assert working.transition(S.INPUT_REQUIRED, at=T0).status_message == "row 5 of 10"
    assert working.transition(S.EXPIRED, at=T0).status_message is None
    assert working.transition(S.COMPLETED, at=T0, status_message="saved 10").status_message == (
        "saved 10"
    )


def test_illegal_transition_raises() -> None:
    with pytest.raises(IllegalTransition):
        make_record(S.COMPLETED).transition(S.WORKING, at=T0)


def test_terminal_records_refuse_any_change() -> None:
    with pytest.raises(ValueError, match="terminal"):
        make_record(S.CANCELLED).evolve(at=T0, status_message="late news")


def test_evolve_cannot_smuggle_a_state_change() -> None:
    with pytest.raises(TypeError):
        make_record().evolve(at=T0, state=S.COMPLETED)


def test_monitoring_needs_a_task_id_an_active_state_and_no_stop_flag() -> None:
    assert make_record(S.WORKING).is_monitored
    assert make_record(S.INPUT_REQUIRED).is_monitored
    assert not make_record(S.CREATING).is_monitored
    assert not make_record(S.COMPLETED).is_monitored
    stopped = make_record(S.WORKING, flags=frozenset({TaskFlag.MONITORING_STOPPED}))
    assert not stopped.is_monitored


def test_ttl_deadline_is_created_at_plus_ttl() -> None:
    assert make_record(ttl_ms=60_000).ttl_deadline == T0 + timedelta(minutes=1)
    assert make_record(ttl_ms=None).ttl_deadline is None
