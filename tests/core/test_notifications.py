"""The notification policy: generic words, opt-in names only, when to tell, and merged bursts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mooring.core.notifications import (
    SUMMARY,
    Merger,
    NotifyKind,
    NotifyPrefs,
    Occurrence,
    OpenTarget,
    WhenToNotify,
    body_for,
    needs_sign_in,
    notice_for,
    prefs_from,
    safe_name,
    should_notify,
    task_change_kinds,
)
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.states import LocalState, TaskFlag
from tests.core.tasks.factories import T0, make_record

K = NotifyKind


def occ(kind: NotifyKind, n: int = 1, *, conversation_id: str | None = None) -> Occurrence:
    return Occurrence(kind, record_id=f"op-{n}", conversation_id=conversation_id)


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        (K.COMPLETED, "A background task completed"),
        (K.FAILED, "A background task failed"),
        (K.CANCELLED, "A background task was cancelled"),
        (K.EXPIRED, "A background task expired"),
        (K.INPUT_NEEDED, "A task needs your input"),
        (K.APPROVAL_NEEDED, "Approval needed"),
        (K.SIGN_IN_NEEDED, "Sign-in needed"),
        (K.UNKNOWN_OUTCOME, "A task may or may not have run"),
    ],
)
def test_each_kind_has_one_generic_sentence(kind: NotifyKind, text: str) -> None:
    notice = notice_for(1, [Occurrence(kind, record_id="op", server="crm", tool="export")])
    assert (notice.summary, notice.body) == (SUMMARY, text)
    assert SUMMARY == "Mooring"


def test_several_of_one_kind_are_counted() -> None:
    assert body_for([occ(K.COMPLETED, i) for i in range(3)]) == "3 background tasks completed"
    assert body_for([occ(K.INPUT_NEEDED, i) for i in range(2)]) == "2 tasks need your input"
    assert body_for([occ(K.APPROVAL_NEEDED, i) for i in range(4)]) == "4 approvals needed"


def test_mixed_ends_merge_into_one_finished_line_and_needs_come_first() -> None:
    body = body_for(
        [occ(K.COMPLETED, 1), occ(K.FAILED, 2), occ(K.COMPLETED, 3), occ(K.APPROVAL_NEEDED, 4)]
    )
    assert body == "Approval needed\n3 background tasks finished: 1 failed, 2 completed"


def test_names_only_with_the_opt_in_and_reduced_to_a_safe_alphabet() -> None:
    hostile = Occurrence(
        K.COMPLETED, record_id="op", server="crm", tool='<a href="x">evil</a>\u202e\x07tool'
    )
    assert body_for([hostile]) == "A background task completed"
    named = body_for([hostile], show_names=True)
    assert named.splitlines()[0] == "A background task completed"
    assert "<" not in named
    assert "\u202e" not in named
    assert "\x07" not in named
    assert named.splitlines()[1].startswith("crm: a href")


def test_names_list_at_most_three_pairs() -> None:
    items = [Occurrence(K.COMPLETED, record_id=str(i), server="s", tool=f"t{i}") for i in range(5)]
    assert body_for(items, show_names=True).splitlines()[1] == "s: t0, s: t1, s: t2 and 2 more"


def test_safe_name_truncates_long_names() -> None:
    assert safe_name("x" * 100) == "x" * 39 + "…"
    assert safe_name("  two   words ") == "two words"


@pytest.mark.parametrize(
    ("when", "active", "expected"),
    [
        (WhenToNotify.ALWAYS, True, True),
        (WhenToNotify.ALWAYS, False, True),
        (WhenToNotify.WHEN_INACTIVE, True, False),
        (WhenToNotify.WHEN_INACTIVE, False, True),
        (WhenToNotify.NEVER, False, False),
    ],
)
def test_when_setting(when: WhenToNotify, active: bool, expected: bool) -> None:
    prefs = NotifyPrefs(when=when)
    assert should_notify(occ(K.COMPLETED), prefs, window_active=active) is expected


def test_a_muted_conversation_stays_quiet_others_do_not() -> None:
    prefs = NotifyPrefs(when=WhenToNotify.ALWAYS, muted=frozenset({"c-1"}))
    assert not should_notify(occ(K.FAILED, conversation_id="c-1"), prefs, window_active=False)
    assert should_notify(occ(K.FAILED, conversation_id="c-2"), prefs, window_active=False)
    assert should_notify(occ(K.FAILED), prefs, window_active=False)


def test_the_default_is_only_when_the_window_is_not_active() -> None:
    assert NotifyPrefs().when is WhenToNotify.WHEN_INACTIVE
    assert prefs_from(when="sometimes", show_names=False).when is WhenToNotify.WHEN_INACTIVE
    assert prefs_from(when="never", show_names=True, muted=["c"]) == NotifyPrefs(
        WhenToNotify.NEVER, True, frozenset({"c"})
    )


@pytest.mark.parametrize(
    ("previous", "state", "kinds"),
    [
        (LocalState.WORKING, LocalState.COMPLETED, [K.COMPLETED]),
        (LocalState.INPUT_REQUIRED, LocalState.FAILED, [K.FAILED]),
        (LocalState.WORKING, LocalState.CANCELLED, [K.CANCELLED]),
        (LocalState.WORKING, LocalState.EXPIRED, [K.EXPIRED]),
        (LocalState.WORKING, LocalState.INPUT_REQUIRED, [K.INPUT_NEEDED]),
        (LocalState.CREATING, LocalState.UNKNOWN_OUTCOME, [K.UNKNOWN_OUTCOME]),
        # Immediate results and the user's own refusals are not background news.
        (LocalState.CREATING, LocalState.COMPLETED, []),
        (LocalState.AWAITING_APPROVAL, LocalState.DENIED, []),
        (LocalState.WORKING, LocalState.WORKING, []),
    ],
)
def test_which_task_changes_notify(
    previous: LocalState, state: LocalState, kinds: list[NotifyKind]
) -> None:
    assert task_change_kinds(make_record(state), previous) == kinds


def test_a_second_question_while_waiting_notifies_again() -> None:
    question = TaskInput(
        record_id="op-1", key="q2", method="elicitation/create", params={}, created_at=T0
    )
    waiting = make_record(LocalState.INPUT_REQUIRED)
    assert task_change_kinds(waiting, LocalState.INPUT_REQUIRED, [question]) == [K.INPUT_NEEDED]
    assert task_change_kinds(waiting, LocalState.INPUT_REQUIRED) == []


def test_sign_in_is_needed_only_for_running_tasks() -> None:
    assert needs_sign_in(make_record(flags=frozenset({TaskFlag.AUTH_REQUIRED})))
    assert not needs_sign_in(make_record())


def test_a_click_opens_the_one_task_or_its_conversation() -> None:
    one = notice_for(1, [occ(K.COMPLETED, 1, conversation_id="c")])
    assert one.target == OpenTarget("c", "op-1")
    same = notice_for(
        1, [occ(K.COMPLETED, 1, conversation_id="c"), occ(K.FAILED, 2, conversation_id="c")]
    )
    assert same.target == OpenTarget("c", None)
    mixed = notice_for(1, [occ(K.COMPLETED, 1, conversation_id="c"), occ(K.FAILED, 2)])
    assert mixed.target is None


# -- merging ---------------------------------------------------------------------------------

S = timedelta(seconds=1)


def test_the_first_is_shown_at_once_and_a_burst_becomes_one_notice_replacing_it() -> None:
    merger = Merger(window=4 * S)
    first = merger.offer(occ(K.COMPLETED, 1), T0)
    assert first is not None
    assert first.body == "A background task completed"
    assert merger.offer(occ(K.COMPLETED, 2), T0 + S) is None
    assert merger.offer(occ(K.COMPLETED, 3), T0 + 2 * S) is None
    assert merger.due_at() == T0 + 4 * S
    assert merger.flush(T0 + 3 * S) is None  # not yet
    merged = merger.flush(T0 + 4 * S)
    assert merged is not None
    assert (merged.key, merged.body, merged.count) == (first.key, "3 background tasks completed", 3)
    assert merger.due_at() is None


def test_after_a_quiet_window_the_next_one_is_a_new_notice() -> None:
    merger = Merger(window=4 * S)
    first = merger.offer(occ(K.COMPLETED, 1), T0)
    later = merger.offer(occ(K.FAILED, 2), T0 + 5 * S)
    assert first is not None
    assert later is not None
    assert later.key != first.key
    assert later.body == "A background task failed"


def test_a_steady_stream_keeps_growing_one_notice() -> None:
    merger = Merger(window=4 * S)
    first = merger.offer(occ(K.COMPLETED, 1), T0)
    assert merger.offer(occ(K.FAILED, 2), T0 + S) is None
    second = merger.flush(T0 + 4 * S)
    assert merger.offer(occ(K.INPUT_NEEDED, 3), T0 + 5 * S) is None
    third = merger.flush(T0 + 8 * S)
    assert first is not None
    assert second is not None
    assert third is not None
    assert first.key == second.key == third.key
    assert (
        third.body == "A task needs your input\n2 background tasks finished: 1 failed, 1 completed"
    )


def test_a_task_told_twice_in_a_burst_counts_once_with_its_latest_news() -> None:
    merger = Merger(window=4 * S)
    merger.offer(Occurrence(K.INPUT_NEEDED, record_id="op-1"), T0)
    assert merger.offer(Occurrence(K.COMPLETED, record_id="op-1"), T0 + S) is None
    merged = merger.flush(T0 + 4 * S)
    assert merged is not None
    assert (merged.body, merged.count) == ("A background task completed", 1)
