"""The plain words for a task's state: one function every face uses."""

from __future__ import annotations

import pytest

from mooring.core.tasks.states import LocalState, TaskFlag
from mooring.core.tasks.words import LABELS, Tone, state_words
from tests.core.tasks.factories import make_record


@pytest.mark.parametrize(
    ("state", "words"),
    [
        (LocalState.WORKING, "working"),
        (LocalState.INPUT_REQUIRED, "needs your input"),
        (LocalState.COMPLETED, "completed"),
        (LocalState.FAILED, "failed"),
        (LocalState.CANCELLED, "cancelled"),
        (LocalState.EXPIRED, "expired"),
        (LocalState.UNKNOWN_OUTCOME, "outcome unknown"),
    ],
)
def test_each_state_reads_as_the_window_and_cli_promise(state: LocalState, words: str) -> None:
    assert state_words(make_record(state)).label == words


def test_every_state_has_words() -> None:
    assert set(LABELS) == set(LocalState)


def test_sign_in_needed_is_not_status_unavailable() -> None:
    record = make_record(
        LocalState.WORKING, flags=frozenset({TaskFlag.AUTH_REQUIRED, TaskFlag.STATUS_UNAVAILABLE})
    )
    words = state_words(record)
    assert words.label == "sign-in needed — last known: working"
    assert words.tone is Tone.ATTENTION


def test_a_failed_poll_keeps_the_last_known_state_in_words() -> None:
    record = make_record(LocalState.INPUT_REQUIRED, flags=frozenset({TaskFlag.STATUS_UNAVAILABLE}))
    assert state_words(record).label == (
        "status temporarily unavailable — last known: needs your input"
    )


def test_cancel_requested_is_never_drawn_as_cancelled() -> None:
    words = state_words(make_record(LocalState.WORKING, cancel_requested=True))
    assert words.label == "cancel requested"
    assert "cancelled" not in words.label


def test_a_cancel_that_lost_the_race_says_so() -> None:
    record = make_record(LocalState.COMPLETED, cancel_requested=True)
    assert state_words(record).label == "completed — the cancel arrived too late"


def test_a_tool_error_is_not_a_plain_completed() -> None:
    result = {"isError": True, "content": [{"type": "text", "text": "no such file"}]}
    words = state_words(make_record(LocalState.COMPLETED), result)
    assert words.label == "completed — the tool reported an error"
    assert words.detail == "no such file"
    assert words.tone is Tone.PROBLEM
    assert str(words) == "completed — the tool reported an error — no such file"


def test_the_servers_status_message_is_the_detail_while_it_runs() -> None:
    words = state_words(make_record(LocalState.WORKING, status_message="row 5 of 10"))
    assert str(words) == "working — row 5 of 10"
