"""The monitor's background work: notification handling and stream connects, cancelled as it
stops."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("mooring.tasks")


class Background:
    """Futures started and not awaited by anyone: each failure is logged."""

    def __init__(self) -> None:
        self._pending: set[asyncio.Future[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in the background."""
        task = asyncio.ensure_future(work)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        task.add_done_callback(_log_failure)

    def cancel(self) -> None:
        """Cancel everything still running."""
        for pending in list(self._pending):
            pending.cancel()


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("notification refresh failed", exc_info=task.exception())
