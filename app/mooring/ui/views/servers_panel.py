"""The Servers panel: each server's connection state and reason, its tools, trust, and
adding or removing servers (through the host)."""

from __future__ import annotations

import asyncio
import contextlib

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from mooring.core.events import CatalogueDidChange, ConnectionDidChange
from mooring.services.host import Host, ServerView
from mooring.ui.dialogs.add_server import AddServerDialog
from mooring.ui.models.servers import ServerListModel, ServerRole
from mooring.ui.qt_async import Jobs, confirm, error_text, wait_dialog
from mooring.ui.text import neutralise, plain_tooltip


class ServersPanel(QWidget):
    """The "Servers" panel."""

    report = Signal(str)
    loaded = Signal()
    """The list was (re)read from the host."""
    dialog_opened = Signal(object)
    """A dialog of this panel opened (adding a server, confirming a removal)."""
    tools_shown = Signal(str)
    """A server's tools (or why there are none) are on screen (the server's alias)."""

    def __init__(self, host: Host, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.setObjectName("servers-panel")
        self.setAccessibleName("Servers")
        self.jobs = Jobs(self.report.emit)
        self.model = ServerListModel(self)
        self._reload: asyncio.Task[None] | None = None
        self._again = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.table = QTableView(self.splitter)
        self.table.setObjectName("servers-table")
        self.table.setAccessibleName("Server list")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.ResizeToContents)
        details = QWidget(self.splitter)
        side = QVBoxLayout(details)
        side.setContentsMargins(0, 0, 0, 0)
        self.detail_label = QLabel(details)
        self.detail_label.setTextFormat(Qt.TextFormat.PlainText)
        self.detail_label.setWordWrap(True)
        side.addWidget(self.detail_label)
        self.trusted_check = QCheckBox("Trusted (believe this server's tool annotations)", details)
        self.trusted_check.setAccessibleName("Trusted")
        side.addWidget(self.trusted_check)
        tools_title = QLabel("Tools:", details)
        side.addWidget(tools_title)
        self.tools_list = QListWidget(details)
        self.tools_list.setObjectName("tools-list")
        self.tools_list.setAccessibleName("Tools")
        tools_title.setBuddy(self.tools_list)
        side.addWidget(self.tools_list, stretch=1)
        row = QHBoxLayout()
        self.add_button = QPushButton("Add server…", self)
        self.remove_button = QPushButton("Remove server", self)
        self.refresh_button = QPushButton("Refresh tools", self)
        for button in (self.add_button, self.remove_button, self.refresh_button):
            button.setAccessibleName(button.text().rstrip("…"))
            row.addWidget(button)
        row.addStretch(1)
        layout.addWidget(self.splitter, stretch=1)
        layout.addLayout(row)
        self.add_button.clicked.connect(lambda: self.jobs.start(self.add_interactively()))
        self.remove_button.clicked.connect(lambda: self.jobs.start(self.remove_selected()))
        self.refresh_button.clicked.connect(lambda: self._load_tools(refresh=True))
        self.trusted_check.clicked.connect(self._on_trust_clicked)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._on_selection())
        self.model.modelReset.connect(self._on_selection)
        self._unsubscribe = [
            host.events.on(ConnectionDidChange, lambda _e: self.schedule_reload()),
            host.events.on(CatalogueDidChange, self._on_catalogue),
        ]
        self._on_selection()

    # -- reading -------------------------------------------------------------------------------

    async def load(self) -> None:
        """Read the servers and their connection states."""
        self.model.set_views(await self.host.servers())
        if not self.table.selectionModel().hasSelection() and self.model.rowCount():
            self.table.selectRow(0)
        self.loaded.emit()

    def schedule_reload(self) -> None:
        """Read again soon (connection changes come in bursts)."""
        if self._reload is not None and not self._reload.done():
            self._again = True
            return
        self._reload = asyncio.ensure_future(self._reload_loop())

    async def _reload_loop(self) -> None:
        self._again = True
        while self._again:
            self._again = False
            await self.load()
            self._on_selection(reload_tools=False)

    def selected(self) -> ServerView | None:
        """The chosen server."""
        rows = self.table.selectionModel().selectedRows()
        view = rows[0].data(ServerRole.VIEW) if rows else None
        return view if isinstance(view, ServerView) else None

    def select_server(self, server_id: str) -> bool:
        """Choose a server by id."""
        for row, view in enumerate(self.model.views()):
            if view.server.id == server_id:
                self.table.selectRow(row)
                return True
        return False

    def _on_selection(self, *, reload_tools: bool = True) -> None:
        view = self.selected()
        for widget in (self.remove_button, self.refresh_button, self.trusted_check):
            widget.setEnabled(view is not None)
        if view is None:
            self.detail_label.setText("No server chosen.")
            self.trusted_check.setChecked(False)
            self.tools_list.clear()
            return
        server = view.server
        self.trusted_check.setChecked(server.trusted)
        self.detail_label.setText(
            f"{neutralise(server.alias, limit=80)}: {neutralise(view.state_words, limit=500)}\n"
            f"{neutralise(server.target, limit=500)}"
        )
        if reload_tools:
            self._load_tools(refresh=False)

    def _on_catalogue(self, event: CatalogueDidChange) -> None:
        view = self.selected()
        if view is not None and view.server.id == event.server_id:
            self._load_tools(refresh=False)

    def _load_tools(self, *, refresh: bool) -> None:
        view = self.selected()
        if view is not None and view.server.enabled:
            self.jobs.start(self.show_tools(view, refresh=refresh))

    async def show_tools(self, view: ServerView, *, refresh: bool = False) -> None:
        """List the server's tools (connecting to it if needed)."""
        self.tools_list.clear()
        QListWidgetItem("Reading tools…", self.tools_list)
        tools = await self.host.tools.tools(view.server, refresh=refresh)
        current = self.selected()
        if current is None or current.server.id != view.server.id:
            return
        self.tools_list.clear()
        if tools is None:
            QListWidgetItem("Not reachable now; its tools are unknown.", self.tools_list)
        elif not tools:
            QListWidgetItem("This server offers no tools.", self.tools_list)
        for info in tools or []:
            name = neutralise(info.title or info.name, limit=120)
            description = neutralise(info.description.strip().split("\n")[0], limit=200)
            item = QListWidgetItem(f"{name} — {description}" if description else name)
            item.setToolTip(plain_tooltip(neutralise(info.description, limit=2000, multiline=True)))
            self.tools_list.addItem(item)
        self.tools_shown.emit(view.server.alias)

    # -- actions -------------------------------------------------------------------------------

    def _on_trust_clicked(self, checked: bool) -> None:
        view = self.selected()
        if view is not None:
            self.jobs.start(self.set_trusted(view.server.alias, checked))

    async def set_trusted(self, alias: str, trusted: bool) -> None:
        """Trust or stop trusting a server."""
        await self.host.set_trusted(alias, trusted)
        self.report.emit(
            f"{neutralise(alias, limit=80)} is {'trusted' if trusted else 'no longer trusted'}."
        )
        await self.load()
        self._on_selection(reload_tools=False)

    async def add_interactively(self) -> None:
        """Ask for a server and add it; the dialog stays open until it is right or cancelled."""
        dialog = AddServerDialog(self.window())
        try:
            while await wait_dialog(dialog, self.dialog_opened.emit):
                spec = dialog.spec()
                try:
                    await self.host.add_server(spec)
                except Exception as exc:  # noqa: BLE001  # shown in the dialog, nothing lost
                    dialog.show_error(error_text(exc))
                    continue
                self.report.emit(f"Added {neutralise(spec.alias, limit=80)}.")
                await self.load()
                for row, view in enumerate(self.model.views()):
                    if view.server.alias == spec.alias:
                        self.table.selectRow(row)
                return
        finally:
            dialog.deleteLater()

    async def remove_selected(self) -> None:
        """Remove the chosen server after a confirmation (its past tasks keep their history)."""
        view = self.selected()
        if view is None:
            return
        alias = view.server.alias
        if not await confirm(
            self,
            "Remove server",
            f"Remove {neutralise(alias, limit=80)}? Its past tasks keep their history.",
            "Remove",
            self.dialog_opened.emit,
        ):
            return
        await self.remove(alias)

    async def remove(self, alias: str) -> None:
        """Remove a server by name (no question asked)."""
        await self.host.remove_server(alias)
        self.report.emit(f"Removed {neutralise(alias, limit=80)}.")
        await self.load()

    async def stop(self) -> None:
        """Stop listening and end the work this panel started."""
        self.close_panel()
        if self._reload is not None:
            self._reload.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reload
        await self.jobs.cancel_all()

    def close_panel(self) -> None:
        """Stop listening to the host."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
