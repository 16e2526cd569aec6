"""The window's life: one window per data folder, a face of the data folder's engine.

:class:`WindowLife` claims the data folder's window (a second launch brings the first to the
front), paints the shell, connects to the engine (starting it when none runs) and builds the
panels over the engine's host, wires the tray and the notification hooks the engine calls,
shows the first-run welcome, and at the end closes the link. The engine goes on without the
window: it follows every unfinished task and ends by itself once it has nothing to do.

The window never runs the host itself: every call goes to the engine (another process), so no
server's reply is parsed on the GUI thread. If the engine goes away, the window says so and
connects again (the engine starts anew, reconciles its tasks, and the window reads them).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mooring.core.errors import KnownError
from mooring.core.events import EngineDidStop, stopped_words
from mooring.core.faces import Askers
from mooring.ui.text import inert

if TYPE_CHECKING:
    from mooring.core.host_api import HostApi
    from mooring.core.notifications import Notice, OpenTarget
    from mooring.settings.store import Settings
    from mooring.ui.collector import FullPassesBetweenBursts
    from mooring.ui.crash import CrashReporter
    from mooring.ui.dialogs.approval import DialogAsker
    from mooring.ui.main_window import MainWindow, WindowInfo
    from mooring.ui.notifiers import TrayNotifier

log = logging.getLogger("mooring.ui")

RECONNECT_DELAYS_S = (0.5, 1.0, 2.0, 5.0, 10.0)
"""How long the window waits before each new try to reach a lost engine (the last repeats)."""


@dataclass(frozen=True, slots=True)
class Connected:
    """The window's connection to its engine."""

    host: HostApi
    """The engine's host (calls cross to the engine)."""
    info: WindowInfo
    engine: Callable[..., Awaitable[Any]]
    """Calls one of the engine's own methods by name (``"face_active"``, ``"export_traces"``)."""
    close: Callable[[], Awaitable[None]]
    on_lost: list[Callable[[str], None]]
    """Called with the reason when the engine goes away."""
    reconnect: Callable[[], Awaitable[None]]
    """Reach the engine again (started anew if need be); the same ``host`` calls it then."""


Connect = Callable[[Askers, dict[str, Callable[..., Any]]], Awaitable[Connected]]
"""Reach (or start) the engine as the window face, with the window's askers and hooks."""


