"""One asyncio lock per key (a task record, a conversation), kept only while in use.

A long-running window meets tens of thousands of keys; a plain ``dict`` of locks grows with
every one. Here a key's lock exists while someone holds it or waits for it, and is dropped by
the last one out, so a waiter can never end up on a lock that a newcomer no longer sees.
"""

from __future__ import annotations

import asyncio
from types import TracebackType


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class KeyedLocks:
    """``async with locks.hold(key):`` one holder per key at a time."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def hold(self, key: str) -> Hold:
        return Hold(self, key)

    def held(self, key: str) -> bool:
        """Whether someone holds or waits for ``key``'s lock."""
        return key in self._entries

    def keys(self) -> set[str]:
        return set(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def _enter(self, key: str) -> _Entry:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry()
        entry.users += 1
        return entry

    def _leave(self, key: str, entry: _Entry) -> None:
        entry.users -= 1
        if entry.users == 0:
            del self._entries[key]


class Hold:
    __slots__ = ("_entry", "_key", "_locks")

    def __init__(self, locks: KeyedLocks, key: str) -> None:
        self._locks = locks
        self._key = key
        self._entry: _Entry | None = None

    async def __aenter__(self) -> None:
        entry = self._locks._enter(self._key)
        try:
            await entry.lock.acquire()
        except BaseException:  # cancelled while waiting: no longer a user
            self._locks._leave(self._key, entry)
            raise
        self._entry = entry

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        entry = self._entry
        assert entry is not None
        self._entry = None
        entry.lock.release()
        self._locks._leave(self._key, entry)
