"""The window's event loop closes a dropped async generator as asyncio does: in a task of its
own, not inside whichever task the garbage collector interrupts.

Without it, a response stream dropped by a cancelled request (httpcore shields its connection
release in an anyio cancel scope) was closed inside another request's task, and that task's
next cancel-scope exit failed: the window lost its HTTP connections hundreds of times a minute
at scale, and tasks were stored as "status unavailable".
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import AsyncGenerator

import anyio
import anyio.lowlevel
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from mooring.ui.loop import qt_event_loop

released: list[str] = []


async def response_stream() -> AsyncGenerator[int, None]:
    try:
        yield 1
        yield 2
    finally:
        # Released the way httpcore releases a connection: shielded, and with an await.
        with anyio.CancelScope(shield=True):
            await anyio.lowlevel.checkpoint()
            released.append("stream")


async def a_request_that_drops_its_stream() -> str:
    stream = response_stream()
    assert await stream.__anext__() == 1
    with anyio.CancelScope():  # the task the collector interrupts, inside a scope of its own
        del stream
        gc.collect()
        await anyio.lowlevel.checkpoint()
    for _ in range(10):  # the stream's own task closes it
        await anyio.lowlevel.checkpoint()
    return "request ended cleanly"


def test_a_dropped_async_generator_is_closed_in_its_own_task(qapp: QApplication) -> None:
    released.clear()
    loop = qt_event_loop(qapp)
    try:
        assert loop.run_until_complete(a_request_that_drops_its_stream()) == (
            "request ended cleanly"
        )
    finally:
        loop.close()
    assert released == ["stream"]


# -- the ready queue ---------------------------------------------------------------------------


def test_ready_callbacks_run_in_order_and_a_cancelled_one_does_not(qapp: QApplication) -> None:
    loop = qt_event_loop(qapp)
    ran: list[str] = []
    finished = loop.create_future()

    def made_ready_by_second() -> None:
        ran.append("made ready by second")
        finished.set_result(None)

    try:
        loop.call_soon(ran.append, "first")
        cancelled = loop.call_soon(ran.append, "cancelled")
        loop.call_soon(lambda: loop.call_soon(made_ready_by_second))
        loop.call_soon(ran.append, "third")
        cancelled.cancel()
        loop.run_until_complete(finished)
    finally:
        loop.close()
    # As asyncio: what a callback makes ready runs after what was waiting already.
    assert ran == ["first", "third", "made ready by second"]


SPIN_LIMIT = 200_000


def test_callbacks_that_keep_making_work_ready_never_starve_qt(qapp: QApplication) -> None:
    """A coroutine that yields with ``sleep(0)`` in a loop (or callbacks that schedule each
    other) keeps the queue full: Qt's own events (input, painting, timers) still get turns."""
    loop = qt_event_loop(qapp)
    qt_turns: list[int] = []
    spins = 0

    async def busy() -> None:
        nonlocal spins
        # Bounded by a count, not a clock: a loop that starved Qt would end here with fewer
        # than 3 Qt turns (asserted below), not hang. ~400 spins fit in one 4 ms slice.
        while len(qt_turns) < 3 and spins < SPIN_LIMIT:
            spins += 1
            # Not a wait for something: yielding with sleep(0) is the behaviour under test.
            await asyncio.sleep(0)

    def qt_timer() -> None:
        qt_turns.append(spins)
        if len(qt_turns) < 3:
            QTimer.singleShot(0, qt_timer)

    try:
        QTimer.singleShot(0, qt_timer)
        loop.run_until_complete(busy())
    finally:
        loop.close()
    assert len(qt_turns) == 3
    assert qt_turns[-1] > qt_turns[0]  # the coroutine ran between Qt's turns


def test_call_soon_threadsafe_runs_on_the_loop(qapp: QApplication) -> None:
    loop = qt_event_loop(qapp)
    ran: list[bool] = []

    async def from_a_thread() -> None:
        done = asyncio.Event()

        def on_the_loop() -> None:
            ran.append(threading.current_thread() is threading.main_thread())
            done.set()

        def in_thread() -> None:
            loop.call_soon_threadsafe(on_the_loop)

        worker = threading.Thread(target=in_thread)
        worker.start()
        await done.wait()
        worker.join()

    try:
        loop.run_until_complete(from_a_thread())
    finally:
        loop.close()
    assert ran == [True]
