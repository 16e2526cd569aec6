"""The tasks list model: one row per task, newest first, fed by the host's views.

A thin projection: the rows are :class:`TaskView` values the host built; the model only maps
them to named roles. An update replaces one row and emits ``dataChanged`` for that row alone.
What the delegate paints (the title and the state words) is also what
``Qt.AccessibleTextRole`` returns, so a screen reader reads exactly what is drawn.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractListModel, QByteArray, QModelIndex, QPersistentModelIndex, Qt

from mooring.core.views import TaskView
from mooring.ui.text import inert, plain_tooltip

_Index = QModelIndex | QPersistentModelIndex

MAX_ROWS = 500
"""Finished tasks beyond this many are dropped from the list (they stay in the ledger)."""


class TaskRole(IntEnum):
    """The model's named roles."""

    ID = Qt.ItemDataRole.UserRole + 1
    VIEW = Qt.ItemDataRole.UserRole + 2
    STATE_WORDS = Qt.ItemDataRole.UserRole + 3
    DETAIL = Qt.ItemDataRole.UserRole + 4
    TONE = Qt.ItemDataRole.UserRole + 5
    SERVER = Qt.ItemDataRole.UserRole + 6
    TOOL = Qt.ItemDataRole.UserRole + 7


def title_of(view: TaskView) -> str:
    """The first line of a task's row: which tool on which server (neutralised)."""
    return f"{inert(view.record.tool, limit=120)} on {inert(view.server_label, limit=80)}"


def state_line(view: TaskView) -> str:
    """The second line: the state words, with the detail (server text, neutralised)."""
    detail = inert(view.words.detail, limit=300)
    return f"{view.words.label} — {detail}" if detail else view.words.label


class TaskListModel(QAbstractListModel):
    """Every task the window knows of, newest first."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._views: list[TaskView] = []
        self._rows: dict[str, int] | None = None
        """Each listed task's row (rebuilt after rows move)."""

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008  # Qt API
        return 0 if parent.isValid() else len(self._views)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._views):
            return None
        view = self._views[index.row()]
        match role:
            case Qt.ItemDataRole.DisplayRole:
                return title_of(view)
            case Qt.ItemDataRole.AccessibleTextRole:
                return f"{title_of(view)}: {state_line(view)}"
            case Qt.ItemDataRole.ToolTipRole:
                return plain_tooltip(f"{title_of(view)}\n{state_line(view)}")
            case TaskRole.ID:
                return view.id
            case TaskRole.VIEW:
                return view
            case TaskRole.STATE_WORDS:
                return view.words.label
            case TaskRole.DETAIL:
                return inert(view.words.detail, limit=300)
            case TaskRole.TONE:
                return view.words.tone.value
            case TaskRole.SERVER:
                return inert(view.server_label, limit=80)
            case TaskRole.TOOL:
                return inert(view.record.tool, limit=120)
        return None

    def roleNames(self) -> dict[int, QByteArray]:  # Qt API
        names = dict(super().roleNames())
        names.update(
            {
                TaskRole.ID.value: QByteArray(b"taskId"),
                TaskRole.VIEW.value: QByteArray(b"view"),
                TaskRole.STATE_WORDS.value: QByteArray(b"stateWords"),
                TaskRole.DETAIL.value: QByteArray(b"detail"),
                TaskRole.TONE.value: QByteArray(b"tone"),
                TaskRole.SERVER.value: QByteArray(b"server"),
                TaskRole.TOOL.value: QByteArray(b"tool"),
            }
        )
        return names

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # -- updates from the host -----------------------------------------------------------------

    def reset_views(self, views: list[TaskView]) -> None:
        """Show exactly ``views`` (newest first), e.g. the last known state at launch."""
        self.beginResetModel()
        self._views = list(views[:MAX_ROWS])
        self._rows = None
        self.endResetModel()

    def _index(self) -> dict[str, int]:
        if self._rows is None:
            self._rows = {view.id: row for row, view in enumerate(self._views)}
        return self._rows

    def row_of(self, record_id: str) -> int:
        """The row of a task, or -1."""
        return self._index().get(record_id, -1)

    def unfinished(self) -> list[TaskView]:
        """The rows whose task had not ended when they were last read."""
        return [v for v in self._views if not v.record.is_terminal]

    def view(self, record_id: str) -> TaskView | None:
        """The current view of a task, if listed."""
        row = self.row_of(record_id)
        return self._views[row] if row >= 0 else None

    def upsert(self, view: TaskView) -> None:
        """Show ``view``: replace its row (one ``dataChanged``) or add it at the top.

        A view older than the one shown (an event that arrived late) is ignored.
        """
        self.upsert_many([view])

    def upsert_many(self, views: list[TaskView]) -> None:
        """Show each of ``views`` as :meth:`upsert` does, in one update: one ``dataChanged``
        over the replaced rows, one insertion at the top for the new ones (newest first)."""
        index = self._index()
        changed: list[int] = []
        new: dict[str, TaskView] = {}
        for view in views:
            row = index.get(view.id, -1)
            if row < 0:
                known = new.get(view.id)
                if known is None or view.record.updated_at >= known.record.updated_at:
                    new[view.id] = view
                continue
            shown = self._views[row]
            if view.record.updated_at < shown.record.updated_at or view == shown:
                continue
            self._views[row] = view
            changed.append(row)
        if changed:
            self.dataChanged.emit(self.index(min(changed), 0), self.index(max(changed), 0), [])
        if not new:
            return
        added = sorted(new.values(), key=lambda v: v.record.created_at, reverse=True)
        self.beginInsertRows(QModelIndex(), 0, len(added) - 1)
        self._views[0:0] = added
        self._rows = None
        self.endInsertRows()
        last = len(self._views) - 1
        first = last
        while first >= MAX_ROWS and self._views[first].record.is_terminal:
            first -= 1
        if first < last:
            self.beginRemoveRows(QModelIndex(), first + 1, last)
            del self._views[first + 1 :]
            self._rows = None
            self.endRemoveRows()
