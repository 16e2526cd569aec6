"""The transition table, checked pair by pair against the documented lifecycle."""

from __future__ import annotations

import itertools

import pytest

from mooring.core.errors import IllegalTransition
from mooring.core.tasks.states import (
    TERMINAL_STATES,
    TRANSITIONS,
    LocalState,
    can_transition,
    check_transition,
    is_terminal,
    state_for_server_status,
)

S = LocalState

# Written out independently of TRANSITIONS (docs/tasks.md), so a change to the table must
# be a deliberate change to this list too.
LEGAL: set[tuple[LocalState, LocalState]] = {
    (S.AWAITING_APPROVAL, S.CREATING),
    (S.AWAITING_APPROVAL, S.DENIED),
    (S.CREATING, S.WORKING),
    (S.CREATING, S.INPUT_REQUIRED),
    (S.CREATING, S.COMPLETED),
    (S.CREATING, S.FAILED),
    (S.CREATING, S.CANCELLED),
    (S.CREATING, S.UNKNOWN_OUTCOME),
    (S.UNKNOWN_OUTCOME, S.ABANDONED),
    (S.WORKING, S.INPUT_REQUIRED),
    (S.WORKING, S.COMPLETED),
    (S.WORKING, S.FAILED),
    (S.WORKING, S.CANCELLED),
    (S.WORKING, S.EXPIRED),
    (S.INPUT_REQUIRED, S.WORKING),
    (S.INPUT_REQUIRED, S.COMPLETED),
    (S.INPUT_REQUIRED, S.FAILED),
    (S.INPUT_REQUIRED, S.CANCELLED),
    (S.INPUT_REQUIRED, S.EXPIRED),
}

ALL_PAIRS = list(itertools.product(LocalState, LocalState))


def test_table_covers_every_state() -> None:
    assert set(TRANSITIONS) == set(LocalState)


@pytest.mark.parametrize(("current", "target"), sorted(LEGAL))
def test_legal_transition_is_allowed(current: LocalState, target: LocalState) -> None:
    assert can_transition(current, target)
    check_transition(current, target)


@pytest.mark.parametrize(("current", "target"), [p for p in ALL_PAIRS if p not in LEGAL])
def test_illegal_transition_raises(current: LocalState, target: LocalState) -> None:
    assert not can_transition(current, target)
    with pytest.raises(IllegalTransition):
        check_transition(current, target)


@pytest.mark.parametrize("state", sorted(TERMINAL_STATES))
def test_terminal_states_have_no_way_out(state: LocalState) -> None:
    assert is_terminal(state)
    assert TRANSITIONS[state] == frozenset()


def test_terminal_states_are_exactly_the_documented_outcomes() -> None:
    assert {
        S.DENIED,
        S.COMPLETED,
        S.FAILED,
        S.CANCELLED,
        S.EXPIRED,
        S.ABANDONED,
    } == TERMINAL_STATES


def test_no_state_transitions_to_itself() -> None:
    assert all(state not in TRANSITIONS[state] for state in LocalState)


@pytest.mark.parametrize(
    ("status", "state"),
    [
        ("working", S.WORKING),
        ("input_required", S.INPUT_REQUIRED),
        ("completed", S.COMPLETED),
        ("failed", S.FAILED),
        ("cancelled", S.CANCELLED),
        ("expired", None),
        ("creating", None),
        ("WORKING", None),
        ("", None),
    ],
)
def test_only_the_five_wire_statuses_map_to_states(status: str, state: LocalState | None) -> None:
    assert state_for_server_status(status) is state
