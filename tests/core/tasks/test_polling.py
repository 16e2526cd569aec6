"""The poll schedule: the server's interval is a floor; our backoff is bounded; TTL backstop."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mooring.core.tasks.polling import PollPolicy, covered_poll_at, next_poll
from tests.core.tasks.factories import T0

POLICY = PollPolicy(
    default_interval_ms=1_000, min_interval_ms=100, max_interval_ms=30_000, jitter_ratio=0.1
)


def plan(**kwargs: object) -> tuple[int, bool]:
    values: dict[str, object] = {
        "now": T0,
        "policy": POLICY,
        "poll_interval_ms": None,
        "poll_count": 0,
        "failures": 0,
    }
    values.update(kwargs)
    p = next_poll(**values)  # type: ignore[arg-type]
    return p.delay_ms, p.backstop


def test_server_interval_is_used_as_given() -> None:
    assert plan(poll_interval_ms=5_000) == (5_000, False)


def test_without_a_server_interval_we_back_off_as_polls_go_by() -> None:
    delays = [plan(poll_count=n)[0] for n in range(6)]
    assert delays == sorted(delays)
    assert delays[0] == 1_000
    assert delays[5] > delays[0]


def test_failures_back_off_even_when_the_server_gave_an_interval() -> None:
    assert plan(poll_interval_ms=1_000, failures=3)[0] > plan(poll_interval_ms=1_000)[0]


def test_our_backoff_is_bounded() -> None:
    assert plan(poll_count=500, failures=500)[0] == 30_000


def test_a_server_floor_above_our_maximum_still_wins() -> None:
    assert plan(poll_interval_ms=120_000, failures=5)[0] == 120_000


def test_zero_interval_does_not_spin() -> None:
    assert plan(poll_interval_ms=0)[0] >= POLICY.min_interval_ms


def test_ttl_backstop_polls_at_the_deadline() -> None:
    created = T0 - timedelta(milliseconds=9_500)
    delay, backstop = plan(poll_interval_ms=2_000, server_created_at=created, ttl_ms=10_000)
    assert backstop
    assert delay == 2_000  # the deadline is 500 ms away, but the floor still holds


def test_ttl_far_away_changes_nothing() -> None:
    assert plan(poll_interval_ms=2_000, server_created_at=T0, ttl_ms=3_600_000) == (2_000, False)


def test_jitter_must_be_a_fraction() -> None:
    with pytest.raises(ValueError, match="jitter"):
        plan(jitter=1.0)


@given(
    interval=st.none() | st.integers(0, 10_000_000),
    poll_count=st.integers(0, 10_000),
    failures=st.integers(0, 10_000),
    jitter=st.floats(0, 1, exclude_max=True),
    ttl_ms=st.none() | st.integers(0, 10_000_000),
    age_ms=st.integers(0, 20_000_000),
)
def test_poll_times_never_precede_the_server_interval(
    interval: int | None,
    poll_count: int,
    failures: int,
    jitter: float,
    ttl_ms: int | None,
    age_ms: int,
) -> None:
    p = next_poll(
        now=T0,
        policy=POLICY,
        poll_interval_ms=interval,
        poll_count=poll_count,
        failures=failures,
        server_created_at=T0 - timedelta(milliseconds=age_ms),
        ttl_ms=ttl_ms,
        jitter=jitter,
    )
    assert p.at - T0 >= timedelta(milliseconds=max(interval or 0, POLICY.min_interval_ms))
    assert p.at - T0 == timedelta(milliseconds=p.delay_ms)
    bound = max(POLICY.max_interval_ms, interval or 0) * (1 + POLICY.jitter_ratio)
    assert p.delay_ms <= bound


def test_after_the_ttl_has_passed_polling_backs_off_instead_of_spinning() -> None:
    long_ago = T0 - timedelta(hours=2)
    early = plan(poll_count=1, server_created_at=long_ago, ttl_ms=60_000)
    later = plan(poll_count=10, failures=3, server_created_at=long_ago, ttl_ms=60_000)
    assert early == (1_500, False)
    assert later[0] > early[0]
    assert later[1] is False


# -- a task its server reports on (an open listen stream) ------------------------------------------


def test_a_covered_task_is_polled_only_as_a_safety_net() -> None:
    policy = PollPolicy(covered_interval_ms=300_000, jitter_ratio=0.0)
    planned = T0 + timedelta(seconds=5)
    assert covered_poll_at(now=T0, policy=policy, planned=planned) == T0 + timedelta(minutes=5)


def test_a_covered_task_still_gets_its_last_look_at_the_ttl_deadline() -> None:
    policy = PollPolicy(covered_interval_ms=300_000)
    at = covered_poll_at(
        now=T0,
        policy=policy,
        planned=T0 + timedelta(seconds=5),
        server_created_at=T0 - timedelta(seconds=30),
        ttl_ms=90_000,
        jitter=0.5,
    )
    assert at == T0 + timedelta(seconds=60)


def test_coverage_never_brings_a_poll_forward() -> None:
    policy = PollPolicy(covered_interval_ms=1_000)
    planned = T0 + timedelta(minutes=10)  # a slow server's own interval
    assert covered_poll_at(now=T0, policy=policy, planned=planned, jitter=0.9) == planned


def test_the_safety_net_is_never_shorter_than_the_minimum_interval() -> None:
    with pytest.raises(ValueError, match="covered_interval_ms"):
        PollPolicy(min_interval_ms=100, covered_interval_ms=50)
