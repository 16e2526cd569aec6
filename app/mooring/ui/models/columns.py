"""A table model whose columns are a fixed tuple of headings."""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

_Index = QModelIndex | QPersistentModelIndex


class HeadedTableModel(QAbstractTableModel):
    """``columnCount`` and the horizontal ``headerData`` from :attr:`headings`."""

    headings: ClassVar[tuple[str, ...]] = ()

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008  # Qt API
        return 0 if parent.isValid() else len(self.headings)

    def headerData(  # Qt API
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation is Qt.Orientation.Horizontal
            and 0 <= section < len(self.headings)
        ):
            return self.headings[section]
        return None
