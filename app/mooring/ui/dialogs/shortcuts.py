"""The keyboard shortcuts, listed from the window's own menus (so the list cannot go stale)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

TITLE = "Keyboard shortcuts"


class ShortcutsDialog(QDialog):
    """A read-only table: the keys, and what they do."""

    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setAccessibleName(TITLE)
        layout = QVBoxLayout(self)
        self.table = QTableWidget(len(rows), 2, self)
        self.table.setAccessibleName("Shortcuts")
        self.table.setHorizontalHeaderLabels(["Keys", "Does"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        for number, (keys, does) in enumerate(rows):
            self.table.setItem(number, 0, QTableWidgetItem(keys))
            self.table.setItem(number, 1, QTableWidgetItem(does))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        layout.addWidget(self.table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(460, 360)
