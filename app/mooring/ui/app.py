"""Starting the Qt application on a qasync event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import qasync
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from mooring.core.errors import KnownError
from mooring.services.host import Host
from mooring.settings.paths import APP_ID, APP_NAME
from mooring.ui.dialogs.approval import DialogAsker
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
    QGuiApplication.setDesktopFileName(APP_ID)
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
) -> int:
    """Run the GUI over ``host`` until its last window closes; returns the exit code.

    The window is painted first with the last known state from the database; then launch
    reconciliation runs and the task monitor starts in the background, and the cards catch
    up as the host tells what changed. When the last window closed, the host stops on the
    same loop.
    """

    async def background() -> None:
        # The window is up: reconcile what earlier runs started, then keep watching.
        host.start_monitoring()
        try:
            await host.reconcile()
        except KnownError as exc:
            log.warning("launch reconciliation stopped: %s", exc.message)

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
        window.show()
        await window.start()
        work = asyncio.ensure_future(background())
        if on_ready is not None:
            on_ready(window)
        await closed.wait()
        if not work.done():
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
        await window.stop_jobs()
        await host.stop()
        if instance is not None:
            instance.close()

    with loop:
        loop.run_until_complete(main())
    return 0


def show_fatal(message: str, hint: str) -> None:
    """Tell the user, in a dialog, why the app cannot start (then return)."""
    from PySide6.QtWidgets import QMessageBox

    app = ensure_app()
    box = QMessageBox(QMessageBox.Icon.Critical, "Mooring cannot start", message)
    box.setInformativeText(hint)
    box.open()
    box.finished.connect(app.quit)
    app.exec()
