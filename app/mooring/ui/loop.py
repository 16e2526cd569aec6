"""The window's event loop: qasync's, with the async-generator hooks asyncio's own loops install.

qasync's ``run_forever`` runs Qt's event loop and never installs ``sys.set_asyncgen_hooks``.
Without a finalizer hook, an async generator dropped before it finished (httpx's and
httpcore's response streams, whenever a request is cancelled) is closed by the garbage
collector *inside whatever task happens to run then*. Its clean-up enters an anyio cancel
scope there (httpcore shields its connection release) and is abandoned at its first await, so
that task's next scope exit fails: "Attempted to exit a cancel scope that isn't the current
tasks's current cancel scope". With 1,000 tasks on ten HTTP servers the window lost its
connections ~250 times in ten seconds, and half the tasks were stored as "status unavailable";
the same host on a plain asyncio loop lost none. Here, as asyncio does, such a generator is
closed in a task of its own (:func:`qt_event_loop`; ``tests/ui/test_event_loop.py``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication


@contextmanager
def async_generators_closed_on(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """While inside, an async generator the garbage collector finalizes is closed by a task of
    its own on ``loop`` (what ``BaseEventLoop.run_forever`` arranges), not in the task running
    when it was collected."""
    previous = sys.get_asyncgen_hooks()

    def finalizer(agen: AsyncGenerator[Any, Any]) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(loop.create_task, agen.aclose())

    sys.set_asyncgen_hooks(firstiter=previous.firstiter, finalizer=finalizer)
    try:
        yield
    finally:
        sys.set_asyncgen_hooks(*previous)


def qt_event_loop(app: QApplication) -> asyncio.AbstractEventLoop:
    """A qasync loop over ``app`` that closes dropped async generators as asyncio does."""
    import qasync

    class QtEventLoop(qasync.QEventLoop):  # type: ignore[misc]  # qasync ships no types
        def run_forever(self) -> Any:
            with async_generators_closed_on(self):
                return super().run_forever()

    loop: asyncio.AbstractEventLoop = QtEventLoop(app)
    return loop
