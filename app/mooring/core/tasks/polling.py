"""When to ask a server about a task next: the pure poll-schedule maths.

Rules, in order of precedence:

1. The server's ``pollIntervalMs`` is a floor: we never poll sooner than it asks.
2. Without one, start at the policy's default and back off geometrically as polls go by.
3. Failed polls back off geometrically too (a sick server is asked less often).
4. Our own backoff is bounded by ``max_interval_ms`` (a server-given floor above it still wins).
5. Jitter (only ever *added*, so rule 1 holds) spreads polls of many tasks apart.
6. The TTL backstop: once ``createdAt + ttlMs`` is near, poll then — the server may forget the
   task after it, and one last look tells us how it ended.
7. While the server reports the task's changes itself (an open ``subscriptions/listen`` stream
   that acknowledged it), a poll is only a safety net: ``covered_interval_ms`` apart (the TTL
   backstop still applies; see :func:`covered_poll_at`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True, slots=True)
class PollPolicy:
    """Tunable limits for the poll schedule."""

    default_interval_ms: int = 1_000
    """First interval when the server suggests none."""
    min_interval_ms: int = 100
    """Never poll more often than this, whatever the server says (a zero must not spin)."""
    max_interval_ms: int = 30_000
    """Upper bound of our own backoff."""
    backoff_factor: float = 1.5
    max_backoff_steps: int = 16
    jitter_ratio: float = 0.1
    """Up to this fraction of the interval is added at random."""
    covered_interval_ms: int = 300_000
    """Between two polls of a task whose changes the server reports on an open listen stream."""

    def __post_init__(self) -> None:
        if not 0 < self.min_interval_ms <= self.default_interval_ms <= self.max_interval_ms:
            raise ValueError("need 0 < min_interval_ms <= default_interval_ms <= max_interval_ms")
        if self.covered_interval_ms < self.min_interval_ms:
            raise ValueError("covered_interval_ms must be at least min_interval_ms")
        if self.backoff_factor < 1 or not 0 <= self.jitter_ratio <= 1:
            raise ValueError("backoff_factor must be >= 1 and jitter_ratio within [0, 1]")


@dataclass(frozen=True, slots=True)
class PollPlan:
    """The next poll: when, and whether it is the TTL backstop check."""

    at: datetime
    delay_ms: int
    backstop: bool = False


def next_poll(
    *,
    now: datetime,
    policy: PollPolicy,
    poll_interval_ms: int | None,
    poll_count: int,
    failures: int,
    server_created_at: datetime | None = None,
    ttl_ms: int | None = None,
    jitter: float = 0.0,
) -> PollPlan:
    """Plan the next ``tasks/get`` for one task.

    ``jitter`` is a number in ``[0, 1)`` supplied by the caller (``random.random()`` in the app,
    fixed in tests), which keeps this function pure.
    """
    if not 0.0 <= jitter < 1.0:
        raise ValueError("jitter must be in [0, 1)")
    floor = max(policy.min_interval_ms, poll_interval_ms or 0)
    if poll_interval_ms is not None and poll_interval_ms > 0:
        base = float(poll_interval_ms)
    else:
        steps = min(poll_count, policy.max_backoff_steps)
        base = policy.default_interval_ms * policy.backoff_factor**steps
    if failures > 0:
        base *= policy.backoff_factor ** min(failures, policy.max_backoff_steps)
    ceiling = max(policy.max_interval_ms, floor)
    delay = min(max(base, floor), ceiling)
    delay = min(delay * (1.0 + policy.jitter_ratio * jitter), ceiling * (1.0 + policy.jitter_ratio))
    delay_ms = max(int(delay), floor)
    at = now + timedelta(milliseconds=delay_ms)

    if ttl_ms is not None and server_created_at is not None:
        deadline = server_created_at + timedelta(milliseconds=ttl_ms)
        earliest = now + timedelta(milliseconds=floor)
        # Only a deadline still ahead pulls the next poll in; once it has passed (a server may
        # keep a task past its TTL, or its clock may lag ours) the normal backoff applies.
        if now < deadline <= at:
            backstop_at = max(deadline, earliest)
            backstop_ms = int((backstop_at - now) / timedelta(milliseconds=1))
            return PollPlan(at=backstop_at, delay_ms=max(backstop_ms, floor), backstop=True)
    return PollPlan(at=at, delay_ms=delay_ms)


def covered_poll_at(
    *,
    now: datetime,
    policy: PollPolicy,
    planned: datetime,
    server_created_at: datetime | None = None,
    ttl_ms: int | None = None,
    jitter: float = 0.0,
) -> datetime:
    """When to poll a task whose server reports its changes on an open listen stream.

    Only as a safety net: ``policy.covered_interval_ms`` from ``now`` (plus jitter), never
    sooner than the normal plan ``planned``, and no later than the task's TTL deadline when
    that comes first (one last look tells how it ended). The stream's own frames carry every
    change meanwhile; if it drops, the caller goes back to ``planned``.
    """
    if not 0.0 <= jitter < 1.0:
        raise ValueError("jitter must be in [0, 1)")
    stretch = policy.covered_interval_ms * (1.0 + policy.jitter_ratio * jitter)
    at = now + timedelta(milliseconds=stretch)
    if ttl_ms is not None and server_created_at is not None:
        deadline = server_created_at + timedelta(milliseconds=ttl_ms)
        if now < deadline < at:
            at = deadline
    return max(at, planned)
