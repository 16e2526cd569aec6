"""A server's tools with their access: enabled (in the allowed list) and hidden, as checkboxes.

The model never changes access itself: ticking a box emits :attr:`ToolAccessModel.change_requested`
and the panel asks the host, then shows the server as it is now (:meth:`set_server`).
"""

from __future__ import annotations

import fnmatch
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal

from mooring.core.servers import ServerDefinition
from mooring.core.tools import ToolInfo
from mooring.ui.models.columns import HeadedTableModel
from mooring.ui.text import inert, plain_tooltip

_Index = QModelIndex | QPersistentModelIndex

COLUMNS = ("Tool", "Enabled", "Hidden", "Description")
ENABLED, HIDDEN = 1, 2


class ToolRole(IntEnum):
    """The model's named roles."""

    NAME = Qt.ItemDataRole.UserRole + 1
    """The tool's name as the server gave it (not for display)."""
    INFO = Qt.ItemDataRole.UserRole + 2


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def is_enabled(server: ServerDefinition, name: str) -> bool:
    """Whether the server's allowed list lets this tool run (no list: every tool)."""
    return server.allowed_tools is None or _matches(name, server.allowed_tools)


def is_hidden(server: ServerDefinition, name: str) -> bool:
    """Whether the tool is hidden (the model never sees it, it never runs)."""
    return _matches(name, server.hidden_tools)


class ToolAccessModel(HeadedTableModel):
    """One row per tool of one server."""

    headings = COLUMNS

    change_requested = Signal(str, object, object)
    """``(tool name, enabled or None, hidden or None)``: the user ticked or cleared a box."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._server: ServerDefinition | None = None
        self._tools: list[ToolInfo] = []

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008  # Qt API
        return 0 if parent.isValid() else len(self._tools)

    def _text(self, info: ToolInfo, column: int) -> str:
        server = self._server
        assert server is not None
        if column == 0:
            return inert(info.title or info.name, limit=120)
        if column == ENABLED:
            return "enabled" if is_enabled(server, info.name) else "disabled"
        if column == HIDDEN:
            return "hidden" if is_hidden(server, info.name) else "shown"
        first = info.description.strip().split("\n")[0] if info.description else ""
        return inert(first, limit=200)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._tools):
            return None
        column = index.column()
        if not 0 <= column < len(COLUMNS) or self._server is None:
            return None
        info = self._tools[index.row()]
        match role:
            case Qt.ItemDataRole.DisplayRole:
                return "" if column in (ENABLED, HIDDEN) else self._text(info, column)
            case Qt.ItemDataRole.CheckStateRole if column in (ENABLED, HIDDEN):
                on = (
                    is_enabled(self._server, info.name)
                    if column == ENABLED
                    else is_hidden(self._server, info.name)
                )
                return Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
            case Qt.ItemDataRole.ToolTipRole:
                if column == 3 or column == 0:
                    text = inert(info.description, limit=2000, multiline=True)
                    return plain_tooltip(text or self._text(info, 0))
                return None
            case Qt.ItemDataRole.AccessibleTextRole:
                name = self._text(info, 0)
                if column == 0:
                    return name
                return f"{name}: {self._text(info, column)}"
            case ToolRole.NAME:
                return info.name
            case ToolRole.INFO:
                return info
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() in (ENABLED, HIDDEN):
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """A ticked box asks for the change (the panel applies it through the host)."""
        if (
            role != Qt.ItemDataRole.CheckStateRole
            or not index.isValid()
            or index.column() not in (ENABLED, HIDDEN)
            or not 0 <= index.row() < len(self._tools)
        ):
            return False
        on = Qt.CheckState(value) == Qt.CheckState.Checked
        name = self._tools[index.row()].name
        if index.column() == ENABLED:
            self.change_requested.emit(name, on, None)
        else:
            self.change_requested.emit(name, None, on)
        return False  # shown as it is until the host has stored it

    # -- filling -------------------------------------------------------------------------------

    def server(self) -> ServerDefinition | None:
        """The server whose tools are shown."""
        return self._server

    def tools(self) -> list[ToolInfo]:
        """The tools shown."""
        return list(self._tools)

    def set_tools(self, server: ServerDefinition, tools: list[ToolInfo]) -> None:
        """Show these tools of ``server``."""
        self.beginResetModel()
        self._server = server
        self._tools = list(tools)
        self.endResetModel()

    def set_server(self, server: ServerDefinition) -> None:
        """The same server's access changed: repaint the checkboxes only."""
        if self._server is None or self._server.id != server.id:
            return
        self._server = server
        if self._tools:
            self.dataChanged.emit(
                self.index(0, ENABLED),
                self.index(len(self._tools) - 1, HIDDEN),
                [Qt.ItemDataRole.CheckStateRole, Qt.ItemDataRole.AccessibleTextRole],
            )

    def clear(self) -> None:
        """Show nothing."""
        self.beginResetModel()
        self._server = None
        self._tools = []
        self.endResetModel()
