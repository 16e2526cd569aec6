"""A CLI command: in the data folder's engine when it runs (or when the command needs one: it
is started), else with a host of its own in this process."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mooring import __version__
from mooring.bootstrap.starting import agent_command, settle_collector, start_up, tracing
from mooring.bootstrap.wiring import wire
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.settings.paths import resolve_paths

if TYPE_CHECKING:
    from mooring.core.notifications import Notice
    from mooring.services.host import Host


def run_headless(args: argparse.Namespace) -> ExitCode:
    """Run one CLI command: in the data folder's engine when it runs (or when the command
    needs one: it starts it), else with a host of its own in this process."""
    from mooring.cli.commands import EngineUse, engine_use

    use = engine_use(args)
    if use is not EngineUse.NEVER:
        done = _through_engine(args, start=use is EngineUse.NEEDED)
        if done is not None:
            return done
    return _run_here(args)


def _through_engine(args: argparse.Namespace, *, start: bool) -> ExitCode | None:
    """Run the command with the engine's host (``None``: no engine runs, and ``start`` is
    off)."""
    from mooring.link.address import socket_path

    paths = resolve_paths(args.data_dir)
    paths.check()
    if not start and not socket_path(paths.data_dir).exists():
        return None  # no engine: nothing of it loads
    import asyncio
    from typing import cast

    from mooring.cli.calling import engine_version_error
    from mooring.cli.commands import handler_for
    from mooring.cli.context import CliContext, Terminal
    from mooring.cli.sampling import terminal_askers
    from mooring.core.events import EngineDidStop, stopped_words
    from mooring.core.faces import HOST_PARTS, NOBODY
    from mooring.link.client import Remote
    from mooring.link.spawn import reach, reach_or_start
    from mooring.link.wire import Hello, LinkClosed

    terminal = Terminal()
    hooks: dict[str, Callable[..., Any]] = {}
    if getattr(args, "notify", False):  # `tasks watch --notify`: notices on this terminal too

        async def notice(shown: Notice) -> bool:
            terminal.warn(f"[{shown.summary}] {shown.body}".replace("\n", "; "))
            return True

        hooks["notice"] = notice
    hello = Hello(
        "cli",
        os.getpid(),
        __version__,
        terminal_askers(terminal) if terminal.interactive else NOBODY,
        hooks=hooks,
    )

    async def run() -> ExitCode | None:
        link = (
            await reach_or_start(paths.data_dir, hello, agent_command(paths))
            if start
            else await reach(paths.data_dir, hello)
        )
        if link is None:
            return None
        try:
            error = engine_version_error(link.welcome)
            if error is not None:
                raise error
            ctx = CliContext(
                host=cast("Host", Remote(link, parts=HOST_PARTS)),
                as_json=args.json,
                terminal=terminal,
            )
            link.events.on(EngineDidStop, lambda e: terminal.warn(f"mooring: {stopped_words(e)}"))
            if args.command == "traces":
                await link.call("engine.flush_traces")  # what it traced so far, on file
            if "notice" in hooks:  # what was held back until a face took notices
                await link.call("engine.deliver_notices")
            # A command that waits on the engine (following a task, say) stops when the engine
            # goes away, rather than wait for what nobody will tell it any more.
            handler = asyncio.ensure_future(
                handler_for(args, traces_dir=paths.traces_dir)(ctx, args)
            )
            lost: list[str] = []

            def on_lost(reason: str) -> None:
                lost.append(reason)
                handler.cancel()

            link.on_lost.append(on_lost)
            try:
                return await handler
            except asyncio.CancelledError:
                if lost:
                    raise LinkClosed(lost[0]) from None
                raise
            finally:
                if "notice" in hooks and link.connected:  # a burst's merged notice, now
                    with contextlib.suppress(KnownError, LinkClosed):
                        await link.call("engine.deliver_notices")
        finally:
            await link.aclose()

    return asyncio.run(run())


def _run_here(args: argparse.Namespace) -> ExitCode:
    """Run one CLI command with a host of its own (no engine runs; the command needs no
    connection that outlives it)."""
    import asyncio

    from mooring.cli.commands import handler_for
    from mooring.cli.context import CliContext, Terminal
    from mooring.cli.sampling import terminal_askers
    from mooring.storage.db import Database

    paths, settings = start_up(args)
    db = Database.open(paths.database)
    terminal = Terminal()
    # This process's host asks this terminal (when it is one).
    askers = terminal_askers(terminal) if terminal.interactive else None
    wiring = wire(paths, settings, db, askers=askers)
    host = wiring.host
    # Process-wide: only a process's own entry point settles the collector (never a host
    # built in-process, as tests build them).
    settle_collector()
    wiring.gateway.when_loaded(settle_collector)  # the SDK's classes, there for good too

    async def run() -> ExitCode:
        try:
            await host.prepare()
            ctx = CliContext(host=host, as_json=args.json, terminal=terminal)
            return await handler_for(args, traces_dir=paths.traces_dir)(ctx, args)
        finally:
            await host.stop()

    provider = tracing(paths, settings, synchronous=True)
    try:
        return asyncio.run(run())
    finally:
        provider.shutdown()
        db.close()
