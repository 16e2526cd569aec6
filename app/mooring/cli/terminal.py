"""Reading from the terminal without holding up Ctrl-C.

``asyncio.to_thread`` would leave a blocked ``readline`` in the default executor, which
``asyncio.run`` waits for on the way out; a daemon thread does not keep the process alive.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def in_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run a blocking ``fn`` (a prompt) in a daemon thread and await its result."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def target() -> None:
        try:
            result = fn(*args)
        except BaseException as exc:  # noqa: BLE001  # handed to the awaiting coroutine
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=target, name="mooring-prompt", daemon=True).start()
    return await future
