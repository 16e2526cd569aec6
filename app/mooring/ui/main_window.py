"""The main window: a thin view over the host, its panels in the centre.

The centre is a tab per view — Conversations, Tasks, Servers, Issues, Settings — and
:meth:`MainWindow.add_view` adds more. Every panel reads
the host's views and listens to its events; none holds business logic. The window's layout is
saved in the data folder and restored on the next launch.

The window can exist before the host does: ``MainWindow()`` is the *shell* (title, menus, the
views' tabs each holding a "loading" page, the saved geometry), painted while the composition
root opens the database and builds the host; :meth:`MainWindow.attach_host` then builds the
panels in place. This module imports only Qt at load time, the panels' modules when they are
built, so the shell paints about as soon as a bare window does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QGuiApplication,
    QKeyEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QMainWindow,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from mooring.core.results import SHOWN_RESULT_CHARS
from mooring.ui import QT_IMPORTS
from mooring.ui.loading import LoadingPage
from mooring.ui.window_actions import WindowActions
from mooring.ui.window_info import SettingRow, WindowInfo
from mooring.ui.window_layout import WindowLayout

if TYPE_CHECKING:
    from mooring.core.host_api import HostApi
    from mooring.core.notifications import OpenTarget
    from mooring.core.servers import ServerDefinition
    from mooring.ui.dialogs.palette import ToolPalette
    from mooring.ui.dialogs.welcome import WelcomeDialog
    from mooring.ui.notifiers import Toast
    from mooring.ui.qt_async import Jobs
    from mooring.ui.views.conversations_view import ConversationsView
    from mooring.ui.views.issues_panel import IssuesPanel
    from mooring.ui.views.servers_panel import ServersPanel
    from mooring.ui.views.settings_view import SettingsView
    from mooring.ui.views.tasks_panel import TasksPanel

__all__ = ["MainWindow", "SettingRow", "WindowInfo", "load_panel_modules"]

VIEWS = (
    ("conversations", "&Conversations", "Conversations"),
    ("tasks", "&Tasks", "Tasks"),
    ("servers", "&Servers", "Servers"),
    ("issues", "&Issues", "Issues"),
    ("settings", "Se&ttings", "Settings"),
)
"""The views in tab order: key, tab title, what the loading page names."""
VIEW_KEYS = ("Ctrl+0", "Ctrl+1", "Ctrl+2", "Ctrl+3", "Ctrl+,")
"""The View menu's shortcuts, in the same order."""


def load_panel_modules() -> None:
    """Import what :meth:`MainWindow.attach_host` builds (the composition root runs this on a
    worker thread while the shell is on screen; creating the widgets stays on the GUI thread).
    Under :data:`~mooring.ui.QT_IMPORTS`: another loading thread imports Qt modules too."""
    with QT_IMPORTS:
        import mooring.ui.dialogs.palette
        import mooring.ui.dialogs.welcome
        import mooring.ui.notifiers
        import mooring.ui.views.conversations_view
        import mooring.ui.views.issues_panel
        import mooring.ui.views.servers_panel
        import mooring.ui.views.settings_view
        import mooring.ui.views.tasks_panel  # noqa: F401


