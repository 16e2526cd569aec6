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
from mooring.services.host import Host
from mooring.settings.paths import APP_ID, APP_NAME
from mooring.ui.dialogs.approval import DialogAsker
from mooring.ui.icon import app_icon
from mooring.ui.main_window import MainWindow, WindowInfo
from mooring.ui.palette_theme import follow_system
from mooring.ui.single_instance import InstanceServer

log = logging.getLogger("mooring.ui")


def ensure_app() -> QApplication:
    """The one QApplication (made on first call)."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    # Task bars (Wayland's app id, X11's hints) match the window to the installed entry.
    QGuiApplication.setDesktopFileName(APP_ID)
    if app.windowIcon().isNull():
        app.setWindowIcon(app_icon())
    return app


def run_app(
    host: Host,
    info: WindowInfo,
    *,
    asker: DialogAsker | None = None,
    instance: InstanceServer | None = None,
    layout_file: Path | None = None,
    on_ready: Callable[[MainWindow], None] | None = None,
    export_traces: Callable[[Path], Awaitable[int]] | None = None,
    attach: Callable[[MainWindow], None] | None = None,
    background: Callable[[], Awaitable[None]] | None = None,
    shutdown: Callable[[], Awaitable[None]] | None = None,
) -> int:
    """Run the GUI over ``host`` until its last window closes; returns the exit code.

    The window is painted first with the last known state from the database; then launch
    reconciliation runs and the task monitor starts in the background, and the cards catch
    up as the host tells what changed. When the last window closed, the host stops on the
    same loop. ``attach`` is given the window as soon as it exists (the notification links hook
    into it); ``background`` and ``shutdown`` replace the default launch work and clean-up (the
    composition root adds the one-poller rule and notifications).
    """

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

    app = ensure_app()
    follow_system(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    closed = asyncio.Event()
    # We end the loop ourselves after shutdown work (close connections, flush), not Qt.
    app.setQuitOnLastWindowClosed(False)
    app.lastWindowClosed.connect(closed.set)

    async def main() -> None:
        await host.prepare()
        window = MainWindow(host, info, export_traces=export_traces, layout_file=layout_file)
        if asker is not None:
            asker.set_parent(lambda: window)
        if instance is not None:
            instance.on_focus = window.bring_to_front
        if attach is not None:
            attach(window)
        window.show()
        await window.start()
        work = asyncio.ensure_future(launch_work())
        if on_ready is not None:
            on_ready(window)
        await closed.wait()
        if not work.done():
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
        await window.stop_jobs()
        await clean_up()
        log.info("window closed: monitoring stopped, server connections closed")
        if instance is not None:
            instance.close()

    def quit_like_the_menu() -> None:
        log.info("SIGTERM received: closing the window as Quit does")
        app.closeAllWindows()
        closed.set()

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

    app = ensure_app()
    box = QMessageBox(QMessageBox.Icon.Critical, "Mooring cannot start", message)
    box.setInformativeText(hint)
    box.open()
    box.finished.connect(app.quit)
    app.exec()
