"""A poll that fails before its server could be asked: retried later and later, and an issue
once it keeps failing (the task itself has not failed)."""

from __future__ import annotations

import contextlib
import logging
from datetime import timedelta

from mooring.core.clock import Clock
from mooring.core.errors import KnownError
from mooring.core.ids import short_id
from mooring.core.issues import IssueKind
from mooring.services.polling.scheduler import PollScheduler
from mooring.services.telling import IssueDesk

log = logging.getLogger("mooring.tasks")

RETRY_AFTER_BUG = timedelta(seconds=30)
RETRY_AFTER_PROBLEM = timedelta(seconds=5)
LONGEST_RETRY = timedelta(hours=1)
FAILURES_BEFORE_ISSUE = 3


class PollFailures:
    """Counts each record's failed polls in a row; raises and resolves its issue."""

    def __init__(self, *, schedule: PollScheduler, clock: Clock, issues: IssueDesk | None) -> None:
        self._schedule = schedule
        self._clock = clock
        self._issues = issues
        self._failures: dict[str, int] = {}

    async def failed(self, record_id: str, exc: Exception) -> None:
        """A poll (or the read before it) raised: a known problem is retried soon, a bug later."""
        if isinstance(exc, KnownError):
            log.warning("poll of %s failed: %s; will retry", record_id, exc.message)
            await self._retry(record_id, exc.message, RETRY_AFTER_PROBLEM)
        else:
            log.error("poll of %s failed", record_id, exc_info=exc)
            await self._retry(record_id, "an internal error (see the log)", RETRY_AFTER_BUG)

    async def succeeded(self, record_id: str) -> None:
        """A poll went through: the count starts again, and an issue raised is resolved."""
        if self._failures.pop(record_id, 0) >= FAILURES_BEFORE_ISSUE and self._issues:
            await self._issues.resolve(IssueKind.TASK_UNREADABLE, record_id)

    async def _retry(self, record_id: str, why: str, base: timedelta) -> None:
        """Retry later and later, and tell the user once it keeps failing."""
        count = self._failures[record_id] = self._failures.get(record_id, 0) + 1
        delay = min(base * 2 ** (count - 1), LONGEST_RETRY)
        self._schedule.plan(record_id, self._clock.now() + delay)
        if count == FAILURES_BEFORE_ISSUE and self._issues is not None:
            with contextlib.suppress(Exception):  # the database may be what fails
                await self._issues.raise_issue(
                    IssueKind.TASK_UNREADABLE,
                    record_id,
                    f"Mooring cannot check task {short_id(record_id)}",
                    f"Checking it failed {count} times in a row ({why}). Its last known state "
                    "is kept and Mooring keeps trying, less often.",
                )
