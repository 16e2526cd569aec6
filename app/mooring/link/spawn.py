"""Reaching a data folder's engine, starting it first when none runs.

The engine is ``mooring agent run`` in a session of its own (it outlives the command that
started it). It says ``ready`` on its standard output once it listens and closes that pipe;
until then, what it writes to standard error is why it could not start (a database it cannot
open, say), which the starting command shows as its own error. Two commands that both find
no engine may both start one: the second finds the data folder's engine lock held and ends,
and both commands reach the first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from mooring.core.errors import KnownError, Remedy
from mooring.core.events import EventBus
from mooring.link.address import socket_path
from mooring.link.client import EngineLink
from mooring.link.wire import CONNECT_TIMEOUT_S, EngineStuck, Hello

log = logging.getLogger("mooring.link")

READY = b"ready\n"
"""The line an engine writes on its standard output once it listens."""
BUSY = b"busy\n"
"""The line an engine writes when it found another one running on its data folder (and
ends)."""
ALREADY_RUNNING = 3
"""The exit code of an engine that found another one running on its data folder."""
HANDSHAKE_ENV = "MOORING_ENGINE_HANDSHAKE"
"""Set (to ``1``) in the environment of an engine a face starts: it says ``ready`` then."""
START_TIMEOUT_S = 60.0
"""How long a starting engine may take to listen (a first run creates the database)."""


async def reach(
    data_dir: Path, hello: Hello, *, events: EventBus | None = None
) -> EngineLink | None:
    """A link to the data folder's running engine, or ``None`` when none runs (its events are
    told on ``events``, a new bus by default)."""
    path = socket_path(data_dir)
    if not path.exists():
        return None
    try:
        return await EngineLink.connect(path, hello, timeout=CONNECT_TIMEOUT_S, events=events)
    except (FileNotFoundError, ConnectionRefusedError):
        return None  # a socket file left by an engine that died
    except TimeoutError as exc:
        raise EngineStuck(data_dir) from exc


async def reach_or_start(
    data_dir: Path, hello: Hello, command: Sequence[str], *, events: EventBus | None = None
) -> EngineLink:
    """A link to the data folder's engine, started with ``command`` when none runs."""
    link = await reach(data_dir, hello, events=events)
    if link is not None:
        return link
    log.info("no engine runs on %s: starting one", data_dir)
    started = _spawn(command)
    try:
        said = await asyncio.wait_for(asyncio.to_thread(started.first_line), START_TIMEOUT_S)
    except TimeoutError as exc:
        started.close()
        raise KnownError(
            "Mooring's engine did not start in time.",
            code="engine_start",
            remedy=Remedy.ENGINE_LOG,
        ) from exc
    if said not in (READY, BUSY):
        error = await asyncio.to_thread(started.outcome)
        started.close()
        raise KnownError(f"Mooring's engine could not start: {error}", code="engine_start")
    started.close()
    link = await _reach_soon(data_dir, hello, events)
    if link is None:
        raise KnownError(
            "Mooring's engine started but cannot be reached.",
            code="engine_start",
            remedy=Remedy.ENGINE_LOG,
        )
    return link


class _Started:
    """An engine process started in a session of its own, and the read ends of its pipes."""

    def __init__(self, pid: int | None, out: int, err: int) -> None:
        self.pid = pid
        """``None`` when the engine is not this process's child."""
        self._out: BinaryIO | None = os.fdopen(out, "rb")
        self._err: BinaryIO | None = os.fdopen(err, "rb")

    def first_line(self) -> bytes:
        assert self._out is not None
        return self._out.readline()

    def outcome(self) -> str:
        """What an engine that ended before it was ready said (its exit code if nothing)."""
        error = self._err.read().decode(errors="replace")[-2000:].strip() if self._err else ""
        error = " ".join(line.strip().removeprefix("mooring: ") for line in error.splitlines())
        if self.pid is None:
            return error or "it ended without a word"
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # reaped already
            return error or "it ended without a word"
        return error or f"exit code {os.waitstatus_to_exitcode(status)}"

    def close(self) -> None:
        for stream in (self._out, self._err):
            if stream is not None:
                stream.close()
        self._out = self._err = None


def _spawn(command: Sequence[str]) -> _Started:
    """Start ``command`` detached: a new session (not this terminal's process group, so
    Ctrl-C here never reaches it), standard input from ``/dev/null``, its output and errors
    to pipes. Not a ``subprocess.Popen``: the engine outlives this process, unwaited for."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out_write, 1),
        (os.POSIX_SPAWN_DUP2, err_write, 2),
        (os.POSIX_SPAWN_CLOSE, out_read),
        (os.POSIX_SPAWN_CLOSE, err_read),
    ]
    try:
        pid = os.posix_spawn(
            command[0],
            list(command),
            {**os.environ, HANDSHAKE_ENV: "1"},
            file_actions=actions,
            setsid=True,
        )
    except OSError:
        for fd in (out_read, out_write, err_read, err_write):
            os.close(fd)
        raise
    os.close(out_write)
    os.close(err_write)
    return _Started(pid, out_read, err_read)


async def _reach_soon(data_dir: Path, hello: Hello, events: EventBus | None) -> EngineLink | None:
    """Reach an engine that is starting (another command's): bounded retries."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_TIMEOUT_S
    delay = 0.01
    while True:
        link = await reach(data_dir, hello, events=events)
        if link is not None or loop.time() > deadline:
            return link
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.2)


def say_busy() -> None:
    """In a starting engine that found another one running: say so to the starter."""
    with contextlib.suppress(OSError):
        os.write(1, BUSY)


def detach_from_starter() -> None:
    """In a starting engine, once it listens: say ``ready`` and let go of the pipes of the
    command that started it (what the engine says from now on goes to its log)."""
    with contextlib.suppress(OSError):
        os.write(1, READY)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.dup2(devnull, fd)
    os.close(devnull)


def start_detached(command: Sequence[str]) -> None:
    """Start ``command`` in a session of its own, its streams on ``/dev/null``, not waited
    for (the window a clicked notification opens)."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    os.posix_spawn(command[0], list(command), dict(os.environ), file_actions=actions, setsid=True)
