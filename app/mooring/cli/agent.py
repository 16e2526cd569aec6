"""``mooring agent start|status|stop``: the data folder's engine, seen from a command.

``mooring agent run`` (the engine itself) is the composition root's.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from mooring import __version__
from mooring.cli.exit_codes import ExitCode
from mooring.cli.output import Terminal
from mooring.link.address import lock_path
from mooring.link.spawn import reach, reach_or_start
from mooring.link.wire import Hello

STOP_WAIT_S = 30.0
"""How long ``agent stop`` waits for the engine to end (it ends its server connections)."""


async def agent_action(
    action: str, data_dir: Path, command: Sequence[str], terminal: Terminal
) -> ExitCode:
    """Start, describe or stop the engine of ``data_dir`` (started with ``command``)."""
    hello = Hello("cli", os.getpid(), __version__, events=False)
    if action == "start":
        started = await reach_or_start(data_dir, hello, command)
        terminal.say(f"The engine runs (pid {started.welcome.pid}) on {data_dir}.")
        await started.aclose()
        return ExitCode.OK
    link = await reach(data_dir, hello)
    if link is None:
        terminal.say(f"No engine runs on {data_dir}.")
        return ExitCode.OK
    pid = link.welcome.pid
    try:
        if action == "stop":
            await link.call("engine.stop")
        else:
            status = await link.call("engine.status")
    finally:
        await link.aclose()
    if action == "stop":
        if await _ended(data_dir, STOP_WAIT_S):
            terminal.say(f"The engine (pid {pid}) has ended.")
        else:
            terminal.say(
                f"The engine (pid {pid}) is ending (still closing after {STOP_WAIT_S:.0f} s)."
            )
        return ExitCode.OK
    terminal.say(f"engine      pid {status.pid}, Mooring {link.welcome.version}")
    terminal.say(f"data folder {status.data_dir}")
    terminal.say(f"follows     {status.followed} task(s)")
    if status.conversing:
        terminal.say("conversing  a model turn is running")
    for face in status.faces:
        terminal.say(f"face        {face}")
    for connection in status.connections:
        terminal.say(f"connection  {connection}")
    return ExitCode.OK


async def _ended(data_dir: Path, within: float) -> bool:
    """Whether the engine of ``data_dir`` ended (let go of its lock) within ``within`` s."""
    loop = asyncio.get_running_loop()
    released: asyncio.Future[None] = loop.create_future()

    def wait() -> None:  # a daemon thread: one still blocked at the timeout does not hold exit
        try:
            fd = os.open(lock_path(data_dir), os.O_RDONLY)
        except OSError:
            pass  # no lock file: nothing holds it
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)  # granted once the engine's exclusive lock goes
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
        with contextlib.suppress(RuntimeError):  # the command already ended its loop
            loop.call_soon_threadsafe(_settle, released)

    threading.Thread(target=wait, name="mooring-agent-stop", daemon=True).start()
    try:
        await asyncio.wait_for(released, within)
    except TimeoutError:
        return False
    return True


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
