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

And it keeps asyncio's timer heap. qasync gives every ``call_later`` and ``call_at`` a Qt timer
of its own, and a cancelled one stays registered with Qt until its deadline, holding its
handle and the handle's context (the OpenTelemetry span, the anyio cancel scopes of the request
it guarded). Every request sets such a timeout and nearly all are cancelled: after a launch
reconciliation of 1,000 tasks the window held ~7,500 dead Qt timers and their contexts, the
largest share of what each full garbage-collector pass walks. Here the deadlines wait in one
heap, as asyncio's own loops keep them (cancelled ones are dropped once they are half the
heap), and one precise Qt timer wakes the loop for the earliest.
"""

from __future__ import annotations

import asyncio
import heapq
import math
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

LONGEST_TIMER_WAIT_S = 24 * 3600.0
"""The longest the one deadline timer sleeps at once (asyncio caps its selector's wait too)."""

KEEP_CANCELLED_TIMERS = 100
"""Cancelled deadlines are dropped from the heap once there are more than this many in it and
they are at least half of it (asyncio's own rule)."""


def qt_event_loop(app: QApplication) -> asyncio.AbstractEventLoop:
    """A qasync loop over ``app`` that closes dropped async generators as asyncio does and
    runs ready callbacks from one queue (see the module's docstring)."""
    import qasync
    from PySide6.QtCore import Qt, QTimer

    class QtEventLoop(qasync.QEventLoop):  # type: ignore[misc]  # qasync ships no types
        # BaseEventLoop's own timer heap and count of cancelled entries (``_scheduled``,
        # ``_timer_cancelled_count``; ``TimerHandle.cancel`` counts through
        # ``_timer_handle_cancelled``, ``close`` clears the heap) are used as asyncio uses them.
        _scheduled: list[asyncio.TimerHandle]
        _timer_cancelled_count: int

        def __init__(self, app: QApplication) -> None:
            super().__init__(app)
            self._ready_queue: deque[asyncio.Handle] = deque()
            self._ready_run_due = False
            self._deadline = QTimer()
            self._deadline.setSingleShot(True)
            self._deadline.setTimerType(Qt.TimerType.PreciseTimer)
            self._deadline.timeout.connect(self._run_due)
            self._armed_for: float | None = None

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
            self._run_ready_soon()
            return handle

        def _run_ready_soon(self) -> None:
            if not self._ready_run_due:
                self._ready_run_due = True
                self._timer.add_callback(asyncio.Handle(self._run_ready, (), self), 0)

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

        def call_later(
            self, delay: float, callback: Callable[..., object], *args: Any, context: Any = None
        ) -> asyncio.TimerHandle:
            return self.call_at(self.time() + delay, callback, *args, context=context)

        def call_at(
            self, when: float, callback: Callable[..., object], *args: Any, context: Any = None
        ) -> asyncio.TimerHandle:
            self._check_closed()
            if self._debug:  # as asyncio's own loops check, in debug mode only
                self._check_thread()
                self._check_callback(callback, "call_at")
            self._drop_cancelled()
            handle = asyncio.TimerHandle(when, callback, args, self, context)
            heapq.heappush(self._scheduled, handle)
            handle._scheduled = True  # type: ignore[attr-defined]  # asyncio's, untyped
            self._arm()
            return handle

        def _drop_cancelled(self) -> None:
            """Drop cancelled deadlines (and what their handles hold) once they are at least
            half of the heap, or when they are at its head."""
            heap = self._scheduled
            if (
                self._timer_cancelled_count > KEEP_CANCELLED_TIMERS
                and self._timer_cancelled_count * 2 >= len(heap)
            ):
                kept = []
                for handle in heap:
                    if handle._cancelled:
                        handle._scheduled = False  # type: ignore[attr-defined]
                    else:
                        kept.append(handle)
                heapq.heapify(kept)
                self._scheduled = heap = kept
                self._timer_cancelled_count = 0
            while heap and heap[0]._cancelled:
                self._timer_cancelled_count -= 1
                heapq.heappop(heap)._scheduled = False  # type: ignore[attr-defined]

        def _arm(self) -> None:
            """Wake for the earliest deadline, unless already armed for one as early."""
            if not self._scheduled:
                return
            when = self._scheduled[0].when()
            if self._armed_for is not None and self._armed_for <= when:
                return
            # Rounded up: Qt counts whole milliseconds, and a wake before the deadline finds
            # nothing due (it re-arms for what is left). A far deadline (``sleep(inf)``; Qt's
            # interval is a 32-bit count of milliseconds) wakes after LONGEST_TIMER_WAIT_S first.
            now = self.time()
            wait = min(when - now, LONGEST_TIMER_WAIT_S)
            self._armed_for = now + wait
            self._deadline.start(max(0, math.ceil(wait * 1000)))

        def _run_due(self) -> None:
            """Move what is due to the ready queue, in deadline order; wake again for the next."""
            self._armed_for = None
            self._drop_cancelled()
            heap = self._scheduled
            due_by = self.time() + self._clock_resolution
            while heap and heap[0].when() <= due_by:
                handle = heapq.heappop(heap)
                handle._scheduled = False  # type: ignore[attr-defined]
                if handle._cancelled:
                    self._timer_cancelled_count -= 1
                    continue
                self._ready_queue.append(handle)
            if self._ready_queue:
                self._run_ready_soon()
            self._arm()

        def close(self) -> None:
            super().close()  # refuses a running loop; clears the heap, as asyncio's close does
            self._deadline.stop()
            self._armed_for = None

    loop: asyncio.AbstractEventLoop = QtEventLoop(app)
    return loop
