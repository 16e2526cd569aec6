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

from mooring.settings.paths import APP_ID, APP_NAME
from mooring.ui.main_window import HostOverview, MainWindow

log = logging.getLogger("mooring.ui")


def run_app(
    load: Callable[[], Awaitable[HostOverview]],
    *,
    on_ready: Callable[[MainWindow], None] | None = None,
    background: Callable[[], Awaitable[None]] | None = None,
    shutdown: Callable[[], Awaitable[None]] | None = None,
    subscribe: Callable[[Callable[[], None]], Callable[[], None]] | None = None,
    export_traces: Callable[[Path], Awaitable[int]] | None = None,
) -> int:
    """Run the GUI until its last window closes; returns the exit code.

    ``background`` (launch reconciliation, the task monitor) starts once the window is shown,
    so the window is usable at once; ``subscribe`` registers a callback for "something changed"
    (the window refreshes itself, at most a few times a second); ``shutdown`` runs after the
    last window closed, on the same loop.
    """
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
        window = MainWindow(load, export_traces=export_traces)
        window.show()
        await window.refresh()
        unsubscribe = subscribe(window.schedule_refresh) if subscribe is not None else None
        work = asyncio.ensure_future(background()) if background is not None else None
        if on_ready is not None:
            on_ready(window)
        await closed.wait()
        if unsubscribe is not None:
            unsubscribe()
        if work is not None and not work.done():
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
        if shutdown is not None:
            await shutdown()

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
