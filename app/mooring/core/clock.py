"""Time as a collaborator, so rules can be tested without waiting."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """Something that tells the current time (always timezone-aware UTC)."""

    def now(self) -> datetime: ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


def parse_timestamp(value: str) -> datetime:
    """Parse an ISO 8601 timestamp as servers send it (``Z`` suffix allowed) into aware UTC.

    Raises ``ValueError`` for anything that is not a timestamp.
    """
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
