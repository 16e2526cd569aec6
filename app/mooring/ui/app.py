"""Starting the Qt application on a qasync event loop."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import qasync
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from mooring.settings.paths import APP_ID, APP_NAME
from mooring.ui.main_window import HostOverview, MainWindow


def run_app(
    load: Callable[[], Awaitable[HostOverview]],
    *,
    on_ready: Callable[[MainWindow], None] | None = None,
    background: Callable[[], Awaitable[None]] | None = None,
    shutdown: Callable[[], Awaitable[None]] | None = None,
    subscribe: Callable[[Callable[[], None]], Callable[[], None]] | None = None,
    export_traces: Callable[[Path], Awaitable[int]] | None = None,
    attach: Callable[[MainWindow], None] | None = None,
) -> int:
    """Run the GUI until its last window closes; returns the exit code.

    ``background`` (launch reconciliation, the task monitor) starts once the window is shown,
    so the window is usable at once; ``subscribe`` registers a callback for "something changed"
    (the window refreshes itself, at most a few times a second); ``shutdown`` runs after the
    last window closed, on the same loop. ``attach`` is given the window as soon as it
    exists (the notification links hook into it).
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

    async def main() -> None:
        window = MainWindow(load, export_traces=export_traces)
        if attach is not None:
            attach(window)
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

    with loop:
        loop.run_until_complete(main())
    return 0


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
