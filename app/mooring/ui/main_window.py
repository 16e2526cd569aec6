"""The main window. For now a status window: where the data is, the database, the servers.

It is a real window over real state; the chat and task views replace its centre later.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from mooring.core.issues import Issue
from mooring.core.notifications import OpenTarget
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.states import LocalState
from mooring.core.text import neutralize
from mooring.ui.notifiers import Toast


@dataclass(frozen=True, slots=True)
class HostOverview:
    """What the status window shows; built by the composition root from the services."""

    data_dir: str
    database: str
    schema: str
    servers: list[ServerDefinition] = field(default_factory=list)
    task_counts: dict[LocalState, int] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    tasks: list[TaskRow] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TaskRow:
    """One task as the window lists it (the text is already in words)."""

    operation: str
    tool: str
    server: str
    state: str
    detail: str
    record_id: str = ""
    """The full local id (a notification's click selects the task by it)."""


SERVER_COLUMNS = ("Name", "Transport", "Command or URL", "Trusted")
TASK_COLUMNS = ("Operation", "Tool", "Server", "State", "Detail")
TASKS_TITLE = "Recent tasks"


class MainWindow(QMainWindow):
    """Mooring's top-level window."""

    overview_shown = Signal()
    """Emitted after every overview is on screen (tests and tools wait on it)."""
    hidden_to_tray = Signal()
    """The window was closed but Mooring keeps running in the tray (polling, notifying)."""
    target_opened = Signal(object, object)
    """A notification was clicked: ``(conversation id, record id)``, either may be ``None``
    (the conversation view opens the conversation; the tasks table selects the task)."""

    def __init__(
        self,
        load: Callable[[], Awaitable[HostOverview]],
        *,
        export_traces: Callable[[Path], Awaitable[int]] | None = None,
    ) -> None:
        super().__init__()
        self._load = load
        self._export_traces = export_traces
        self._pending: set[asyncio.Future[None]] = set()
        self._task_rows: list[TaskRow] = []
        self._quitting = False
        self.keep_running: Callable[[], bool] = lambda: False
        """Whether closing the window keeps Mooring running in the tray (the composition root
        sets it from the setting and the tray's availability)."""
        self.setWindowTitle("Mooring")
        self.setObjectName("mooring-main-window")
        self.resize(880, 560)

        central = QWidget(self)
        layout = QVBoxLayout(central)

        where = QGroupBox("Where your data lives", central)
        form = QFormLayout(where)
        self.data_dir_label = QLabel(where)
        self.database_label = QLabel(where)
        self.schema_label = QLabel(where)
        self.tasks_label = QLabel(where)
        for label in (self.data_dir_label, self.database_label):
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Data folder:", self.data_dir_label)
        form.addRow("Database:", self.database_label)
        form.addRow("Schema:", self.schema_label)
        form.addRow("Tasks:", self.tasks_label)
        layout.addWidget(where)

        servers_box = QGroupBox("MCP servers", central)
        servers_layout = QVBoxLayout(servers_box)
        self.servers_table = QTableWidget(0, len(SERVER_COLUMNS), servers_box)
        self.servers_table.setObjectName("servers-table")
        self.servers_table.setHorizontalHeaderLabels(SERVER_COLUMNS)
        self.servers_table.verticalHeader().setVisible(False)
        self.servers_table.horizontalHeader().setSectionResizeMode(
            2, QHeaderView.ResizeMode.Stretch
        )
        self.servers_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        servers_layout.addWidget(self.servers_table)
        layout.addWidget(servers_box, stretch=1)

        self.toast = Toast(central)
        self.toast.opened.connect(self.open_target)
        self.toast.badge_changed.connect(self._show_badge)
        layout.addWidget(self.toast)

        tasks_box = QGroupBox(TASKS_TITLE, central)
        self.tasks_box = tasks_box
        tasks_box.setAccessibleName("Tasks")
        tasks_layout = QVBoxLayout(tasks_box)
        self.tasks_table = QTableWidget(0, len(TASK_COLUMNS), tasks_box)
        self.tasks_table.setObjectName("tasks-table")
        self.tasks_table.setHorizontalHeaderLabels(TASK_COLUMNS)
        self.tasks_table.verticalHeader().setVisible(False)
        self.tasks_table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.tasks_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        tasks_layout.addWidget(self.tasks_table)
        layout.addWidget(tasks_box, stretch=2)

        self.issues_label = QLabel(central)
        self.issues_label.setTextFormat(Qt.TextFormat.PlainText)  # titles quote servers
        self.issues_label.setWordWrap(True)
        layout.addWidget(self.issues_label)

        self.refresh_button = QPushButton("Refresh", central)
        self.refresh_button.clicked.connect(self._on_refresh_clicked)
        layout.addWidget(self.refresh_button, alignment=Qt.AlignmentFlag.AlignRight)

        self.setCentralWidget(central)
        self.statusBar().showMessage("Loading…")
        file_menu = self.menuBar().addMenu("&File")
        self.export_action = QAction("Export traces…", self)
        self.export_action.setEnabled(export_traces is not None)
        self.export_action.triggered.connect(self._on_export_clicked)
        file_menu.addAction(self.export_action)
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.quit)
        file_menu.addAction(quit_action)
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(250)
        self._refresh_timer.timeout.connect(self._on_refresh_clicked)

    # -- notifications -----------------------------------------------------------------------

    def open_target(self, target: OpenTarget | None) -> None:
        """Raise the window and show what a notification was about (its task selected)."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()
        self.toast.clear_badge()
        if target is None:
            self.target_opened.emit(None, None)
            return
        if target.record_id is not None:
            self.select_task(target.record_id)
        self.target_opened.emit(target.conversation_id, target.record_id)

    def select_task(self, record_id: str) -> bool:
        """Select the task's row in the tasks table (``False`` if it is not listed)."""
        for row, task in enumerate(self._task_rows):
            if task.record_id == record_id:
                self.tasks_table.selectRow(row)
                item = self.tasks_table.item(row, 0)
                if item is not None:
                    self.tasks_table.scrollToItem(item)
                return True
        return False

    def _show_badge(self, unseen: int) -> None:
        self.tasks_box.setTitle(f"{TASKS_TITLE} ({unseen} new)" if unseen else TASKS_TITLE)

    def quit(self) -> None:
        """Close for real (File → Quit, the tray's Quit), whatever closing usually does."""
        self._quitting = True
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing hides the window into the tray when Mooring keeps running there."""
        if not self._quitting and self.keep_running():
            event.ignore()
            self.hide()
            self.hidden_to_tray.emit()
            return
        super().closeEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        """Looking at the window clears the badge."""
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            self.toast.clear_badge()
        super().changeEvent(event)

    def _on_export_clicked(self) -> None:
        dialog = QFileDialog(self, "Export traces", "mooring-traces.jsonl", "OTLP JSON (*.jsonl)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.fileSelected.connect(self._on_export_file_chosen)
        dialog.open()  # never exec(): the event loop keeps running
        self._dialog = dialog

    def _on_export_file_chosen(self, name: str) -> None:
        task = asyncio.ensure_future(self.export_traces_to(Path(name)))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def export_traces_to(self, path: Path) -> None:
        """Write the traces (OTLP/JSON lines) to ``path`` and say how many spans went."""
        if self._export_traces is None:
            return
        try:
            spans = await self._export_traces(path)
        except OSError as exc:
            self.statusBar().showMessage(f"Could not export traces: {exc.strerror}")
        else:
            self.statusBar().showMessage(f"Wrote {spans} span(s) to {path}")

    def schedule_refresh(self) -> None:
        """Refresh soon; many changes in a burst cost one reload."""
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def _on_refresh_clicked(self) -> None:
        task = asyncio.ensure_future(self.refresh())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def refresh(self) -> None:
        """Reload the overview from the services and show it."""
        self.refresh_button.setEnabled(False)
        try:
            overview = await self._load()
        except Exception as exc:  # noqa: BLE001  # shown to the user, logged by the loader
            self.statusBar().showMessage(f"Could not load: {exc}")
        else:
            self.show_overview(overview)
            self.statusBar().showMessage("Ready")
        finally:
            self.refresh_button.setEnabled(True)

    def show_overview(self, overview: HostOverview) -> None:
        """Display an overview."""
        self.data_dir_label.setText(overview.data_dir)
        self.database_label.setText(overview.database)
        self.schema_label.setText(overview.schema)
        active = sum(
            n
            for state, n in overview.task_counts.items()
            if state in (LocalState.WORKING, LocalState.INPUT_REQUIRED, LocalState.CREATING)
        )
        total = sum(overview.task_counts.values())
        self.tasks_label.setText(f"{active} active, {total} in total")
        self.servers_table.setRowCount(len(overview.servers))
        for row, server in enumerate(overview.servers):
            cells = (
                server.alias + (" (bundled)" if server.builtin else ""),
                "stdio" if server.transport.value == "stdio" else "Streamable HTTP",
                server.target,
                "yes" if server.trusted else "no",
            )
            for column, text in enumerate(cells):
                self.servers_table.setItem(row, column, _cell(text))
        self.servers_table.resizeColumnToContents(0)
        self.servers_table.resizeColumnToContents(1)
        self._task_rows = list(overview.tasks)
        self.tasks_table.setRowCount(len(overview.tasks))
        for row, task in enumerate(overview.tasks):
            for column, text in enumerate(
                (task.operation, task.tool, task.server, task.state, task.detail)
            ):
                self.tasks_table.setItem(row, column, _cell(text))
        for column in range(4):
            self.tasks_table.resizeColumnToContents(column)
        if overview.issues:
            self.issues_label.setText(
                "Needs your attention: "
                + "; ".join(neutralize(i.title, multiline=False) for i in overview.issues)
            )
        else:
            self.issues_label.setText("No open issues.")
        self.overview_shown.emit()


def _cell(text: str) -> QTableWidgetItem:
    """A table cell for text that may come from a server: control and bidi characters made
    visible, and a tooltip that is always plain text (never rendered as HTML)."""
    shown = neutralize(text, multiline=False)
    item = QTableWidgetItem(shown)
    item.setToolTip(f"<p>{html.escape(shown)}</p>")
    return item
