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

It also keeps asyncio's ready queue. qasync turns every ``call_soon`` into a Qt timer of its
own (``startTimer``, a ``timerEvent``, ``killTimer``, and a coroutine-function check): the
window's launch reconciliation of 1,000 tasks made ~54,000 of them, ~2.7 s of the GUI thread's
~10 s. Here the callbacks made ready meanwhile wait in one queue, and one Qt timer runs them in
order (those ready when it starts, as asyncio runs an iteration), for at most
:data:`READY_SLICE_S` before Qt gets its turn again (input, painting, other timers).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterator
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


READY_SLICE_S = 0.004
"""The longest run of ready callbacks before Qt's own events are processed again."""


def qt_event_loop(app: QApplication) -> asyncio.AbstractEventLoop:
    """A qasync loop over ``app`` that closes dropped async generators as asyncio does and
    runs ready callbacks from one queue (see the module's docstring)."""
    import qasync

    class QtEventLoop(qasync.QEventLoop):  # type: ignore[misc]  # qasync ships no types
        def __init__(self, app: QApplication) -> None:
            super().__init__(app)
            self._ready_queue: deque[asyncio.Handle] = deque()
            self._ready_run_due = False

        def run_forever(self) -> Any:
            with async_generators_closed_on(self):
                return super().run_forever()

        def call_soon(
            self, callback: Callable[..., object], *args: Any, context: Any = None
        ) -> asyncio.Handle:
            # On the GUI thread only, as qasync's: call_soon_threadsafe comes here through a
            # queued Qt signal.
            handle = asyncio.Handle(callback, args, self, context=context)
            self._ready_queue.append(handle)
            if not self._ready_run_due:
                self._ready_run_due = True
                self._timer.add_callback(asyncio.Handle(self._run_ready, (), self), 0)
            return handle

        def _run_ready(self) -> None:
            queue = self._ready_queue
            ends = time.monotonic() + READY_SLICE_S
            try:
                for _ in range(len(queue)):  # what is ready now; what these make ready waits
                    handle = queue.popleft()
                    if not handle.cancelled():
                        handle._run()
                    if time.monotonic() >= ends:
                        break
            finally:
                if queue:  # the rest after Qt's turn (also if a callback raised SystemExit)
                    self._timer.add_callback(asyncio.Handle(self._run_ready, (), self), 0)
                else:
                    self._ready_run_due = False

    loop: asyncio.AbstractEventLoop = QtEventLoop(app)
    return loop
