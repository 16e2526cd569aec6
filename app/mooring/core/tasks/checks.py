"""A poll that changed nothing: only when the task was checked is worth storing.

Most status reads of a long task repeat what is already known. Rewriting the whole record for
each (and calling it a new version) made the one database thread the bottleneck at a thousand
tasks; a :class:`PollMark` carries just the check — when, how many so far, when next — and is
stored with a few columns, many records at a time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from mooring.core.tasks.reconcile import Outcome, Reconciliation
from mooring.core.tasks.record import TaskRecord

CHECK_FIELDS = frozenset({"updated_at", "last_checked_at", "poll_count", "next_poll_at"})
"""What a poll changes even when the server says nothing new (``updated_at`` included: a check
is not a new version of the record, so it keeps the stored one)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PollMark:
    """One check of a record that found nothing new."""

    record_id: str
    base_updated_at: datetime
    """The stored version the check was made against; a record moved on since is not marked."""
    last_checked_at: datetime
    poll_count: int
    next_poll_at: datetime | None

    def applied_to(self, record: TaskRecord) -> TaskRecord:
        """``record`` (the stored version) as it reads once this mark is stored."""
        return dataclasses.replace(
            record,
            last_checked_at=self.last_checked_at,
            poll_count=self.poll_count,
            next_poll_at=self.next_poll_at,
        )


def quiet_poll(
    before: TaskRecord, rec: Reconciliation, *, known_inputs: Collection[str] = ()
) -> PollMark | None:
    """The mark to store instead of ``rec`` when the poll of ``before`` (the stored record)
    changed nothing but the check itself; None when anything else must be persisted (a new
    state, message, flag, input request, result, error…). ``known_inputs`` are the keys of the
    input requests already stored: a task still asking the same questions is quiet. Pure."""
    after = rec.record
    if (
        rec.outcome is not Outcome.UPDATED
        or rec.state_changed
        or not set(rec.input_requests) <= set(known_inputs)
        or rec.result is not None
        or rec.error is not None
        or after.id != before.id
        or rec.base_updated_at != before.updated_at
    ):
        return None
    for field in dataclasses.fields(TaskRecord):
        if field.name not in CHECK_FIELDS and getattr(before, field.name) != getattr(
            after, field.name
        ):
            return None
    if after.last_checked_at is None:
        return None
    return PollMark(
        record_id=after.id,
        base_updated_at=before.updated_at,
        last_checked_at=after.last_checked_at,
        poll_count=after.poll_count,
        next_poll_at=after.next_poll_at,
    )
