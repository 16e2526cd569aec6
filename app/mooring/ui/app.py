"""Starting the Qt application on a qasync event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import qasync
from PySide6.QtCore import QSocketNotifier
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from mooring.core.errors import KnownError
from mooring.core.events import Event, ReplyDidStream
from mooring.services.host import Host
from mooring.settings.paths import APP_ID, APP_NAME
from mooring.ui.main_window import HostOverview, MainWindow, TaskRow

log = logging.getLogger("mooring.ui")


def overview_loader(
    host: Host, *, data_dir: str, database: str, schema: str
) -> Callable[[], Awaitable[HostOverview]]:
    """What the status window shows, read from the host's views."""

    async def load() -> HostOverview:
        overview = await host.overview()
        aliases = {s.id: s.alias for s in overview.servers}
        rows = [
            TaskRow(
                operation=view.short_id,
                tool=view.record.tool,
                server=aliases.get(view.record.server_id, "(removed)"),
                state=view.words.label,
                detail=view.words.detail,
            )
            for view in overview.tasks
        ]
        return HostOverview(
            data_dir=data_dir,
            database=database,
            schema=schema,
            servers=overview.servers,
            task_counts=overview.counts,
            issues=overview.issues,
            tasks=rows,
        )

    return load


log = logging.getLogger("mooring.ui")


def run_app(
    host: Host,
    *,
    data_dir: str,
    database: str,
    schema: str,
    on_ready: Callable[[MainWindow], None] | None = None,
    export_traces: Callable[[Path], Awaitable[int]] | None = None,
    attach: Callable[[MainWindow], None] | None = None,
    background: Callable[[], Awaitable[None]] | None = None,
    shutdown: Callable[[], Awaitable[None]] | None = None,
) -> int:
    """Run the GUI over ``host`` until its last window closes; returns the exit code.

    The window is painted first; then launch reconciliation runs and the task monitor starts
    in the background. Every host event schedules a refresh (at most a few a second). When the
    last window closed, the host stops on the same loop. ``attach`` is given the window as
    soon as it exists (the notification links hook into it); ``background`` and ``shutdown``
    replace the default launch work and clean-up (the composition root adds the one-poller rule
    and notifications).
    """
    load = overview_loader(host, data_dir=data_dir, database=database, schema=schema)

    async def reconcile_then_watch() -> None:
        # The window is up: reconcile what earlier runs started, then keep watching.
        host.start_monitoring()
        try:
            await host.reconcile()
        except KnownError as exc:
            log.warning("launch reconciliation stopped: %s", exc.message)

    async def stop_host() -> None:
        await host.stop()

    launch_work = background or reconcile_then_watch
    clean_up = shutdown or stop_host

    def subscribe(callback: Callable[[], None]) -> Callable[[], None]:
        def changed(event: Event) -> None:
            if not isinstance(event, ReplyDidStream):  # a piece of a reply changes no overview
                callback()

        return host.events.subscribe(changed)

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    QGuiApplication.setDesktopFileName(APP_ID)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    closed = asyncio.Event()
    # We end the loop ourselves after shutdown work (close connections, flush), not Qt.
    app.setQuitOnLastWindowClosed(False)
    app.lastWindowClosed.connect(closed.set)

    def quit_like_the_menu() -> None:
        log.info("SIGTERM received: closing the window as Quit does")
        app.closeAllWindows()
        closed.set()

    async def main() -> None:
        await host.prepare()
        window = MainWindow(load, export_traces=export_traces)
        if attach is not None:
            attach(window)
        window.show()
        await window.refresh()
        unsubscribe = subscribe(window.schedule_refresh)
        work = asyncio.ensure_future(launch_work())
        if on_ready is not None:
            on_ready(window)
        await closed.wait()
        unsubscribe()
        if not work.done():
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
        await clean_up()
        log.info("window closed: monitoring stopped, server connections closed")

    restore = on_sigterm(quit_like_the_menu)
    try:
        with loop:
            loop.run_until_complete(main())
    finally:
        restore()
    return 0


def on_sigterm(action: Callable[[], None]) -> Callable[[], None]:
    """Run ``action`` on the Qt loop when SIGTERM arrives (logout, ``kill``); returns a function
    that restores the previous handling.

    Python runs signal handlers only between bytecodes, which a Qt loop idle in C++ never
    reaches: the signal's byte is written to a socket (``signal.set_wakeup_fd``) that a
    ``QSocketNotifier`` watches, so the loop wakes at once without polling.
    """
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    previous_handler = signal.signal(signal.SIGTERM, lambda _signum, _frame: None)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read)

    def woken() -> None:
        try:
            received = reader.recv(64)
        except BlockingIOError:
            return
        if signal.SIGTERM in received:
            action()

    notifier.activated.connect(woken)

    def restore() -> None:
        notifier.setEnabled(False)
        signal.set_wakeup_fd(previous_fd)
        signal.signal(signal.SIGTERM, previous_handler)
        reader.close()
        writer.close()

    return restore


def show_fatal(message: str, hint: str) -> None:
    """Tell the user, in a dialog, why the app cannot start (then return)."""
    from PySide6.QtWidgets import QMessageBox

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    box = QMessageBox(QMessageBox.Icon.Critical, "Mooring cannot start", message)
    box.setInformativeText(hint)
    box.open()
    box.finished.connect(app.quit)
    app.exec()