class MainWindow(QMainWindow):
    """Mooring's top-level window."""

    first_painted = Signal()
    """The window was painted for the first time (the shell, when it came before the host)."""
    shown = Signal()
    """The last known state is on screen (emitted once, after :meth:`start`)."""
    palette_opened = Signal(object)
    """A tool palette opened (tests and probes drive it)."""
    activity_changed = Signal(bool)
    """The window became the active one, or stopped being it (the engine's notifications
    wait while it is, as the user chose)."""
    hidden_to_tray = Signal()
    """The window was closed but Mooring keeps running in the tray (polling, notifying)."""
    welcome_opened = Signal(object)
    """The first-run welcome is on screen (the dialog)."""
    target_opened = Signal(object, object)
    """A notification was clicked: ``(conversation id, record id)``, either may be ``None``
    (the conversation view opens the conversation; the Tasks panel selects the task)."""

    def __init__(
        self,
        host: HostApi | None = None,
        info: WindowInfo | None = None,
        *,
        export_traces: Callable[[Path], Awaitable[int]] | None = None,
        layout_file: Path | None = None,
    ) -> None:
        """The window over ``host``; without one, the shell (see :meth:`attach_host`)."""
        super().__init__()
        self.saved_layout = WindowLayout(self, layout_file)
        """Where the window's layout is kept between launches."""
        self._fit_when_shown = False
        self._quitting = False
        self._painted = False
        self._attached = False
        self.welcome: WelcomeDialog | None = None
        self.keep_running: Callable[[], bool] = lambda: False
        """Whether closing the window keeps Mooring running in the tray (the composition root
        sets it from the setting and the tray's availability)."""
        self.setWindowTitle("Mooring")
        self.setObjectName("mooring-main-window")
        self.setAccessibleName("Mooring")
        self.resize(1000, 660)

        central = QWidget(self)
        self._column = QVBoxLayout(central)
        self._column.setContentsMargins(0, 0, 0, 0)
        self.tabs = QTabWidget(central)
        self.tabs.setObjectName("main-tabs")
        self.tabs.setAccessibleName("Views")
        self.tabs.setDocumentMode(True)
        self._pages: dict[str, QWidget] = {}
        for key, title, words in VIEWS:
            page = LoadingPage(words, self.tabs)
            self._pages[key] = page
            self.tabs.addTab(page, title)
        self._column.addWidget(self.tabs, stretch=1)
        self.setCentralWidget(central)
        self.statusBar().showMessage("Loading…")

        self.menu_actions = WindowActions(
            self,
            [(words, keys) for (_key, _title, words), keys in zip(VIEWS, VIEW_KEYS, strict=True)],
            lambda number: self.show_view(self._pages[VIEWS[number][0]]),
        )
        # The commands reached through the window (its tests and probes use them).
        self.new_conversation_action = self.menu_actions.new_conversation
        self.palette_action = self.menu_actions.palette
        self.export_action = self.menu_actions.export_traces
        self.copy_reply_action = self.menu_actions.copy_reply
        self.shortcuts_action = self.menu_actions.shortcuts
        self.first_painted.connect(self.menu_actions.bind_shortcuts)
        self._fit_when_shown = self.saved_layout.restore()
        if host is not None:
            self.attach_host(host, info or WindowInfo("", "", ""), export_traces=export_traces)

    @property
    def attached(self) -> bool:
        """Whether the host is attached (the panels exist); ``False`` for the shell."""
        return self._attached

    def attach_host(
        self,
        host: HostApi,
        info: WindowInfo,
        *,
        export_traces: Callable[[Path], Awaitable[int]] | None = None,
    ) -> None:
        """Build the panels over ``host`` in place of the loading pages (once); the data is
        read by :meth:`start`."""
        from mooring.ui.notifiers import Toast
        from mooring.ui.qt_async import Jobs
        from mooring.ui.views.conversations_view import ConversationsView
        from mooring.ui.views.issues_panel import IssuesPanel
        from mooring.ui.views.servers_panel import ServersPanel
        from mooring.ui.views.settings_view import SettingsView
        from mooring.ui.views.tasks_panel import TasksPanel

        if self._attached:
            raise RuntimeError("the window already has its host")
        self._attached = True
        self.menu_actions.bind_shortcuts()
        self.jobs: Jobs = Jobs(self.say)
        self.host = host
        self.info = info
        self._export_traces = export_traces
        central = self.centralWidget()
        self.toast: Toast = Toast(central)
        self.toast.opened.connect(self.open_target)
        self.toast.badge_changed.connect(self._show_badge)
        self._column.insertWidget(0, self.toast)
        editor = info.editor if info is not None else None
        self.conversations: ConversationsView = ConversationsView(
            host,
            self.tabs,
            default_system_prompt=(
                (lambda: str(editor.get("chat.system_prompt"))) if editor else (lambda: "")
            ),
        )
        self.tasks: TasksPanel = TasksPanel(host, self.tabs)
        self.servers: ServersPanel = ServersPanel(host, self.tabs)
        self.issues: IssuesPanel = IssuesPanel(host, self.tabs)
        self.settings: SettingsView = SettingsView(info, self.tabs, host=host)
        current = self.tabs.currentIndex()
        panels: dict[str, QWidget] = {
            "conversations": self.conversations,
            "tasks": self.tasks,
            "servers": self.servers,
            "issues": self.issues,
            "settings": self.settings,
        }
        for key, panel in panels.items():
            page = self._pages[key]
            index = self.tabs.indexOf(page)
            title = self.tabs.tabText(index)
            self.tabs.removeTab(index)
            self.tabs.insertTab(index, panel, title)
            page.deleteLater()
            self._pages[key] = panel
        self.tabs.setCurrentIndex(current)
        for panel in (self.conversations, self.tasks, self.servers, self.issues, self.settings):
            panel.report.connect(self.say)
        self.issues.count_changed.connect(self._on_issue_count)
        self.issues.show_task.connect(self.show_task)
        self.conversations.show_task.connect(self.show_task)
        self.conversations.remedy_requested.connect(self._do_remedy)
        self.settings.assistants_requested.connect(self.conversations.starter.manage)
        self.tasks.open_conversation.connect(self.show_conversation)
        self.tasks.continue_conversation.connect(
            lambda c: self.show_conversation(c, then_continue=True)
        )
        self.issues.show_server.connect(self.show_server)
        self.issues.sign_in_requested.connect(lambda s: self.jobs.start(self.sign_in_for(s)))
        self.tasks.sign_in_requested.connect(lambda s: self.jobs.start(self.sign_in_for(s)))
        self.settings.export_button.clicked.connect(self.ask_export_traces)
        self.settings.export_button.setEnabled(export_traces is not None)
        self.menu_actions.enable_host(traces=export_traces is not None)
        self.saved_layout.restore_panels()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # Qt API
        """Enter presses the focused button, as Space does.

        Qt gives Enter to a button only in a dialog (its default and auto-default buttons);
        elsewhere the button leaves the key unused and it comes up to the window, which presses
        the button here. Widgets that use Enter themselves (the composer sends, a list opens
        its item) keep it, and dialogs are windows of their own, so their Enter never comes
        here: a button is never pressed twice."""
        focused = QApplication.focusWidget()
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and (event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier)
            == Qt.KeyboardModifier.NoModifier
            and not event.isAutoRepeat()
            and isinstance(focused, QPushButton)
            and focused.window() is self
            and focused.isEnabled()
        ):
            focused.click()
            event.accept()
            return
        super().keyPressEvent(event)

    def event(self, event: QEvent) -> bool:  # Qt API
        """The first paint is announced (:attr:`first_painted`) on the loop turn after it."""
        if not self._painted and event.type() == QEvent.Type.Paint:
            self._painted = True
            QTimer.singleShot(0, self.first_painted.emit)
        return super().event(event)

    # -- views ---------------------------------------------------------------------------------

    def add_view(self, widget: QWidget, title: str, *, first: bool = False) -> None:
        """Add a view to the centre."""
        if first:
            self.tabs.insertTab(0, widget, title)
        else:
            self.tabs.addTab(widget, title)

    def _do_remedy(self, remedy: str, subject: str) -> None:
        """Do in the window what a notice's remedy says: open Settings, and for a provider's
        key or model its edit dialog."""
        from mooring.core.errors import Remedy

        self.show_view(self.settings)
        if remedy in (Remedy.PROVIDER_KEY.value, Remedy.PROVIDER_MODEL.value):
            self.settings.edit_provider_named(subject)

    def show_view(self, widget: QWidget) -> None:
        """Bring a view to the front and focus it."""
        self.tabs.setCurrentWidget(widget)
        widget.setFocus()

    def new_conversation(self) -> None:
        """Start a new conversation in the Conversations view, the composer focused (Ctrl+N)."""
        self.show_view(self.conversations)
        self.conversations.jobs.start(self.conversations.new_conversation())

    def copy_last_reply(self) -> None:
        """Put the shown conversation's last reply on the clipboard (Ctrl+Shift+C)."""
        self.conversations.copy_last_reply()

    def find_conversations(self) -> None:
        """Search the conversations: the search field focused, what it holds selected
        (Ctrl+Shift+F)."""
        self.show_view(self.conversations)
        self.conversations.search_field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.conversations.search_field.selectAll()

    def show_task(self, record_id: str) -> None:
        """Show one task's card in the Tasks panel."""
        self.show_view(self.tasks)
        if not self.tasks.select(record_id):
            self.jobs.start(self._load_and_select(record_id))

    async def _load_and_select(self, record_id: str) -> None:
        record = await self.host.record(record_id)
        if record is None:
            self.say("That task is no longer in the ledger.")
            return
        self.tasks.model.upsert(await self.host.task_view(record, result_limit=SHOWN_RESULT_CHARS))
        self.tasks.select(record_id)

    def show_conversation(self, conversation_id: str, *, then_continue: bool = False) -> None:
        """Show a conversation (and, ``then_continue``, give it its task results)."""
        self.show_view(self.conversations)
        view = self.conversations
        if then_continue:
            view.jobs.start(view.continue_with_result(conversation_id))
        else:
            view.jobs.start(view.show_conversation(conversation_id))

    def show_server(self, server_id: str) -> None:
        """Show one server in the Servers panel."""
        self.show_view(self.servers)
        self.servers.select_server(server_id)

    async def sign_in_for(self, subject: str) -> None:
        """Sign in the account a task (by record id) or a server (by id) needs: the Servers
        panel shows the server and its accounts, and the browser opens."""
        record = await self.host.record(subject)
        server_id = record.server_id if record is not None else subject
        profile_id = record.credential_profile_id if record is not None else None
        server = await self.host.server_by_id(server_id)
        if server is None:
            self.say("That server is no longer configured.")
            return
        account = next(
            (
                a
                for a in await self.host.account_desk.accounts(server.alias)
                if a.profile_id == profile_id
            ),
            None,
        )
        if account is None:
            self.say("The account of that task was removed; its task cannot sign in again.")
            return
        self.show_view(self.servers)
        self.servers.select_server(server.id)
        await self.servers.sign_in(server.alias, account)

    def _on_issue_count(self, count: int) -> None:
        self.tabs.setTabText(
            self.tabs.indexOf(self.issues), f"&Issues ({count})" if count else "&Issues"
        )

    def say(self, text: str) -> None:
        """A short message in the status bar."""
        self.statusBar().showMessage(text, 15_000)

    async def start(self) -> None:
        """Show the last known state: tasks, servers and issues from the database (no server
        is asked; reconciliation catches up afterwards). The host must be attached."""
        await self.conversations.load()
        self.conversations.open_latest()
        await self.tasks.feed.load()
        await self.servers.load()
        await self.issues.load()
        await self.settings.load()
        self.statusBar().showMessage("Ready")
        self.shown.emit()

    # -- the tool palette ----------------------------------------------------------------------

    def open_palette(self) -> ToolPalette:
        """Open the tool palette (Ctrl+K)."""
        from PySide6.QtCore import Qt

        from mooring.ui.dialogs.palette import ToolPalette

        palette = ToolPalette(self.host, self)
        palette.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        palette.run_requested.connect(self._on_run_requested)
        palette.open()
        self.jobs.start(palette.load())
        self.palette_opened.emit(palette)
        return palette

    def _on_run_requested(self, server: Any, tool: str, arguments: Any) -> None:
        from mooring.core.servers import ServerDefinition

        assert isinstance(server, ServerDefinition)
        self.jobs.start(self.run_tool(server, tool, dict(arguments)))

    async def run_tool(
        self, server: ServerDefinition, tool: str, arguments: dict[str, Any]
    ) -> None:
        """Run one tool call through the host (approval first); its card shows the rest."""
        from mooring.ui.text import inert

        self.show_view(self.tasks)
        self.say(f"Running {inert(tool, limit=80)} on {inert(server.alias, limit=80)}…")

        def persisted(record: Any) -> None:
            self.tasks.feed.refresh(record)
            self.tasks.select(record.id)

        record = await self.host.call(server, tool, arguments, on_persisted=persisted)
        self.tasks.feed.refresh(record)
        self.tasks.select(record.id)

    # -- the first-run welcome -------------------------------------------------------------------

    def show_welcome(self) -> WelcomeDialog:
        """Show the welcome beside the window (not modal; Esc closes it)."""
        from mooring.ui.dialogs.welcome import WelcomeDialog

        dialog = WelcomeDialog(self)
        self.welcome = dialog
        dialog.finished.connect(lambda _result: setattr(self, "welcome", None))
        dialog.import_requested.connect(
            lambda: self.jobs.start(self._import_found(list(dialog.previews)))
        )
        dialog.sample_requested.connect(lambda: self.jobs.start(self.run_sample_import()))
        dialog.providers_requested.connect(lambda: self.show_view(self.settings))
        dialog.local_requested.connect(self._add_local_model)
        dialog.show()
        self.jobs.start(self._fill_welcome(dialog))
        self.welcome_opened.emit(dialog)
        return dialog

    def _add_local_model(self) -> None:
        """Settings, with the add-provider dialog open on a local model file."""
        from mooring.core.chat import ProviderKind

        self.show_view(self.settings)
        self.jobs.start(self.settings.add_provider_interactively(ProviderKind.LOCAL))

    async def _fill_welcome(self, dialog: WelcomeDialog) -> None:
        previews = await self.host.server_desk.find_configs()
        bundled = await self.host.bundled_server()
        if self.welcome is dialog:
            dialog.show_found(previews)
            dialog.set_sample_available(bundled is not None)
            dialog.is_filled = True
            dialog.filled.emit()

    async def import_servers(self) -> None:
        """Import servers from another app's configuration file (the Servers view asks)."""
        self.show_view(self.servers)
        await self.servers.import_interactively()

    async def _import_found(self, previews: list[Any]) -> None:
        self.show_view(self.servers)
        await self.servers.import_from(previews)

    async def run_sample_import(self) -> None:
        """Run the sample import on the bundled demo server; its card shows the rest."""
        self.show_view(self.tasks)
        self.say("Importing the sample suppliers on the bundled demo server…")

        def persisted(record: Any) -> None:
            self.tasks.feed.refresh(record)
            self.tasks.select(record.id)

        record = await self.host.run_sample_import(on_persisted=persisted)
        self.tasks.feed.refresh(record)
        self.tasks.select(record.id)

    # -- traces --------------------------------------------------------------------------------

    def ask_export_traces(self) -> None:
        """Ask where to write the traces, then write them (:meth:`export_traces_to`)."""
        dialog = QFileDialog(self, "Export traces", "mooring-traces.jsonl", "OTLP JSON (*.jsonl)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.fileSelected.connect(lambda name: self.jobs.start(self.export_traces_to(Path(name))))
        dialog.open()  # never exec(): the event loop keeps running
        self._dialog = dialog

    async def export_traces_to(self, path: Path) -> None:
        """Write the traces (OTLP/JSON lines) to ``path`` and say how many spans went."""
        if self._export_traces is None:
            return
        try:
            spans = await self._export_traces(path)
        except OSError as exc:
            self.say(f"Could not export traces: {exc.strerror}")
        else:
            self.say(f"Wrote {spans} span(s) to {path}")

    # -- layout --------------------------------------------------------------------------------

    def fit_to_screen(self) -> None:
        """Keep the whole window, frame included, within the available area of its screen
        (without the task bar): a size larger than that area is cut to it, and the window
        moved onto it. A maximised or full-screen window is the window system's to place."""
        if self.isMaximized() or self.isFullScreen():
            return
        frame = self.frameGeometry()
        # The screen the window is on (the primary one when it is on none).
        screen = QGuiApplication.screenAt(frame.center()) or self.screen()
        area = screen.availableGeometry()
        inner = self.geometry()
        # The frame around the window (none known before it is first shown).
        extra_width = frame.width() - inner.width()
        extra_height = frame.height() - inner.height()
        width = max(min(inner.width(), area.width() - extra_width), self.minimumWidth())
        height = max(min(inner.height(), area.height() - extra_height), self.minimumHeight())
        if (width, height) != (inner.width(), inner.height()):
            self.resize(width, height)
        # A window's position is its frame's: keep the frame's top-left corner (and with it
        # the title bar) on the area, and as much of the rest as fits.
        x = max(min(frame.x(), area.x() + area.width() - width - extra_width), area.x())
        y = max(min(frame.y(), area.y() + area.height() - height - extra_height), area.y())
        if (x, y) != (frame.x(), frame.y()):
            self.move(x, y)

    def showEvent(self, event: QShowEvent) -> None:  # Qt API
        """A restored geometry is fitted to the screen again on the first show, now that the
        window's frame is known."""
        super().showEvent(event)
        if self._fit_when_shown:
            self._fit_when_shown = False
            self.fit_to_screen()

    # -- notifications -----------------------------------------------------------------------

    def open_target(self, target: OpenTarget | None) -> None:
        """Raise the window and show what a notification was about (its task selected)."""
        self.bring_to_front()
        self.toast.clear_badge()
        if target is None:
            self.target_opened.emit(None, None)
            return
        if target.record_id is not None:
            self.show_task(target.record_id)
        elif target.conversation_id is not None:
            self.show_view(self.conversations)
            self.conversations.select(target.conversation_id)
        self.target_opened.emit(target.conversation_id, target.record_id)

    def select_task(self, record_id: str) -> bool:
        """Choose a task in the Tasks panel (``False`` if it is not listed)."""
        return self.tasks.select(record_id)

    def _show_badge(self, unseen: int) -> None:
        title = f"&Tasks ({unseen} new)" if unseen else "&Tasks"
        self.tabs.setTabText(self.tabs.indexOf(self.tasks), title)

    def quit(self) -> None:
        """Close for real (File → Quit, the tray's Quit), whatever closing usually does."""
        self._quitting = True
        self.close()

    def changeEvent(self, event: QEvent) -> None:  # Qt API
        """Looking at the window clears the badge."""
        if event.type() == QEvent.Type.ActivationChange:
            active = self.isActiveWindow()
            if active and self._attached:
                self.toast.clear_badge()
            self.activity_changed.emit(active)
        super().changeEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:  # Qt API
        """Closing hides the window into the tray when Mooring keeps running there; otherwise
        the layout is saved and the panels stop listening."""
        if not self._quitting and self.keep_running():
            event.ignore()
            self.hide()
            self.hidden_to_tray.emit()
            return
        if self.welcome is not None:
            self.welcome.close()
        self.saved_layout.save()
        if self._attached:
            self.tasks.feed.close()
            self.conversations.close_view()
            self.servers.close_panel()
            self.issues.close_panel()
        super().closeEvent(event)

    async def stop_jobs(self) -> None:
        """End the work the window's panels started (the window is closing)."""
        if not self._attached:
            return
        await self.jobs.cancel_all()
        await self.tasks.jobs.cancel_all()
        await self.tasks.feed.stop()
        await self.conversations.stop()
        await self.servers.stop()
        await self.issues.stop()
        await self.settings.stop()

    def bring_to_front(self) -> None:
        """Show the window above the others (a second launch asked for it)."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()
