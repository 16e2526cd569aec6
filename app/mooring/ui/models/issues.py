"""The issues list model: what reconciliation and monitoring found that needs the user."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from mooring.core.views import IssueView
from mooring.ui.text import inert, plain_tooltip

_Index = QModelIndex | QPersistentModelIndex


class IssueRole(IntEnum):
    """The model's named roles."""

    ID = Qt.ItemDataRole.UserRole + 1
    VIEW = Qt.ItemDataRole.UserRole + 2
    DETAIL = Qt.ItemDataRole.UserRole + 3


class IssueListModel(QAbstractListModel):
    """The open issues, oldest first (as the host lists them)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._views: list[IssueView] = []

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008  # Qt API
        return 0 if parent.isValid() else len(self._views)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._views):
            return None
        view = self._views[index.row()]
        title = inert(view.issue.title, limit=300)
        detail = inert(view.issue.detail, limit=1000)
        match role:
            case Qt.ItemDataRole.DisplayRole:
                return title
            case Qt.ItemDataRole.AccessibleTextRole:
                return f"{title} — {detail}" if detail else title
            case Qt.ItemDataRole.ToolTipRole:
                return plain_tooltip(f"{title} — {detail}" if detail else title)
            case IssueRole.ID:
                return view.issue.id
            case IssueRole.VIEW:
                return view
            case IssueRole.DETAIL:
                return detail
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def views(self) -> list[IssueView]:
        """The rows shown."""
        return list(self._views)

    def set_views(self, views: list[IssueView]) -> None:
        """Show ``views`` (changed rows only, when the same issues are listed)."""
        if [v.issue.id for v in views] == [v.issue.id for v in self._views]:
            for row, view in enumerate(views):
                if view != self._views[row]:
                    self._views[row] = view
                    index = self.index(row, 0)
                    self.dataChanged.emit(index, index, [])
            return
        self.beginResetModel()
        self._views = list(views)
        self.endResetModel()
