"""The "Assistants" dialog: saved presets for new conversations — a name, instructions to the
model, a provider and model, and which servers' and tools' tools are offered.

Everything goes through the host's ``assistants`` part (the same use cases as ``mooring
assistants``). A conversation started from an assistant keeps a copy of its settings: editing
or deleting the assistant here changes no conversation already started. Server and tool names
come from servers: they are shown inert, never as rich text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from mooring.core.assistants import AssistantDraft, AssistantEdit, AssistantView
from mooring.core.errors import KnownError
from mooring.ui.qt_async import error_text
from mooring.ui.text import inert

if TYPE_CHECKING:
    from mooring.core.chat import ProviderConfig
    from mooring.core.host_api import HostApi
    from mooring.core.servers import ServerDefinition
    from mooring.core.tools import ToolInfo

TITLE = "Assistants"
MAX_PROMPT = 20_000
"""As the chat service allows (``services.chat.MAX_SYSTEM_PROMPT``)."""
_KIND = Qt.ItemDataRole.UserRole
_NAME = Qt.ItemDataRole.UserRole + 1
_SERVER = Qt.ItemDataRole.UserRole + 2

Start = Callable[[Coroutine[Any, Any, Any]], "asyncio.Future[Any]"]


class AssistantsDialog(QDialog):
    """List, add, edit and delete assistants (opened with ``open()``, never ``exec()``)."""

    loaded = Signal()
    """The assistants, providers, servers and tools were (re)read."""
    saved = Signal(str)
    """An assistant was stored (its name)."""
    deleted = Signal(str)
    """An assistant was deleted (its name)."""
    refused = Signal(str)
    """Saving or deleting was refused (what the dialog says why)."""

    def __init__(self, host: HostApi, start: Start, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._host = host
        self._start = start
        self._editing: str | None = None
        """The name of the assistant in the form (``None``: a new one)."""
        self._views: list[AssistantView] = []
        self.setWindowTitle(TITLE)
        self.setAccessibleName(TITLE)
        layout = QHBoxLayout(self)

        side = QVBoxLayout()
        self.list = QListWidget(self)
        self.list.setAccessibleName("Assistants")
        side.addWidget(self.list, stretch=1)
        row = QHBoxLayout()
        self.new_button = QPushButton("&New", self)
        self.new_button.setAccessibleName("New assistant")
        self.new_button.setToolTip("Describe a new assistant in the form")
        self.delete_button = QPushButton("&Delete", self)
        self.delete_button.setAccessibleName("Delete assistant")
        self.delete_button.setToolTip(
            "Delete the chosen assistant (its conversations keep their settings)"
        )
        row.addWidget(self.new_button)
        row.addWidget(self.delete_button)
        side.addLayout(row)
        layout.addLayout(side, stretch=1)

        main = QVBoxLayout()
        form = QFormLayout()
        self.name_field = QLineEdit(self)
        self.name_field.setAccessibleName("Name")
        self.name_field.setMaxLength(100)
        form.addRow("&Name:", self.name_field)
        self.prompt_field = QPlainTextEdit(self)
        self.prompt_field.setAccessibleName("System prompt")
        self.prompt_field.setPlaceholderText("For example: Answer briefly, in French.")
        self.prompt_field.setTabChangesFocus(True)
        form.addRow("System &prompt:", self.prompt_field)
        self.provider_box = QComboBox(self)
        self.provider_box.setAccessibleName("Provider")
        form.addRow("P&rovider:", self.provider_box)
        self.model_box = QComboBox(self)
        self.model_box.setEditable(True)
        self.model_box.setAccessibleName("Model")
        self.model_box.setToolTip("The model to ask (empty: the provider's own)")
        form.addRow("&Model:", self.model_box)
        main.addLayout(form)
        self.every_tool = QCheckBox("Offer &every tool", self)
        self.every_tool.setAccessibleName("Offer every tool")
        self.every_tool.setToolTip("Unchecked: only the servers and tools checked below")
        main.addWidget(self.every_tool)
        self.tree = QTreeWidget(self)
        self.tree.setAccessibleName("Servers and tools offered")
        self.tree.setHeaderLabels(["Servers and tools (Space checks)"])
        self.tree.setToolTip("A checked server offers all its tools, also ones it adds later")
        main.addWidget(self.tree, stretch=1)
        self.status = QLabel(self)
        self.status.setAccessibleName("Assistant status")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        main.addWidget(self.status)
        self.buttons = QDialogButtonBox(self)
        self.save_button = self.buttons.addButton("&Save", QDialogButtonBox.ButtonRole.ApplyRole)
        self.save_button.setAccessibleName("Save assistant")
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.close_button.setAccessibleName("Close")
        main.addWidget(self.buttons)
        layout.addLayout(main, stretch=2)

        self.close_button.clicked.connect(self.accept)
        self.save_button.clicked.connect(lambda: self._start(self.save()))
        self.new_button.clicked.connect(self.clear_form)
        self.delete_button.clicked.connect(lambda: self._start(self.delete()))
        self.list.currentItemChanged.connect(lambda _c, _p: self._show_chosen())
        self.every_tool.toggled.connect(lambda _on: self._update())
        self.tree.itemChanged.connect(lambda _i, _c: self._update())
        self.clear_form()
        self.resize(760, 520)

    # -- reading -------------------------------------------------------------------------------

    async def load(self, choose: str | None = None) -> None:
        """Read the assistants, providers, servers and their tools (a server that cannot be
        reached is listed without its tools: it can still be offered whole)."""
        desk = self._host.assistants
        if desk is None:
            self.status.setText("Assistants are not available here.")
            return
        chat = self._host.chat
        servers = await self._host.list_servers()
        tools = await asyncio.gather(*(self._tools_of(s) for s in servers))
        self._views = await desk.assistants()
        self._fill_providers(await chat.provider_choices() if chat is not None else [])
        self._fill_tree(servers, tools)
        self.list.blockSignals(True)
        self.list.clear()
        for view in self._views:
            item = QListWidgetItem(inert(view.name, limit=100))
            item.setData(_NAME, view.name)
            self.list.addItem(item)
        self.list.blockSignals(False)
        wanted = choose if choose is not None else self._editing
        for row in range(self.list.count()):
            if self.list.item(row).data(_NAME) == wanted:
                self.list.setCurrentRow(row)
                break
        else:
            self.clear_form()
        self.loaded.emit()

    async def _tools_of(self, server: ServerDefinition) -> list[ToolInfo] | None:
        try:
            return await self._host.server_desk.tools(server)
        except KnownError:
            return None  # offered whole, or not at all

    def _fill_providers(self, providers: list[ProviderConfig]) -> None:
        self.provider_box.clear()
        self.provider_box.addItem("Default provider", None)
        for config in providers:
            self.provider_box.addItem(inert(config.name, limit=60), config.name)

    def _fill_tree(
        self, servers: list[ServerDefinition], tools: list[list[ToolInfo] | None]
    ) -> None:
        self.tree.blockSignals(True)
        self.tree.clear()
        for server, listed in zip(servers, tools, strict=True):
            top = QTreeWidgetItem([inert(server.alias, limit=80)])
            top.setData(0, _KIND, "server")
            top.setData(0, _SERVER, server.alias)
            top.setFlags(top.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            top.setCheckState(0, Qt.CheckState.Unchecked)
            if listed is None:
                top.setToolTip(0, "Cannot be reached now: it can be offered whole")
            for info in listed or ():
                leaf = QTreeWidgetItem([inert(info.name, limit=80)])
                leaf.setData(0, _KIND, "tool")
                leaf.setData(0, _SERVER, server.alias)
                leaf.setData(0, _NAME, info.name)
                leaf.setFlags(leaf.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                leaf.setCheckState(0, Qt.CheckState.Unchecked)
                top.addChild(leaf)
            self.tree.addTopLevelItem(top)
        self.tree.expandAll()
        self.tree.blockSignals(False)

    # -- the form ------------------------------------------------------------------------------

    def clear_form(self) -> None:
        """An empty form for a new assistant (every tool offered, the default provider)."""
        self._editing = None
        self.list.blockSignals(True)
        self.list.setCurrentRow(-1)
        self.list.clearSelection()
        self.list.blockSignals(False)
        self.name_field.clear()
        self.prompt_field.clear()
        self.provider_box.setCurrentIndex(0)
        self.model_box.setEditText("")
        self.every_tool.setChecked(True)
        self._check(set(), set())
        self.status.setText("A new assistant: give it a name, then Save.")
        self._update()

    def _show_chosen(self) -> None:
        item = self.list.currentItem()
        view = next((v for v in self._views if item and v.name == item.data(_NAME)), None)
        if view is None:
            return
        self._editing = view.name
        self.name_field.setText(view.name)
        self.prompt_field.setPlainText(view.assistant.system_prompt)
        index = self.provider_box.findData(view.provider_name) if view.provider_name else 0
        self.provider_box.setCurrentIndex(max(index, 0))
        self.model_box.setEditText(view.assistant.model or "")
        self.every_tool.setChecked(view.offers_everything)
        self._check(set(view.servers or ()), set(view.tools or ()))
        self.status.setText(
            "The provider of this assistant was removed: choose another."
            if view.provider_missing
            else ""
        )
        self._update()

    def _check(self, servers: set[str], tools: set[str]) -> None:
        self.tree.blockSignals(True)
        for top in self._servers():
            alias = top.data(0, _SERVER)
            top.setCheckState(
                0, Qt.CheckState.Checked if alias in servers else Qt.CheckState.Unchecked
            )
            for leaf in _children(top):
                on = f"{alias}:{leaf.data(0, _NAME)}" in tools
                leaf.setCheckState(0, Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self.tree.blockSignals(False)

    def _servers(self) -> list[QTreeWidgetItem]:
        found = (self.tree.topLevelItem(n) for n in range(self.tree.topLevelItemCount()))
        return [item for item in found if item is not None]

    def _update(self) -> None:
        self.tree.setEnabled(not self.every_tool.isChecked())
        self.delete_button.setEnabled(self._editing is not None)
        too_long = len(self.prompt_field.toPlainText()) > MAX_PROMPT
        self.save_button.setEnabled(not too_long)

    def offered(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """The checked servers (aliases) and tools (``alias:tool``); ``None``: every tool."""
        if self.every_tool.isChecked():
            return None
        servers: list[str] = []
        tools: list[str] = []
        for top in self._servers():
            alias = str(top.data(0, _SERVER))
            if top.checkState(0) == Qt.CheckState.Checked:
                servers.append(alias)
                continue  # the whole server: its tools need no ticks of their own
            for leaf in _children(top):
                if leaf.checkState(0) == Qt.CheckState.Checked:
                    tools.append(f"{alias}:{leaf.data(0, _NAME)}")
        return tuple(servers), tuple(tools)

    # -- actions -------------------------------------------------------------------------------

    async def save(self) -> None:
        """Store the form: a new assistant, or the chosen one changed. A mistake is said in
        the dialog, and the form is kept as typed."""
        desk = self._host.assistants
        if desk is None:
            return
        provider = self.provider_box.currentData()
        model = self.model_box.currentText().strip()
        offered = self.offered()
        try:
            if self._editing is None:
                view = await desk.add(
                    AssistantDraft(
                        name=self.name_field.text(),
                        system_prompt=self.prompt_field.toPlainText(),
                        provider=provider if isinstance(provider, str) else None,
                        model=model or None,
                        servers=offered[0] if offered is not None else None,
                        tools=offered[1] if offered is not None else None,
                    )
                )
            else:
                view = await desk.edit(
                    self._editing,
                    AssistantEdit(
                        name=self.name_field.text(),
                        system_prompt=self.prompt_field.toPlainText(),
                        provider=provider if isinstance(provider, str) else "",
                        model=model,
                        servers=offered[0] if offered is not None else None,
                        tools=offered[1] if offered is not None else None,
                        all_tools=offered is None,
                    ),
                )
        except KnownError as exc:
            self.status.setText(error_text(exc))
            self.refused.emit(self.status.text())
            return
        self._editing = view.name
        await self.load(choose=view.name)
        self.status.setText(f"Saved {inert(view.name, limit=100)}.")
        self.saved.emit(view.name)

    async def delete(self) -> None:
        """Delete the chosen assistant (conversations started from it keep their settings)."""
        desk = self._host.assistants
        name = self._editing
        if desk is None or name is None:
            return
        try:
            await desk.remove(name)
        except KnownError as exc:
            self.status.setText(error_text(exc))
            self.refused.emit(self.status.text())
            return
        self._editing = None
        await self.load()
        self.status.setText(f"Deleted {inert(name, limit=100)}.")
        self.deleted.emit(name)


def _children(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    found = (item.child(n) for n in range(item.childCount()))
    return [child for child in found if child is not None]
