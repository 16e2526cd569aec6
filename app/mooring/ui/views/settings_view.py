"""The Settings view: where the data lives, and every setting (read-only here for now)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)


@dataclass(frozen=True, slots=True)
class SettingRow:
    """One setting as shown: key, current value, what it does."""

    key: str
    value: str
    description: str


@dataclass(frozen=True, slots=True)
class WindowInfo:
    """What the composition root tells the window about this installation."""

    data_dir: str
    database: str
    schema: str
    settings_file: str = ""
    log_file: str = ""
    settings: Sequence[SettingRow] = field(default_factory=tuple)


class SettingsView(QWidget):
    """The "Settings" view."""

    def __init__(self, info: WindowInfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("settings-view")
        self.setAccessibleName("Settings")
        layout = QVBoxLayout(self)
        where = QGroupBox("Where your data lives", self)
        form = QFormLayout(where)
        self.data_dir_label = self._value(info.data_dir)
        self.database_label = self._value(info.database)
        self.schema_label = self._value(info.schema)
        self.settings_file_label = self._value(info.settings_file)
        self.log_file_label = self._value(info.log_file)
        form.addRow("Data folder:", self.data_dir_label)
        form.addRow("Database:", self.database_label)
        form.addRow("Schema:", self.schema_label)
        form.addRow("Settings file:", self.settings_file_label)
        form.addRow("Log file:", self.log_file_label)
        layout.addWidget(where)
        box = QGroupBox("Settings (change them with `mooring settings set KEY VALUE`)", self)
        inner = QVBoxLayout(box)
        self.table = QTableWidget(len(info.settings), 3, box)
        self.table.setObjectName("settings-table")
        self.table.setAccessibleName("Settings list")
        self.table.setHorizontalHeaderLabels(("Setting", "Value", "What it does"))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        for row, setting in enumerate(info.settings):
            for column, text in enumerate((setting.key, setting.value, setting.description)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(row, column, item)
        self.table.resizeColumnToContents(0)
        self.table.resizeColumnToContents(1)
        inner.addWidget(self.table)
        layout.addWidget(box, stretch=1)
        self.export_button = QPushButton("Export traces…", self)
        self.export_button.setAccessibleName("Export traces")
        layout.addWidget(self.export_button, alignment=Qt.AlignmentFlag.AlignLeft)

    def _value(self, text: str) -> QLabel:
        label = QLabel(text, self)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setWordWrap(True)
        return label
