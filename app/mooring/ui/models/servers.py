"""The servers table model: one row per configured server with its connection's state."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from mooring.core.servers import Transport
from mooring.core.views import ServerView
from mooring.ui.models.columns import HeadedTableModel
from mooring.ui.text import inert, plain_tooltip

_Index = QModelIndex | QPersistentModelIndex

COLUMNS = ("Name", "Transport", "Command or URL", "Trusted", "Connection")


class ServerRole(IntEnum):
    """The model's named roles."""

    ALIAS = Qt.ItemDataRole.UserRole + 1
    VIEW = Qt.ItemDataRole.UserRole + 2


def cells_of(view: ServerView) -> tuple[str, ...]:
    """A server's row as text (everything user- or server-given is neutralised)."""
    server = view.server
    return (
        inert(server.alias, limit=80) + (" (bundled)" if server.builtin else ""),
        "stdio" if server.transport is Transport.STDIO else "Streamable HTTP",
        inert(server.target, limit=300),
        "yes" if server.trusted else "no",
        inert(view.state_words, limit=300),
    )


class ServerListModel(HeadedTableModel):
    """The configured servers, by name."""

    headings = COLUMNS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._views: list[ServerView] = []

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008  # Qt API
        return 0 if parent.isValid() else len(self._views)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._views):
            return None
        if not 0 <= index.column() < len(COLUMNS):
            return None
        view = self._views[index.row()]
        match role:
            case Qt.ItemDataRole.DisplayRole:
                return cells_of(view)[index.column()]
            case Qt.ItemDataRole.ToolTipRole:
                return plain_tooltip(cells_of(view)[index.column()])
            case Qt.ItemDataRole.AccessibleTextRole:
                return f"{COLUMNS[index.column()]}: {cells_of(view)[index.column()]}"
            case ServerRole.ALIAS:
                return view.server.alias
            case ServerRole.VIEW:
                return view
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def views(self) -> list[ServerView]:
        """The rows shown."""
        return list(self._views)

    def set_views(self, views: list[ServerView]) -> None:
        """Show ``views``: changed rows only when the same servers are listed, else anew."""
        if [v.server.id for v in views] == [v.server.id for v in self._views]:
            for row, view in enumerate(views):
                if view != self._views[row]:
                    self._views[row] = view
                    self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1), [])
            return
        self.beginResetModel()
        self._views = list(views)
        self.endResetModel()
