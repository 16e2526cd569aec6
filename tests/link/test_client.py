"""The face's end of the link, against a real Unix socket and real frames."""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from mooring.core.events import ServersDidChange
from mooring.core.faces import NOBODY
from mooring.link import wire
from mooring.link.client import EngineLink

pytestmark = pytest.mark.anyio

BURST = 2000


@pytest.fixture
async def engine_that_bursts(tmp_path: Path) -> AsyncIterator[Path]:
    """A stand-in engine on a Unix socket: it welcomes a face, then sends :data:`BURST` events
    in one write, so they wait for the face all at once (as a reconciliation's changes do)."""
    path = tmp_path / "engine.sock"

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await wire.read_frame(reader)  # the hello
            writer.write(wire.dumps((wire.WELCOME, wire.Welcome(os.getpid(), "test", ""))))
            event = wire.dumps((wire.EVENT, ServersDidChange(())))
            writer.write(event * BURST)
            await writer.drain()
            await reader.read()  # until the face leaves
        finally:
            writer.close()

    server = await asyncio.start_unix_server(serve, path=str(path))
    async with server:
        yield path


async def test_a_burst_of_events_leaves_the_loop_turns_of_its_own(
    engine_that_bursts: Path,
) -> None:
    # Each event costs its listener 1 ms of work (a window laying out what changed). The
    # loop's other work (a window's painting and input) must still get turns meanwhile: frames
    # already received are otherwise handed on in one go, without a pause.
    link = await EngineLink.connect(
        engine_that_bursts, wire.Hello("window", os.getpid(), "test", NOBODY)
    )
    heard = 0
    everything = asyncio.Event()

    def listener(_event: object) -> None:
        nonlocal heard
        until = time.perf_counter() + 0.001
        while time.perf_counter() < until:
            pass
        heard += 1
        if heard == BURST:
            everything.set()

    link.events.subscribe(listener)
    turns: list[int] = []  # how many events had been heard at each of the loop's other turns

    async def other_work() -> None:
        while not everything.is_set():
            turns.append(heard)
            await asyncio.sleep(0)

    try:
        with anyio.fail_after(60):
            await asyncio.gather(everything.wait(), other_work())
    finally:
        await link.aclose()
    assert heard == BURST
    steps = [b - a for a, b in itertools.pairwise([0, *turns, BURST])]
    assert max(steps) <= 50, steps  # 4 ms turns: ~4 events each, not hundreds


def test_an_error_among_a_call_s_arguments_crosses_as_itself_not_as_a_callback() -> None:
    handles: list[object] = []
    payload = wire.dumps((wire.CALL, 1, "x", (ValueError("no such task"),), {}), handles.append)
    assert handles == []  # only the callables a face hands over become handles
    [error] = wire.loads(payload[wire.HEADER.size :])[3]
    assert isinstance(error, ValueError)
    assert str(error) == "no such task"
