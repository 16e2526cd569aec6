"""Per-key locks: one holder per key, and nothing kept for a key nobody uses."""

from __future__ import annotations

import asyncio

import pytest

from mooring.services.keyed_locks import KeyedLocks

pytestmark = pytest.mark.anyio

BOUND_S = 10
"""A test that waits longer than this has failed (nothing here waits on a clock)."""


async def test_one_holder_per_key_and_the_lock_is_dropped_by_the_last_one_out() -> None:
    locks = KeyedLocks()
    order: list[str] = []
    first_in = asyncio.Event()
    release = asyncio.Event()
    other_done = asyncio.Event()

    async def first() -> None:
        async with locks.hold("task-1"):
            order.append("first in")
            first_in.set()
            await release.wait()
            order.append("first out")

    async def second() -> None:
        await first_in.wait()
        async with locks.hold("task-1"):
            order.append("second in")

    async def other_key() -> None:
        await first_in.wait()
        async with locks.hold("task-2"):
            order.append("other key in")
        other_done.set()

    running = [asyncio.ensure_future(c) for c in (first(), second(), other_key())]
    await other_done.wait()  # another key's lock is not held up by task-1's
    assert locks.held("task-1")
    release.set()
    await asyncio.gather(*running)

    assert order == ["first in", "other key in", "first out", "second in"]
    assert len(locks) == 0


async def test_a_waiter_cancelled_before_its_turn_leaves_nothing_behind() -> None:
    locks = KeyedLocks()
    holding = asyncio.Event()
    asking = asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with locks.hold("task-1"):
            holding.set()
            await release.wait()

    async def waiter() -> None:
        asking.set()  # no turn of the loop between this and waiting for the lock
        async with locks.hold("task-1"):
            raise AssertionError("never gets its turn")

    async with asyncio.timeout(BOUND_S):
        held = asyncio.ensure_future(holder())
        await holding.wait()
        waiting = asyncio.ensure_future(waiter())
        await asyncio.wait_for(asking.wait(), BOUND_S)  # resumes once the waiter is blocked
        assert locks.held("task-1")
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        release.set()
        await held

    assert len(locks) == 0
    async with locks.hold("task-1"):  # usable again
        assert locks.held("task-1")