class WindowLife:
    """Runs the window of one data folder from its launch to its end."""

    def __init__(
        self,
        *,
        data_dir: Path,
        log_file: Path,
        layout_file: Path,
        settings: Settings,
        remember: Callable[[dict[str, object]], None],
        connect: Connect,
        on_ready: Callable[[MainWindow], None] | None = None,
    ) -> None:
        self._data_dir = data_dir
        self._log_file = log_file
        self._crash: CrashReporter | None = None
        self._layout_file = layout_file
        self._settings = settings
        self._remember = remember
        self._connect = connect
        self._on_ready = on_ready
        self._connected: Connected | None = None
        self._window: MainWindow | None = None
        self._asker: DialogAsker | None = None
        self._tray: TrayNotifier | None = None
        self._collector: FullPassesBetweenBursts | None = None
        self._jobs: set[asyncio.Future[Any]] = set()
        self._saving: set[asyncio.Future[Any]] = set()  # finished at close, never cut short
        self._reconnecting: asyncio.Future[None] | None = None
        self._stopped_box: Any = None

    def run(self) -> int:
        """Run the window until it closes; the exit code."""
        from mooring.ui.app import ensure_app, run_window, show_fatal, show_shell
        from mooring.ui.crash import CrashReporter
        from mooring.ui.single_instance import claim

        ensure_app()
        self._crash = CrashReporter(self._log_file, lambda: self._window)
        self._crash.install()  # for the process's life: it ends with the window
        instance = claim(self._data_dir)
        if instance is None:
            log.info("a window runs already on %s; brought it to the front", self._data_dir)
            sys.stderr.write(
                "mooring: already running on this data folder; switched to its window.\n"
            )
            return 0
        shell = show_shell(layout_file=self._layout_file, instance=instance)
        try:
            return run_window(
                shell,
                self._load,
                instance=instance,
                on_ready=self._on_ready,
                attach=self._attach,
                background=self._background,
                shutdown=self._shutdown,
            )
        except KnownError as exc:  # the engine could not start (a database it cannot open)
            log.error("the window cannot start: %s", exc.message)
            from mooring.ui.remedies import remedy_words

            advice = " ".join(p for p in (exc.hint, remedy_words(exc.remedy, exc.subject)) if p)
            sys.stderr.write(f"mooring: {exc.message}\n  {advice}".rstrip() + "\n")
            show_fatal(exc.message, advice)
            return 2

    # -- the steps run_window takes ---------------------------------------------------------

    async def _load(self) -> Any:
        from mooring.ui.app import Loaded
        from mooring.ui.dialogs.approval import DialogAsker

        if self._crash is not None:
            self._crash.watch(asyncio.get_running_loop())
        self._asker = DialogAsker()
        hooks: dict[str, Callable[..., Any]] = {
            "notice": self._show_notice,
            "open": self._open,
            "consent": self._consent,
        }
        connected = await self._connect(Askers(approval=self._asker), hooks)
        self._connected = connected
        connected.on_lost.append(self._lost)
        connected.host.events.on(EngineDidStop, self._engine_stopped)
        return Loaded(connected.host, connected.info, self._asker, self._export_traces)

    def _attach(self, window: MainWindow) -> None:
        from mooring.ui.collector import FullPassesBetweenBursts
        from mooring.ui.notifiers import TrayNotifier, tray_icon

        self._window = window
        self._collector = FullPassesBetweenBursts(parent=window)
        self._collector.start()
        tray = self._tray = TrayNotifier(tray_icon(window), window)
        tray.opened.connect(window.open_target)
        tray.quit_requested.connect(window.quit)
        window.keep_running = self._keeps_running
        if window.keep_running():
            tray.ensure_icon()  # Quit is one click away from the start
        window.hidden_to_tray.connect(self._hidden_to_tray)
        window.activity_changed.connect(self._activity_changed)
        if not self._settings.get("window.welcome_shown"):
            window.shown.connect(self._welcome_once)

    async def _background(self) -> None:
        """The engine reconciles and follows the tasks: the window only says it is active."""
        if self._window is not None:
            self._activity_changed(self._window.isActiveWindow())

    async def _shutdown(self) -> None:
        if self._collector is not None:
            self._collector.stop()  # the window is gone: CPython's own rule from here on
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        if self._saving:  # a choice the user made (the welcome seen) outlives the window
            await asyncio.gather(*self._saving, return_exceptions=True)
        for job in list(self._jobs):
            job.cancel()
        if self._connected is not None:
            await self._connected.close()

    # -- what the engine calls -----------------------------------------------------------------

    async def _show_notice(self, notice: Notice) -> bool:
        if self._tray is not None and self._tray.show_notice(notice):
            return True
        return self._window is not None and self._window.toast.show_notice(notice)

    def _open(self, target: OpenTarget | None) -> None:
        if self._window is not None:
            self._window.open_target(target)

    async def _consent(self) -> bool:
        from mooring.core.notifications import consent_changes
        from mooring.ui.notifiers import ask_notification_consent

        if self._window is None:
            return False
        allowed = await ask_notification_consent(self._window)
        try:
            await asyncio.to_thread(self._remember, consent_changes(allowed))
        except OSError as exc:
            log.warning("could not save the notification choice: %s", exc)
        return allowed

    async def _export_traces(self, target: Path) -> int:
        assert self._connected is not None
        return int(await self._connected.engine("export_traces", str(target)))

    # -- the window ----------------------------------------------------------------------------

    def _keeps_running(self) -> bool:
        return bool(self._settings.get("window.close_to_tray")) and (
            self._tray is not None and self._tray.available
        )

    def _hidden_to_tray(self) -> None:
        from mooring.ui.notifiers import STILL_RUNNING

        if self._settings.get("window.close_to_tray_explained"):
            return
        if self._tray is not None and self._tray.explain(STILL_RUNNING):
            self._save({"window.close_to_tray_explained": True})

    def _welcome_once(self) -> None:
        # The first launch on this data folder: the welcome, once (remembered at once).
        if self._settings.get("window.welcome_shown") or self._window is None:
            return
        self._window.show_welcome()
        self._save({"window.welcome_shown": True})

    def _activity_changed(self, active: bool) -> None:
        if self._connected is not None:
            self._start(self._connected.engine("face_active", active))

    def _save(self, changes: dict[str, object]) -> None:
        saving = asyncio.ensure_future(asyncio.to_thread(self._remember, changes))
        self._saving.add(saving)
        saving.add_done_callback(self._saving.discard)
        saving.add_done_callback(self._done)

    def _start(self, work: Awaitable[Any]) -> None:
        job = asyncio.ensure_future(work)
        self._jobs.add(job)
        job.add_done_callback(self._done)

    def _done(self, job: asyncio.Future[Any]) -> None:
        self._jobs.discard(job)
        if not job.cancelled() and job.exception() is not None:
            log.warning("window job failed: %s", job.exception())

    # -- losing the engine ---------------------------------------------------------------------

    def _engine_stopped(self, event: EngineDidStop) -> None:
        """The engine stopped for a reason the user must hear (its database file is gone): a
        message that stays until read, not a status line."""
        from PySide6.QtWidgets import QMessageBox

        if self._window is None:
            return
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Mooring's engine stopped",
            inert(stopped_words(event), limit=600),
            parent=self._window,
        )
        box.setObjectName("engine-stopped")
        box.setAccessibleName("Mooring's engine stopped")
        box.open()  # never exec(): the loop keeps running
        self._stopped_box = box

    def _lost(self, reason: str) -> None:
        if self._window is not None:
            self._window.say(f"Mooring's engine stopped ({reason}); starting it again…")
        if self._reconnecting is None or self._reconnecting.done():
            self._reconnecting = asyncio.ensure_future(self._reconnect())

    async def _reconnect(self) -> None:
        assert self._connected is not None
        for attempt in range(1_000_000):
            delay = RECONNECT_DELAYS_S[min(attempt, len(RECONNECT_DELAYS_S) - 1)]
            await asyncio.sleep(delay)
            try:
                await self._connected.reconnect()
            except KnownError as exc:
                log.warning("the engine cannot be reached again yet: %s", exc.message)
                if self._window is not None:
                    self._window.say(f"Mooring's engine cannot start: {exc.message}")
                continue
            break
        if self._window is not None:
            await self._window.start()  # everything as the engine has it now
            self._activity_changed(self._window.isActiveWindow())
