"""The window's event loop closes a dropped async generator as asyncio does: in a task of its
own, not inside whichever task the garbage collector interrupts.

Without it, a response stream dropped by a cancelled request (httpcore shields its connection
release in an anyio cancel scope) was closed inside another request's task, and that task's
next cancel-scope exit failed: the window lost its HTTP connections hundreds of times a minute
at scale, and tasks were stored as "status unavailable".
"""

from __future__ import annotations

import gc
from collections.abc import AsyncGenerator

import anyio
import anyio.lowlevel
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
