"""The Servers panel: each server's connection state and reason, its tools with their access
(enabled, hidden), trust, its accounts and signing them in, and adding, editing, importing or
removing servers — every action through the host."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from mooring.core.errors import KnownError, Remedy
from mooring.core.events import ConnectionDidChange, ServersDidChange, ToolsDidChange
from mooring.core.ports import ConnectionState
from mooring.core.server_import import ConfigPreview
from mooring.core.servers import Transport
from mooring.core.views import AccountView, ServerView
from mooring.ui.dialogs.add_server import AddServerDialog
from mooring.ui.dialogs.import_servers import ImportDialog
from mooring.ui.models.server_tools import ToolAccessModel
from mooring.ui.models.servers import ServerListModel, ServerRole
from mooring.ui.qt_async import Jobs, confirm, error_text, wait_dialog
from mooring.ui.text import inert

if TYPE_CHECKING:
    from mooring.core.host_api import HostApi

ACCOUNT_ROLE = Qt.ItemDataRole.UserRole + 1


async def open_in_browser(url: str) -> None:
    """Open an address in the system browser (the sign-in's authorization page)."""
    if not QDesktopServices.openUrl(QUrl(url)):
        raise OSError("no web browser could be opened")


class ServersPanel(QWidget):
    """The "Servers" panel."""

    report = Signal(str)
    loaded = Signal()
    """The list was (re)read from the host."""
    dialog_opened = Signal(object)
    """A dialog of this panel opened (adding, editing, importing, confirming, naming)."""
    tools_shown = Signal(str)
    """A server's tools (or why there are none) are on screen (the server's alias)."""
    accounts_shown = Signal(str)
    """A server's accounts are on screen (the server's alias)."""
    signed_in = Signal(str)
    """A sign-in completed (the server's alias)."""

    def __init__(self, host: HostApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.setObjectName("servers-panel")
        self.setAccessibleName("Servers")
        self.jobs = Jobs(self.report.emit)
        self.open_url: Callable[[str], Awaitable[None]] = open_in_browser
        """How a sign-in shows its address (tests stand in for the browser here)."""
        self.pick_file: Callable[[QWidget], Awaitable[str | None]] = self._pick_file
        """Asks for a configuration file to import (tests stand in for the file dialog)."""
        self.model = ServerListModel(self)
        self.tool_model = ToolAccessModel(self)
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
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        side.addWidget(self.detail_label)
        self.trusted_check = QCheckBox("Trusted (believe this server's tool annotations)", details)
        self.trusted_check.setAccessibleName("Trusted")
        side.addWidget(self.trusted_check)
        columns = QHBoxLayout()
        tools_box = QVBoxLayout()
        tools_title = QLabel(
            "T&ools (untick Enabled to keep a tool from running; Hidden: the model never sees it):",
            details,
        )
        tools_title.setWordWrap(True)
        tools_box.addWidget(tools_title)
        self.tools_table = QTableView(details)
        self.tools_table.setObjectName("tools-table")
        self.tools_table.setAccessibleName("Tools")
        self.tools_table.setModel(self.tool_model)
        self.tools_table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.tools_table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.tools_table.verticalHeader().setVisible(False)
        self.tools_table.setWordWrap(False)
        tools_header = self.tools_table.horizontalHeader()
        tools_header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        tools_header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        tools_header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        tools_header.setStretchLastSection(True)
        tools_title.setBuddy(self.tools_table)
        tools_box.addWidget(self.tools_table, stretch=1)
        self.tools_note = QLabel(details)
        self.tools_note.setTextFormat(Qt.TextFormat.PlainText)
        self.tools_note.setWordWrap(True)
        tools_box.addWidget(self.tools_note)
        columns.addLayout(tools_box, stretch=3)
        accounts_box = QVBoxLayout()
        accounts_title = QLabel("Acc&ounts:", details)
        accounts_box.addWidget(accounts_title)
        self.accounts_list = QListWidget(details)
        self.accounts_list.setObjectName("accounts-list")
        self.accounts_list.setAccessibleName("Accounts")
        accounts_title.setBuddy(self.accounts_list)
        accounts_box.addWidget(self.accounts_list, stretch=1)
        account_buttons = QHBoxLayout()
        self.sign_in_button = QPushButton("Sign in", details)
        self.sign_out_button = QPushButton("Sign out", details)
        self.add_account_button = QPushButton("Add account…", details)
        self.remove_account_button = QPushButton("Remove account", details)
        for button in (
            self.sign_in_button,
            self.sign_out_button,
            self.add_account_button,
            self.remove_account_button,
        ):
            button.setAccessibleName(button.text().rstrip("…"))
            account_buttons.addWidget(button)
        accounts_box.addLayout(account_buttons)
        self.accounts_note = QLabel(details)
        self.accounts_note.setTextFormat(Qt.TextFormat.PlainText)
        self.accounts_note.setWordWrap(True)
        accounts_box.addWidget(self.accounts_note)
        columns.addLayout(accounts_box, stretch=2)
        side.addLayout(columns, stretch=1)
        row = QHBoxLayout()
        self.add_button = QPushButton("Add server…", self)
        self.edit_button = QPushButton("Edit server…", self)
        self.import_button = QPushButton("Import…", self)
        self.remove_button = QPushButton("Remove server", self)
        self.refresh_button = QPushButton("Refresh tools", self)
        for button in (
            self.add_button,
            self.edit_button,
            self.import_button,
            self.remove_button,
            self.refresh_button,
        ):
            button.setAccessibleName(button.text().rstrip("…"))
            row.addWidget(button)
        row.addStretch(1)
        layout.addWidget(self.splitter, stretch=1)
        layout.addLayout(row)
        self.add_button.clicked.connect(lambda: self.jobs.start(self.add_interactively()))
        self.edit_button.clicked.connect(lambda: self.jobs.start(self.edit_selected()))
        self.import_button.clicked.connect(lambda: self.jobs.start(self.import_interactively()))
        self.remove_button.clicked.connect(lambda: self.jobs.start(self.remove_selected()))
        self.refresh_button.clicked.connect(lambda: self._load_tools(refresh=True))
        self.trusted_check.clicked.connect(self._on_trust_clicked)
        self.sign_in_button.clicked.connect(lambda: self._on_account_action(self.sign_in))
        self.sign_out_button.clicked.connect(lambda: self._on_account_action(self.sign_out))
        self.add_account_button.clicked.connect(
            lambda: self.jobs.start(self.add_account_interactively())
        )
        self.remove_account_button.clicked.connect(
            lambda: self._on_account_action(self.remove_account_confirmed)
        )
        self.accounts_list.currentRowChanged.connect(lambda _row: self._account_buttons())
        self.tool_model.change_requested.connect(self._on_tool_change)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._on_selection())
        self.model.modelReset.connect(self._on_selection)
        self._unsubscribe = [
            host.events.on(ConnectionDidChange, self._on_connection),
            host.events.on(ServersDidChange, lambda _e: self.schedule_reload()),
            host.events.on(ToolsDidChange, self._on_tools_changed),
        ]
        self._on_selection()

    # -- reading -------------------------------------------------------------------------------

    async def load(self) -> None:
        """Read the servers and their connection states."""
        self.model.set_views(await self.host.server_desk.servers())
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

    def select_server_alias(self, alias: str) -> bool:
        """Choose a server by name (``False`` when it is not listed)."""
        for row, view in enumerate(self.model.views()):
            if view.server.alias == alias:
                self.table.selectRow(row)
                return True
        return False

    def _on_selection(self, *, reload_tools: bool = True) -> None:
        view = self.selected()
        for widget in (
            self.remove_button,
            self.edit_button,
            self.refresh_button,
            self.trusted_check,
            self.add_account_button,
        ):
            widget.setEnabled(view is not None)
        if view is None:
            self.detail_label.setText("No server chosen.")
            self.trusted_check.setChecked(False)
            self.tool_model.clear()
            self.tools_note.setText("")
            self.accounts_list.clear()
            self.accounts_note.setText("")
            self._account_buttons()
            return
        server = view.server
        self.trusted_check.setChecked(server.trusted)
        self.detail_label.setText(
            f"{inert(server.alias, limit=80)}: {inert(view.state_words, limit=500)}\n"
            f"{inert(server.target, limit=500)}"
        )
        self.tool_model.set_server(server)
        self._show_access_note(view)
        if reload_tools:
            self._load_tools(refresh=False)
        self.jobs.start(self.show_accounts(view))

    def _show_access_note(self, view: ServerView) -> None:
        server = view.server
        notes = []
        if server.allowed_tools is not None:
            listed = ", ".join(inert(t, limit=60) for t in server.allowed_tools) or "none"
            notes.append(f"Allowed list: {listed}.")
        if server.hidden_tools:
            hidden = ", ".join(inert(t, limit=60) for t in server.hidden_tools)
            notes.append(f"Hidden: {hidden}.")
        self.tools_note.setText(" ".join(notes) or "Every tool may run (no allowed list).")

    def _on_connection(self, event: ConnectionDidChange) -> None:
        self.schedule_reload()
        view = self.selected()
        if (
            view is not None
            and view.server.id == event.server_id
            and event.state in (ConnectionState.READY, ConnectionState.FAILED)
        ):
            # Connected (its tools can be read now) or failed (they are unknown now): the
            # tool index only forgets the old list, so nothing else would tell this table.
            self._load_tools(refresh=False)

    def _on_tools_changed(self, event: ToolsDidChange) -> None:
        view = self.selected()
        if view is not None and view.server.id == event.server_id:
            self._load_tools(refresh=False)

    def _load_tools(self, *, refresh: bool) -> None:
        view = self.selected()
        if view is not None and view.server.enabled:
            self.jobs.start(self.show_tools(view, refresh=refresh))

    async def show_tools(self, view: ServerView, *, refresh: bool = False) -> None:
        """List the server's tools with their access (connecting to it if needed)."""
        shown = self.tool_model.server()
        if shown is None or shown.id != view.server.id:
            self.tool_model.clear()
            self.tools_note.setText("Reading tools…")
        tools = await self.host.server_desk.tools(view.server, refresh=refresh)
        current = self.selected()
        if current is None or current.server.id != view.server.id:
            return
        self.tool_model.set_tools(current.server, tools or [])
        if tools is None:
            self.tools_note.setText("Not reachable now; its tools are unknown.")
        elif not tools:
            self.tools_note.setText("This server offers no tools.")
        else:
            self._show_access_note(current)
        self.tools_shown.emit(view.server.alias)

    async def show_accounts(self, view: ServerView) -> None:
        """List the server's accounts and whether each is signed in."""
        accounts = await self.host.account_desk.accounts(view.server.alias)
        current = self.selected()
        if current is None or current.server.id != view.server.id:
            return
        chosen = self.chosen_account()
        self.accounts_list.clear()
        http = view.server.transport is Transport.HTTP
        for account in accounts:
            state = "signed in" if account.signed_in else "not signed in"
            label = inert(account.label, limit=80)
            item = QListWidgetItem(f"{label} — {state}" if http else label)
            item.setData(ACCOUNT_ROLE, account)
            self.accounts_list.addItem(item)
            if chosen is not None and chosen.profile_id == account.profile_id:
                self.accounts_list.setCurrentItem(item)
        if self.accounts_list.currentRow() < 0 and self.accounts_list.count():
            self.accounts_list.setCurrentRow(0)
        self.accounts_note.setText(
            "Sign in opens your browser; Mooring waits for it to come back."
            if http
            else "A local program has nothing to sign in to; accounts keep tasks apart."
        )
        self._account_buttons()
        self.accounts_shown.emit(view.server.alias)

    def chosen_account(self) -> AccountView | None:
        """The account chosen in the list."""
        item = self.accounts_list.currentItem()
        account = item.data(ACCOUNT_ROLE) if item is not None else None
        return account if isinstance(account, AccountView) else None

    def _account_buttons(self) -> None:
        view = self.selected()
        account = self.chosen_account()
        http = view is not None and view.server.transport is Transport.HTTP
        self.sign_in_button.setEnabled(http and account is not None)
        self.sign_out_button.setEnabled(http and account is not None and account.signed_in)
        self.remove_account_button.setEnabled(account is not None and not account.is_default)

    # -- actions -------------------------------------------------------------------------------

    def _on_trust_clicked(self, checked: bool) -> None:
        view = self.selected()
        if view is not None:
            self.jobs.start(self.set_trusted(view.server.alias, checked))

    async def set_trusted(self, alias: str, trusted: bool) -> None:
        """Trust or stop trusting a server."""
        await self.host.server_desk.set_trusted(alias, trusted)
        self.report.emit(
            f"{inert(alias, limit=80)} is {'trusted' if trusted else 'no longer trusted'}."
        )
        await self.load()
        self._on_selection(reload_tools=False)

    def _on_tool_change(self, tool: str, enabled: object, hidden: object) -> None:
        server = self.tool_model.server()
        if server is None:
            return
        self.jobs.start(
            self.set_tool_access(
                server.alias,
                tool,
                enabled=enabled if isinstance(enabled, bool) else None,
                hidden=hidden if isinstance(hidden, bool) else None,
            )
        )

    async def set_tool_access(
        self, alias: str, tool: str, *, enabled: bool | None = None, hidden: bool | None = None
    ) -> None:
        """Enable, disable, hide or show one tool of a server."""
        server = await self.host.server_desk.set_tool_access(
            alias, tool, enabled=enabled, hidden=hidden
        )
        self.tool_model.set_server(server)
        name = inert(tool, limit=80)
        if enabled is not None:
            self.report.emit(f"{name} is {'enabled' if enabled else 'disabled'}.")
        else:
            self.report.emit(f"{name} is {'hidden from the model' if hidden else 'shown'}.")
        await self.load()
        self._on_selection(reload_tools=False)

    async def add_interactively(self) -> None:
        """Ask for a server and add it; the dialog stays open until it is right or cancelled."""
        dialog = AddServerDialog(self.window())
        try:
            while await wait_dialog(dialog, self.dialog_opened.emit):
                spec = dialog.spec()
                try:
                    await self.host.server_desk.add(spec)
                except Exception as exc:  # noqa: BLE001  # shown in the dialog, nothing lost
                    _refused(dialog, exc)
                    continue
                self.report.emit(f"Added {inert(spec.alias, limit=80)}.")
                await self.load()
                self.select_server_alias(spec.alias)
                return
        finally:
            dialog.deleteLater()

    async def edit_selected(self) -> None:
        """Edit the chosen server; the dialog stays open until it is saved or cancelled."""
        view = self.selected()
        if view is None:
            return
        alias = view.server.alias
        dialog = AddServerDialog(self.window(), server=view.server)
        try:
            while await wait_dialog(dialog, self.dialog_opened.emit):
                spec = dialog.spec()
                try:
                    edited = await self.host.server_desk.update(alias, spec)
                except Exception as exc:  # noqa: BLE001  # shown in the dialog, nothing lost
                    _refused(dialog, exc)
                    continue
                note = (
                    " It points somewhere else now, so it is no longer trusted."
                    if view.server.trusted and not edited.trusted and spec.trusted
                    else ""
                )
                self.report.emit(f"Saved {inert(edited.alias, limit=80)}.{note}")
                await self.load()
                self.select_server_alias(edited.alias)
                self._on_selection()
                return
        finally:
            dialog.deleteLater()

    async def import_interactively(self) -> None:
        """Find other apps' configurations, show what importing them would do, import what
        the user ticks."""
        self.report.emit("Looking for Claude Desktop, VS Code and Cursor configurations…")
        previews = await self.host.server_desk.find_configs()
        await self.import_from(previews)

    async def import_from(self, previews: list[ConfigPreview]) -> None:
        """Show ``previews`` in the import dialog and import the ticked servers."""
        dialog = ImportDialog(previews, self.window())
        dialog.file_button.clicked.connect(lambda: self.jobs.start(self._import_file(dialog)))
        try:
            if not await wait_dialog(dialog, self.dialog_opened.emit):
                return
            chosen = dialog.chosen()
        finally:
            dialog.deleteLater()
        outcome = await self.host.server_desk.import_entries(chosen)
        words = [f"Imported {len(outcome.added)} server(s)."]
        words += [f"{inert(n, limit=80)}: {inert(r, limit=200)}." for n, r in outcome.skipped]
        self.report.emit(" ".join(words))
        await self.load()
        if outcome.added:
            self.select_server_alias(outcome.added[0].alias)

    async def _import_file(self, dialog: ImportDialog) -> None:
        """Ask for a configuration file and show what importing it would do in ``dialog``."""
        path = await self.pick_file(dialog)
        if not path:
            return
        try:
            preview = await self.host.server_desk.preview_file(path)
        except Exception as exc:  # noqa: BLE001  # said in the dialog, nothing lost
            dialog.intro.setText(error_text(exc))
            return
        dialog.add_previews([preview])

    async def _pick_file(self, parent: QWidget) -> str | None:
        chooser = QFileDialog(parent, "Import servers from a file", "", "JSON (*.json);;All (*)")
        chooser.setFileMode(QFileDialog.FileMode.ExistingFile)
        try:
            if not await wait_dialog(chooser, self.dialog_opened.emit):
                return None
            files = chooser.selectedFiles()
            return files[0] if files else None
        finally:
            chooser.deleteLater()

    async def remove_selected(self) -> None:
        """Remove the chosen server after a confirmation (its past tasks keep their history)."""
        view = self.selected()
        if view is None:
            return
        alias = view.server.alias
        if not await confirm(
            self,
            "Remove server",
            f"Remove {inert(alias, limit=80)}? Its past tasks keep their history.",
            "Remove",
            self.dialog_opened.emit,
        ):
            return
        await self.remove(alias)

    async def remove(self, alias: str) -> None:
        """Remove a server by name (no question asked)."""
        await self.host.server_desk.remove(alias)
        self.report.emit(f"Removed {inert(alias, limit=80)}.")
        await self.load()

    # -- accounts ------------------------------------------------------------------------------

    def _on_account_action(
        self, action: Callable[[str, AccountView], Coroutine[Any, Any, None]]
    ) -> None:
        view, account = self.selected(), self.chosen_account()
        if view is not None and account is not None:
            self.jobs.start(action(view.server.alias, account))

    async def sign_in(self, alias: str, account: AccountView) -> None:
        """Sign an account in: the browser opens, and Mooring waits for it to come back
        (without blocking the window)."""
        name = inert(alias, limit=80)
        self.report.emit(f"Signing in to {name}: finish in your browser…")
        self.sign_in_button.setEnabled(False)
        try:
            await self.host.account_desk.sign_in(
                alias, None if account.is_default else account.label, self.open_url
            )
        finally:
            self._account_buttons()
        self.report.emit(f"Signed in to {name}.")
        view = self.selected()
        if view is not None:
            await self.show_accounts(view)
        self.signed_in.emit(alias)

    async def sign_out(self, alias: str, account: AccountView) -> None:
        """Forget an account's tokens."""
        await self.host.account_desk.sign_out(alias, None if account.is_default else account.label)
        self.report.emit(f"Signed out of {inert(alias, limit=80)}.")
        view = self.selected()
        if view is not None:
            await self.show_accounts(view)

    async def add_account_interactively(self) -> None:
        """Ask for an account name and add it to the chosen server."""
        view = self.selected()
        if view is None:
            return
        dialog = QInputDialog(self.window())
        dialog.setWindowTitle("Add account")
        dialog.setLabelText(f"Name of the new account on {inert(view.server.alias, limit=80)}:")
        dialog.setObjectName("add-account-dialog")
        try:
            if not await wait_dialog(dialog, self.dialog_opened.emit):
                return
            label = dialog.textValue().strip()
        finally:
            dialog.deleteLater()
        await self.host.account_desk.add(view.server.alias, label)
        self.report.emit(f"Added account {inert(label, limit=80)}.")
        await self.show_accounts(view)

    async def remove_account_confirmed(self, alias: str, account: AccountView) -> None:
        """Remove an account after a confirmation."""
        if not await confirm(
            self,
            "Remove account",
            f"Remove the account {inert(account.label, limit=80)} of "
            f"{inert(alias, limit=80)}? Its tokens are forgotten; its unfinished tasks "
            "become issues.",
            "Remove",
            self.dialog_opened.emit,
        ):
            return
        await self.host.account_desk.remove(alias, account.label)
        self.report.emit(f"Removed account {inert(account.label, limit=80)}.")
        view = self.selected()
        if view is not None:
            await self.show_accounts(view)

    def index_of_tool(self, name: str, column: int) -> QModelIndex:
        """The cell of one tool (by name) in the tools table."""
        for row, info in enumerate(self.tool_model.tools()):
            if info.name == name:
                return self.tool_model.index(row, column)
        return QModelIndex()

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


def _refused(dialog: AddServerDialog, exc: BaseException) -> None:
    """Say in the dialog why the server was not stored; secret environment values no keyring
    can keep are offered a move to the not-secret ones (the user says whether they are)."""
    dialog.show_error(error_text(exc))
    if isinstance(exc, KnownError) and exc.remedy is Remedy.KEEP_SECRETS:
        dialog.offer_not_secret()
