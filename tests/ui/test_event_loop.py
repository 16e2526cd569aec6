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
import math
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


# -- the timer heap ----------------------------------------------------------------------------


def _bounded(done: asyncio.Future[None]) -> asyncio.Future[None]:
    """``done``, also finished by a Qt timer after 30 s: a bound on a hang, not a timing (on a
    Qt timer, as the loop's own timers are what is under test)."""

    def give_up() -> None:
        if not done.done():
            done.set_result(None)

    QTimer.singleShot(30_000, give_up)
    return done


def _then_finish(ran: list[str], name: str, done: asyncio.Future[None]) -> None:
    ran.append(name)
    done.set_result(None)


def test_timed_callbacks_run_by_deadline_and_an_earlier_one_added_later_is_not_held_back(
    qapp: QApplication,
) -> None:
    """A deadline added after a far one still wakes the loop on time: were the loop armed only
    for the first (an hour away), this would wait for the test's bound and fail there."""
    loop = qt_event_loop(qapp)
    ran: list[str] = []

    async def schedule() -> None:
        done = _bounded(loop.create_future())
        far = loop.call_later(3600, ran.append, "an hour away")
        loop.call_later(0.02, _then_finish, ran, "later", done)
        loop.call_later(0.01, ran.append, "sooner")
        loop.call_at(loop.time() - 1, ran.append, "already due")
        await done
        far.cancel()

    try:
        loop.run_until_complete(schedule())
    finally:
        loop.close()
    assert ran == ["already due", "sooner", "later"]


def test_a_cancelled_timed_callback_does_not_run(qapp: QApplication) -> None:
    loop = qt_event_loop(qapp)
    ran: list[str] = []

    async def schedule() -> None:
        done = _bounded(loop.create_future())
        cancelled = loop.call_later(0.01, ran.append, "cancelled")
        loop.call_later(0.02, _then_finish, ran, "kept", done)
        cancelled.cancel()
        await done

    try:
        loop.run_until_complete(schedule())
    finally:
        loop.close()
    assert ran == ["kept"]


class _Guarded:
    """What a request's context holds while a timeout guards it (a span, a cancel scope)."""


def test_cancelled_timeouts_do_not_keep_what_their_contexts_hold(qapp: QApplication) -> None:
    """Nearly every request's timeout is cancelled long before its deadline. Their handles
    (with the context each keeps: the request's span, its cancel scopes) are let go once they
    are half of what waits, not kept until their deadlines, which is what qasync did."""
    import contextvars
    import weakref

    loop = qt_event_loop(qapp)
    current: contextvars.ContextVar[_Guarded] = contextvars.ContextVar("current")
    alive: list[weakref.ref[_Guarded]] = []

    async def many_requests() -> None:
        for _ in range(1_000):
            guarded = _Guarded()
            alive.append(weakref.ref(guarded))
            context = contextvars.copy_context()
            context.run(current.set, guarded)
            del guarded
            loop.call_later(60, lambda: None, context=context).cancel()
            del context
        loop.call_later(60, lambda: None).cancel()

    try:
        loop.run_until_complete(many_requests())
        kept = sum(ref() is not None for ref in alive)
    finally:
        loop.close()
    # Cancelled deadlines are dropped once more than 100 wait and they are half the heap.
    assert kept <= 101, f"{kept} of 1,000 cancelled timeouts still hold their contexts"


def test_a_deadline_at_infinity_neither_fails_nor_holds_back_the_others(
    qapp: QApplication,
) -> None:
    """``sleep(inf)`` (anyio's ``sleep_forever``) is a deadline Qt cannot count to."""
    loop = qt_event_loop(qapp)
    ran: list[str] = []
    still_asleep: list[bool] = []

    async def schedule() -> None:
        done = _bounded(loop.create_future())
        asking = _bounded(loop.create_future())

        async def sleep_forever() -> None:
            asking.set_result(None)  # the deadline is asked for in this same step, just below
            await asyncio.sleep(math.inf)

        forever = asyncio.ensure_future(sleep_forever())
        await asking
        loop.call_later(0.01, _then_finish, ran, "soon", done)
        await done
        still_asleep.append(not forever.done())
        forever.cancel()

    try:
        loop.run_until_complete(schedule())
    finally:
        loop.close()
    assert ran == ["soon"]
    assert still_asleep == [True]
