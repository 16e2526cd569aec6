"""The poll schedule on its own: no server, no database, no event loop — a clock the test sets
and a jitter it chooses."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mooring.core.tasks.polling import PollPolicy
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.services.polling.scheduler import POLL_TICK, PollScheduler

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SECOND = timedelta(seconds=1)


class ManualClock:
    """A clock the test sets."""

    def __init__(self, now: datetime) -> None:
        self.current = now

    def now(self) -> datetime:
        return self.current


class Schedule:
    """A scheduler on a manual clock, with the jitters it draws (then 0.0) and the wake-ups it
    asks for."""

    def __init__(self, *jitters: float, policy: PollPolicy | None = None) -> None:
        self.clock = ManualClock(T0)
        self.wakes = 0
        self._jitters: Iterator[float] = itertools.chain(jitters, itertools.repeat(0.0))
        self.scheduler = PollScheduler(
            clock=self.clock,
            policy=policy or PollPolicy(),
            jitter=lambda: next(self._jitters),
            wake=self._woken,
        )

    def _woken(self) -> None:
        self.wakes += 1

    def track(self, record: TaskRecord, *, now: bool = False, on_stream: bool = False) -> None:
        """As the monitor tracks a record: its server and task id noted, then planned."""
        self.scheduler.locate(record.id, record.server_id)
        self.scheduler.remember(record)
        self.scheduler.track(record, now=now, on_stream=on_stream)

    def at(self, when: datetime) -> list[str]:
        """Move the clock to ``when`` and take what is due."""
        self.clock.current = when
        return self.scheduler.take_due()


def working(
    record_id: str, *, checked: datetime | None, interval_ms: int | None = 5_000, **changes: Any
) -> TaskRecord:
    fields: dict[str, Any] = {"task_id": f"task-{record_id}", **changes}
    return TaskRecord(
        id=record_id,
        server_id="server",
        tool="import_suppliers",
        argument_digest="digest",
        state=LocalState.WORKING,
        created_at=T0 - timedelta(hours=1),
        updated_at=checked or T0 - timedelta(hours=1),
        server_status="working",
        last_checked_at=checked,
        poll_interval_ms=interval_ms,
        **fields,
    )


def test_a_task_checked_recently_is_due_its_interval_after_that_check() -> None:
    schedule = Schedule()

    schedule.track(working("recent", checked=T0 - 2 * SECOND))
    schedule.track(working("at-once", checked=T0 - SECOND), now=True)

    assert schedule.scheduler.due_at("recent") == T0 + 3 * SECOND
    assert schedule.scheduler.due_at("at-once") == T0 + 4 * SECOND  # "now" waits too


def test_a_task_never_checked_is_placed_at_random_within_its_first_interval() -> None:
    schedule = Schedule(0.0, 0.5, 0.9)
    for name in ("a", "b", "c"):
        record = working(name, checked=None, interval_ms=None, task_id=None)
        schedule.track(record)

    # No interval from the server: the policy's default (1 s), spread by the jitter.
    assert [schedule.scheduler.due_at(n) for n in "abc"] == [
        T0,
        T0 + timedelta(milliseconds=500),
        T0 + timedelta(milliseconds=900),
    ]


def test_a_task_on_a_listen_stream_is_first_polled_in_the_second_half_of_its_interval() -> None:
    schedule = Schedule(0.0)

    schedule.track(working("streamed", checked=None, task_id="t1"), on_stream=True)

    # Never checked, but its task was created an hour ago: due now, yet the stream's replay
    # reads it first, so its first poll waits for at least half its interval.
    assert schedule.scheduler.due_at("streamed") == T0 + timedelta(milliseconds=2_500)


def test_a_plan_already_made_is_kept_when_a_later_one_is_asked_for() -> None:
    schedule = Schedule()
    schedule.track(working("r", checked=T0 - 5 * SECOND, next_poll_at=T0 + 2 * SECOND))

    schedule.scheduler.plan("r", T0 + 4 * SECOND)
    assert schedule.scheduler.due_at("r") == T0 + 2 * SECOND

    schedule.scheduler.plan("r", T0 + 4 * SECOND, replace=True)
    assert schedule.scheduler.due_at("r") == T0 + 4 * SECOND


def test_poll_soon_waits_for_the_interval_since_the_server_last_spoke() -> None:
    schedule = Schedule()
    record = working("r", checked=T0 - 5 * SECOND)
    schedule.track(record)
    schedule.scheduler.unschedule("r")

    schedule.scheduler.heard(record, T0)
    schedule.scheduler.soon("r")
    assert schedule.scheduler.due_at("r") == T0 + 5 * SECOND

    schedule.scheduler.soon("r", disciplined=False)  # a bare hint: looked at at once
    assert schedule.scheduler.due_at("r") == T0


def test_plans_are_raised_to_the_next_tick_or_a_tenth_of_a_short_interval() -> None:
    schedule = Schedule()
    schedule.track(working("long", checked=T0 - 5 * SECOND))
    schedule.track(working("short", checked=T0 - SECOND, interval_ms=100))

    schedule.scheduler.plan("long", T0 + timedelta(milliseconds=1_001), replace=True)
    schedule.scheduler.plan("short", T0 + timedelta(milliseconds=101), replace=True)

    assert schedule.scheduler.due_at("long") == T0 + timedelta(milliseconds=1_250)
    assert schedule.scheduler.due_at("short") == T0 + timedelta(milliseconds=110)


def test_only_tasks_with_intervals_of_ten_ticks_gather_their_quiet_checks() -> None:
    schedule = Schedule()
    schedule.track(working("slow", checked=T0, interval_ms=int(POLL_TICK * 10 / SECOND * 1000)))
    schedule.track(working("fast", checked=T0, interval_ms=2_000))

    assert schedule.scheduler.gathers("slow")
    assert not schedule.scheduler.gathers("fast")
    assert not schedule.scheduler.gathers("unknown")


def test_due_records_are_taken_in_order_and_a_superseded_plan_is_skipped() -> None:
    schedule = Schedule()
    for name, seconds in (("first", 1), ("second", 2), ("moved", 1)):
        schedule.track(working(name, checked=T0 - 5 * SECOND, next_poll_at=T0 + seconds * SECOND))
    schedule.scheduler.plan("moved", T0 + 3 * SECOND, replace=True)

    assert schedule.at(T0) == []
    assert schedule.at(T0 + 2 * SECOND) == ["first", "second"]
    assert schedule.scheduler.due_at("first") is None
    assert schedule.scheduler.next_due() == T0 + 3 * SECOND
    assert schedule.at(T0 + 3 * SECOND) == ["moved"]
    assert schedule.scheduler.scheduled == 0


def test_a_plan_made_while_a_record_is_in_flight_waits_for_its_turn_to_end() -> None:
    schedule = Schedule()
    schedule.track(working("r", checked=T0 - 5 * SECOND, next_poll_at=T0))
    assert schedule.at(T0) == ["r"]

    schedule.scheduler.plan("r", T0, disciplined=False)  # a notification, while polled
    assert schedule.at(T0) == []  # not taken twice: the poll in flight is the news
    schedule.scheduler.plan("r", T0 + SECOND, disciplined=False)

    assert schedule.scheduler.finish("r")  # planned meanwhile: lined up again
    assert schedule.at(T0 + SECOND) == ["r"]
    assert not schedule.scheduler.finish("r")  # nothing planned: the caller forgets it


def test_a_record_is_forgotten_only_when_neither_scheduled_nor_in_flight() -> None:
    schedule = Schedule()
    record = working("r", checked=T0 - 5 * SECOND, next_poll_at=T0)
    schedule.track(record)

    assert not schedule.scheduler.forget("r")  # scheduled
    assert schedule.at(T0) == ["r"]
    assert not schedule.scheduler.forget("r")  # in flight
    assert not schedule.scheduler.finish("r")
    assert schedule.scheduler.forget("r")

    assert schedule.scheduler.remembered() == set()
    assert schedule.scheduler.record_of("server", "task-r") is None
    assert schedule.scheduler.server_of("r") is None


def test_a_covered_task_is_polled_as_a_safety_net_but_before_its_ttl_ends() -> None:
    schedule = Schedule(0.0, 0.0, 0.5)
    schedule.track(working("plain", checked=T0 - 5 * SECOND, next_poll_at=T0 + 5 * SECOND))
    schedule.track(
        working(
            "ending",
            checked=T0 - 5 * SECOND,
            next_poll_at=T0 + 5 * SECOND,
            server_created_at=T0 - timedelta(minutes=1),
            ttl_ms=70_000,
        )
    )

    schedule.scheduler.cover("server", frozenset({"task-plain", "task-ending", "task-x"}), True)
    assert schedule.scheduler.due_at("plain") == T0 + timedelta(minutes=5)
    assert schedule.scheduler.due_at("ending") == T0 + 10 * SECOND  # the TTL backstop

    # The stream goes: polled again within its interval, at random in it (here halfway).
    schedule.scheduler.cover("server", frozenset({"task-plain"}), False)
    assert schedule.scheduler.due_at("plain") == T0 + timedelta(milliseconds=2_500)


def test_a_task_no_longer_covered_keeps_a_plan_sooner_than_its_random_place() -> None:
    schedule = Schedule(0.9)
    schedule.track(working("near", checked=T0 - 5 * SECOND, next_poll_at=T0 + SECOND))

    schedule.scheduler.cover("server", frozenset({"task-near"}), False)

    assert schedule.scheduler.due_at("near") == T0 + SECOND  # not 4.5 s


def test_the_next_poll_honours_the_server_interval_and_backs_off_without_one() -> None:
    schedule = Schedule(0.0, 0.0)
    given = working("given", checked=T0, interval_ms=7_000, poll_count=5)
    none = working("none", checked=T0, interval_ms=None, poll_count=2)

    assert schedule.scheduler.next_poll_at(given) == T0 + 7 * SECOND
    assert schedule.scheduler.next_poll_at(none) == T0 + timedelta(milliseconds=2_250)


def test_the_loop_is_woken_only_for_a_plan_sooner_than_it_sleeps() -> None:
    schedule = Schedule()
    schedule.scheduler.asleep_until = T0 + 2 * SECOND
    record = working("r", checked=T0 - 5 * SECOND)
    schedule.scheduler.remember(record)

    schedule.scheduler.plan("r", T0 + 3 * SECOND)
    assert schedule.wakes == 0
    schedule.scheduler.plan("r", T0 + SECOND)
    assert schedule.wakes == 1

    schedule.scheduler.asleep_until = None  # awake, or waiting for a plan: always woken
    schedule.scheduler.plan("other", T0 + timedelta(hours=1))
    assert schedule.wakes == 2


@pytest.mark.parametrize("module", ["asyncio", "sqlite3", "mooring.storage", "mooring.mcp"])
def test_the_scheduler_needs_no_event_loop_database_or_server(module: str) -> None:
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, mooring.services.polling.scheduler; print({module!r} in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "False"
