"""The message box under the transcript.

Kept apart from the Conversations view so what the box does with keys (and, later, pickers it
opens) lives in one place; the view only listens to :attr:`Composer.submitted`.
"""

from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QPlainTextEdit, QWidget

__all__ = ["Composer"]


class Composer(QPlainTextEdit):
    """The message box: Enter sends, Shift+Enter starts a new line; Tab leaves the box."""

    submitted = Signal()
    """Enter was pressed (the view sends what the box holds)."""
    files_dropped = Signal(list)
    """Local files were dropped or pasted on the box: their paths (``list[str]``); the view
    attaches them instead of inserting their names."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self.setAccessibleName("Message")
        self.setPlaceholderText("Message (Enter sends, Shift+Enter for a new line)")
        self.setTabChangesFocus(True)
        self.setMaximumHeight(120)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # Qt API
        return bool(_local_files(source)) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:  # Qt API
        paths = _local_files(source)
        if paths:
            self.files_dropped.emit(paths)
            return
        super().insertFromMimeData(source)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # Qt API
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submitted.emit()
            return
        super().keyPressEvent(event)


def _local_files(source: QMimeData) -> list[str]:
    if not source.hasUrls():
        return []
    return [url.toLocalFile() for url in source.urls() if url.isLocalFile()]
