"""Starting the Qt application on a qasync event loop.

The window's shell is shown and painted first (:func:`show_shell`: Qt alone, before asyncio,
qasync or anything of the host is imported); then :func:`run_window` starts the loop, loads
the host (the composition root's ``load``, off the GUI thread) and builds and fills the
panels (see ``docs/window.md``, "Start-up").
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QDeadlineTimer, QEventLoop, QSettings, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from mooring.core.errors import KnownError
from mooring.settings.paths import APP_ID, APP_NAME
from mooring.ui.icon import app_icon
from mooring.ui.main_window import MainWindow, WindowInfo, load_panel_modules
from mooring.ui.palette_theme import follow_system, start_theme
from mooring.ui.single_instance import InstanceServer

if TYPE_CHECKING:
    from mooring.core.host_api import HostApi
    from mooring.ui.dialogs.approval import DialogAsker

log = logging.getLogger("mooring.ui")

PAINT_WAIT_MS = 2_000
"""How long start-up waits for the shell's first paint before going on anyway (a window that
is never exposed, e.g. started minimised, must not keep Mooring from starting)."""


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


@dataclass(frozen=True, slots=True)
class Loaded:
    """What the composition root's ``load`` hands the window: the built host and the rest."""

    host: HostApi
    info: WindowInfo
    asker: DialogAsker | None = None
    """The approval prompt given to the host (its dialogs open over the window)."""
    export_traces: Callable[[Path], Awaitable[int]] | None = None


def show_shell(
    *, layout_file: Path | None = None, instance: InstanceServer | None = None
) -> MainWindow:
    """Show the main window's shell (title, menus, each view "loading", the saved geometry,
    the last run's light or dark palette) and return once it was painted.

    No asyncio loop exists yet, so nothing is nested: Qt alone processes the events that
    paint the window (at most :data:`PAINT_WAIT_MS`), and the user's input waits for the
    loop :func:`run_window` starts. A second launch meanwhile brings this window forward.
    """
    app = ensure_app()
    # The palette of the last run: asking the system now would cost more than the window; it
    # is asked right after the paint (run_window), and a changed scheme applies then.
    remembered = QSettings(str(layout_file), QSettings.Format.IniFormat) if layout_file else None
    dark = remembered is not None and str(remembered.value("dark", "false")).lower() == "true"
    start_theme(app, dark_last_time=dark)
    # We end the loop ourselves after shutdown work (close connections, flush), not Qt.
    app.setQuitOnLastWindowClosed(False)
    window = MainWindow(layout_file=layout_file)
    if instance is not None:
        instance.on_focus = window.bring_to_front
    painted: list[bool] = []
    window.first_painted.connect(lambda: painted.append(True))
    window.show()
    deadline = QDeadlineTimer(PAINT_WAIT_MS)
    waker = QTimer()  # wakes the wait below at the deadline, painted or not
    waker.setSingleShot(True)
    waker.start(PAINT_WAIT_MS)
    flags = (
        QEventLoop.ProcessEventsFlag.WaitForMoreEvents
        | QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents
    )
    while not painted and not deadline.hasExpired():
        app.processEvents(flags)
    waker.stop()
    if not painted:
        log.info("the window was not painted within %d ms; loading anyway", PAINT_WAIT_MS)
    return window


def run_window(
    window: MainWindow,
    load: Callable[[], Awaitable[Loaded]],
    *,
    instance: InstanceServer | None = None,
    on_ready: Callable[[MainWindow], None] | None = None,
    attach: Callable[[MainWindow], None] | None = None,
    background: Callable[[], Awaitable[None]],
    shutdown: Callable[[], Awaitable[None]],
) -> int:
    """Run the GUI in ``window`` (its shell, from :func:`show_shell`) until the last window
    closes; returns the exit code.

    ``load`` reaches the engine's host while the panels' modules load on a worker thread.
    Then the panels are built over the host and painted with the last known state;
    ``background`` runs from then on, and the cards catch up as the host tells what changed.
    ``on_ready`` is given the window then (host ready, data shown). When the last window
    closed, ``shutdown`` runs on the same loop.

    ``attach`` is given the window as soon as its host is attached (the notification links
    hook into it). A :class:`KnownError` from ``load`` closes the window and is raised again
    once the loop ended.
    """
    import asyncio
    import contextlib

    from mooring.ui.loop import qt_event_loop

    app = ensure_app()
    follow_system(app)
    loop: Any = qt_event_loop(app)  # qasync's, a context manager too (closed on exit)
    asyncio.set_event_loop(loop)
    closed = asyncio.Event()
    app.setQuitOnLastWindowClosed(False)
    app.lastWindowClosed.connect(closed.set)
    if not window.isVisible():
        closed.set()  # closed before the loop ran (nothing processes input before, but still)
    failed: list[KnownError] = []

    async def main() -> None:
        # A thread cannot be stopped halfway: a window closed while the host loads still
        # waits for it, then cleans up.
        try:
            loaded, _ = await asyncio.gather(load(), asyncio.to_thread(load_panel_modules))
        except KnownError as exc:
            log.error("the window cannot start: %s", exc.message)
            failed.append(exc)
            window.close()
            await window.stop_jobs()
            return
        host = loaded.host

        work: asyncio.Future[None] | None = None
        if not closed.is_set():
            await host.prepare()
            window.attach_host(host, loaded.info, export_traces=loaded.export_traces)
            if loaded.asker is not None:
                loaded.asker.set_parent(lambda: window)
            if attach is not None:
                attach(window)
            await window.start()
            work = asyncio.ensure_future(background())
            if on_ready is not None:
                on_ready(window)
        await closed.wait()
        if work is not None and not work.done():
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
        await window.stop_jobs()
        await shutdown()
        log.info("window closed")
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
    if failed:
        if instance is not None:
            instance.close()
        raise failed[0]
    return 0


def on_sigterm(action: Callable[[], None]) -> Callable[[], None]:
    """Run ``action`` on the Qt loop when SIGTERM arrives (logout, ``kill``); returns a function
    that restores the previous handling.

    Python runs signal handlers only between bytecodes, which a Qt loop idle in C++ never
    reaches: the signal's byte is written to a socket (``signal.set_wakeup_fd``) that a
    ``QSocketNotifier`` watches, so the loop wakes at once without polling.
    """
    import signal
    import socket

    from PySide6.QtCore import QSocketNotifier

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
