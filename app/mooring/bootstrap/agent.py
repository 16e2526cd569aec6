"""The engine (``mooring agent``): the data folder's host served to its faces, with the
notifier, trace export and reconciliation at start."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mooring import __version__
from mooring.adapters import launcher
from mooring.bootstrap.starting import agent_command, log, settle_collector, start_up, tracing
from mooring.bootstrap.wiring import wire
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.settings.paths import APP_NAME, Paths, resolve_paths
from mooring.settings.store import Settings, load_settings

if TYPE_CHECKING:
    from mooring.adapters.lazy_tracing import LazyTracerProvider
    from mooring.core.notifications import Notice, NotifyPrefs
    from mooring.engine.engine import EngineServices
    from mooring.services.host import Host
    from mooring.storage.db import Database


def run_agent(args: argparse.Namespace) -> ExitCode:
    """``mooring agent [run|start|status|stop]``."""
    action = getattr(args, "agent_command", None) or "run"
    if action == "run":
        return _run_engine(args)
    import asyncio

    from mooring.cli.agent import agent_action
    from mooring.cli.context import Terminal

    paths = resolve_paths(args.data_dir)
    paths.check()
    return asyncio.run(agent_action(action, paths.data_dir, agent_command(paths), Terminal()))


def _run_engine(args: argparse.Namespace) -> ExitCode:
    """The data folder's engine, in this process, until it has nothing to do (or SIGTERM)."""
    import asyncio
    import signal

    from mooring.adapters.instance_lock import InstanceLock
    from mooring.adapters.notify.chain import HookLink, NotificationChain
    from mooring.adapters.notify.desktop import DesktopLink
    from mooring.adapters.process import current_owner
    from mooring.engine.engine import Engine, FacesLink
    from mooring.link.address import lock_path
    from mooring.link.spawn import ALREADY_RUNNING, HANDSHAKE_ENV, detach_from_starter, say_busy
    from mooring.services.notifier import Notifier
    from mooring.storage.db import Database

    handshake = os.environ.pop(HANDSHAKE_ENV, "") == "1"  # started by a face, which waits
    paths, settings = start_up(args)
    paths.ensure()
    lock = InstanceLock(lock_path(paths.data_dir), current_owner())
    if not lock.try_acquire():
        if handshake:
            say_busy()
        sys.stderr.write(
            f"mooring: an engine runs already on {paths.data_dir} ({lock.holder()}).\n"
        )
        return ExitCode(ALREADY_RUNNING)
    try:
        db = Database.open(paths.database)
        wiring = wire(paths, settings, db)
        host = wiring.host
        settle_collector()
        wiring.gateway.when_loaded(settle_collector)
        provider = tracing(paths, settings, synchronous=False)
        engine = Engine(
            host,
            data_dir=paths.data_dir,
            version=__version__,
            idle_after=float(settings.get("engine.idle_exit_s")),
            services=_engine_services(paths, settings, db, provider),
        )

        async def run() -> None:
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, engine.stop)
            desktop = DesktopLink(app_name=APP_NAME)
            desktop.on_open = engine.open_target
            notifier = Notifier(
                events=host.events,
                catalog=host.catalog,
                sink=NotificationChain([desktop, FacesLink(engine), HookLink("log", _log_notice)]),
                clock=host.clock,
                prefs=notification_prefs(settings),
            )
            engine.attach_notifier(notifier)
            await host.prepare()
            await engine.start()
            if handshake:
                detach_from_starter()
            log.info("engine %s serving %s", os.getpid(), paths.data_dir)
            notifier.start()
            delivering = asyncio.ensure_future(notifier.run())
            host.start_monitoring()
            reconciling = asyncio.ensure_future(_reconcile_at_start(host))
            try:
                await engine.run()
            finally:
                reconciling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reconciling
                await notifier.aclose(delivering)
                await engine.aclose()
                await desktop.aclose()

        try:
            asyncio.run(run())
        finally:
            provider.shutdown()
            db.close()
        log.info("engine %s ended", os.getpid())
        return ExitCode.OK
    finally:
        lock.release()


def _engine_services(
    paths: Paths, settings: Settings, db: Database, provider: LazyTracerProvider
) -> EngineServices:
    """What the engine needs beside its host: where it keeps things, the settings file read
    again, trace export, and how to open the window."""
    from mooring.adapters.telemetry import export_to
    from mooring.engine.engine import EngineInfo, EngineServices

    def reload_settings() -> None:
        fresh = load_settings(paths.settings_file)
        for key, value in fresh.as_dict().items():
            settings.set(key, value)

    async def flush_traces() -> None:
        import asyncio

        await asyncio.to_thread(provider.force_flush)

    async def export_traces(target: Path) -> int:
        import asyncio

        await flush_traces()
        return await asyncio.to_thread(export_to, paths.traces_dir, target)

    def open_window() -> None:
        from mooring.link.spawn import start_detached

        start_detached(launcher.mooring_command("--data-dir", str(paths.data_dir)))

    async def save_database() -> str:
        from datetime import UTC, datetime

        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        target = paths.data_dir / f"mooring-recovered-{stamp}.sqlite3"
        await db.save_copy(target)
        return str(target)

    return EngineServices(
        info=EngineInfo(
            data_dir=str(paths.data_dir),
            database=str(paths.database),
            schema=f"{db.schema.current} (newest known: {db.schema.head})",
            log_file=str(paths.log_file),
        ),
        reload_settings=reload_settings,
        export_traces=export_traces,
        flush_traces=flush_traces,
        notifications_asked=lambda: bool(settings.get("notifications.asked")),
        open_window=open_window,
        database_lost=db.lost,
        save_database=save_database,
    )


async def _reconcile_at_start(host: Host) -> None:
    try:
        await host.reconcile()
    except KnownError as exc:
        log.warning("launch reconciliation stopped: %s", exc.message)


# -- Notifications ------------------------------------------------------------------------------


def notification_prefs(settings: Settings) -> Callable[[], NotifyPrefs]:
    """The notification settings in force, read from ``settings`` at each notice."""
    from mooring.core.notifications import prefs_from

    def prefs() -> NotifyPrefs:
        return prefs_from(
            when=str(settings.get("notifications.when")),
            show_names=bool(settings.get("notifications.show_names")),
            muted=settings.get("notifications.muted_conversations"),
        )

    return prefs


def _log_notice(notice: Notice) -> bool:
    log.info("notice (no desktop, window or terminal to show it on): %s", notice.summary)
    return True
