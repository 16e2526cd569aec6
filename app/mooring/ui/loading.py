"""The window's "loading" state: what a view shows while the host and its data load.

The main window is painted before the database is opened and the host is built (see
``docs/window.md``, "Start-up"); each view's place holds a :class:`LoadingPage` until its panel
exists. This module loads nothing but QtWidgets, so the shell costs no more than a bare window.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget


class LoadingPage(QWidget):
    """A view's place while it loads: "Loading <what>…" and a busy bar, both named for
    assistive technology."""

    def __init__(self, what: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("loading-page")
        self.setAccessibleName(f"{what} (loading)")
        self.words = f"Loading {what.lower()}…"
        column = QVBoxLayout(self)
        column.addStretch(1)
        self.label = QLabel(self.words, self)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setAccessibleName(self.words)
        column.addWidget(self.label)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 0)  # busy: how long it takes is not known
        self.bar.setTextVisible(False)
        self.bar.setMaximumWidth(240)
        self.bar.setAccessibleName(f"Loading {what.lower()}")
        self.bar.setAccessibleDescription("Mooring is opening its database")
        column.addWidget(self.bar, alignment=Qt.AlignmentFlag.AlignHCenter)
        column.addStretch(1)
