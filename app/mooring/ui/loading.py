"""The window's "loading" state: what a view shows while the host and its data load.

The main window is painted before the database is opened and the host is built (see
``docs/window.md``, "Start-up"); each view's place holds a :class:`LoadingPage` until its panel
exists. This module loads nothing but QtWidgets (not even Qt's namespace of enums), so the
shell costs about what a bare window does.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QVBoxLayout, QWidget


class LoadingPage(QWidget):
    """A view's place while it loads: "Loading <what>…" and a busy bar, both named for
    assistive technology."""

    def __init__(self, what: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("loading-page")
        self.setAccessibleName(f"{what} (loading)")
        self.words = f"Loading {what.lower()}…"
        # Centred by stretches, not alignment flags: Qt's namespace of enums is not loaded yet.
        column = QVBoxLayout(self)
        column.addStretch(1)
        self.label = QLabel(self.words, self)  # our own words, never markup
        self.label.setAccessibleName(self.words)
        column.addLayout(_centred(self.label))
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 0)  # busy: how long it takes is not known
        self.bar.setTextVisible(False)
        self.bar.setFixedWidth(240)
        self.bar.setAccessibleName(f"Loading {what.lower()}")
        self.bar.setAccessibleDescription("Mooring is opening its database")
        column.addLayout(_centred(self.bar))
        column.addStretch(1)


def _centred(widget: QWidget) -> QHBoxLayout:
    row = QHBoxLayout()
    row.addStretch(1)
    row.addWidget(widget)
    row.addStretch(1)
    return row
