"""Each server's line of due records, polled ``per_server`` at a time.

Due records wait in their server's line and are polled as its slots free up (a slot is free
again once the server answered), so a thousand waiting tasks cost a thousand entries and
nothing else, and no server gets more than ``per_server`` status requests at once.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any


class Turn:
    """One due record's poll in one of its server's slots."""

    def __init__(self, lines: ServerLines, server_id: str | None, record_id: str) -> None:
        self.lines = lines
        self.server_id = server_id
        """``None``: the record's server is not known yet (the turn reads it)."""
        self.record_id = record_id
        self.started = False
        self._freed = False

    def free(self) -> None:
        """Give the slot back (once): the server answered, or the turn is over."""
        if not self._freed:
            self._freed = True
            self.lines._slot_freed(self.server_id)

    def over(self, task: asyncio.Task[None]) -> None:
        """The turn's task ended, perhaps cancelled before it began (stopping): then the record
        had no turn, and is handed back (``abandoned``)."""
        self.lines._tasks.discard(task)
        self.free()
        if not self.started:
            self.lines._abandoned(self.record_id)


class ServerLines:
    """Per server (``None``: not known yet), its due records waiting for a poll slot."""

    def __init__(
        self,
        *,
        per_server: int,
        take_turn: Callable[[Turn], Coroutine[Any, Any, None]],
        abandoned: Callable[[str], None],
    ) -> None:
        self._per_server = per_server
        self._take_turn = take_turn
        self._abandoned = abandoned
        self._waiting: dict[str | None, deque[str]] = {}
        self._asking: dict[str | None, int] = {}
        """Per server: how many of its poll slots are taken (a poll asking it, its answer not
        in yet)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed = False
        """While closed (the monitor stops), no turn is started (:meth:`open`, :meth:`close`)."""

    def queue(self, record_id: str, server_id: str | None) -> None:
        """Put a due record in its server's line, and poll as many of the line as the server
        has free slots for (a task per due record, waiting at the server's gate, made hundreds
        of waiting tasks when a launch made a thousand records due together)."""
        self._waiting.setdefault(server_id, deque()).append(record_id)
        self._take_turns(server_id)

    def open(self) -> None:
        """Start turns again (the monitor runs)."""
        self.closed = False

    async def close(self) -> None:
        """Start no more turns; cancel those running and wait for them to end (those not begun
        are handed back: ``abandoned``). The lines are kept (:meth:`take_waiting`)."""
        self.closed = True
        polls = list(self._tasks)
        for task in polls:
            task.cancel()
        if polls:
            await asyncio.gather(*polls, return_exceptions=True)

    def take_waiting(self) -> list[str]:
        """Empty every line; the records that waited in them."""
        waiting = [record_id for line in self._waiting.values() for record_id in line]
        self._waiting.clear()
        return waiting

    def _take_turns(self, server_id: str | None) -> None:
        """Start a poll of the server's waiting records for each of its free slots."""
        line = self._waiting.get(server_id)
        while line and not self.closed and self._asking.get(server_id, 0) < self._per_server:
            self._asking[server_id] = self._asking.get(server_id, 0) + 1
            turn = Turn(self, server_id, line.popleft())
            task = asyncio.create_task(self._take_turn(turn))
            self._tasks.add(task)
            task.add_done_callback(turn.over)
        if line is not None and not line:
            del self._waiting[server_id]

    def _slot_freed(self, server_id: str | None) -> None:
        self._asking[server_id] -= 1
        if not self._asking[server_id]:
            del self._asking[server_id]
        self._take_turns(server_id)
