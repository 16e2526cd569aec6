"""Find in the open conversation: a bar over the transcript that moves through the messages
whose text holds the words typed (Enter / F3 next, Shift+Enter / Shift+F3 previous, Esc
closes). It reads the transcript model's accessible text (what is painted: speaker and text),
case-insensitively; the conversation list's search field finds across conversations.

Only the messages loaded in the transcript are searched (the newest page, and the older
pages already fetched by scrolling up); the bar says so when nothing is found."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

TITLE = "Find in conversation"


class _FindField(QLineEdit):
    """The words to find: Enter goes to the next match, Shift+Enter to the previous one."""

    next_wanted = Signal()
    previous_wanted = Signal()
    close_wanted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # Qt API
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.previous_wanted.emit()
            else:
                self.next_wanted.emit()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.close_wanted.emit()
            return
        super().keyPressEvent(event)


class FindBar(QWidget):
    """Finds text in the rows of ``view``'s model and makes the match the current row."""

    def __init__(self, view: QAbstractItemView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._view = view
        self.setAccessibleName(TITLE)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.field = _FindField(self)
        self.field.setPlaceholderText(TITLE)
        self.field.setAccessibleName(TITLE)
        self.field.setClearButtonEnabled(True)
        layout.addWidget(self.field, 1)
        self.status = QLabel(self)
        self.status.setAccessibleName("Find result")
        self.status.setMinimumWidth(self.status.fontMetrics().horizontalAdvance("999 of 999"))
        layout.addWidget(self.status)
        self.previous_button = QPushButton("Previous", self)
        self.previous_button.setAccessibleName("Previous match")
        self.next_button = QPushButton("Next", self)
        self.next_button.setAccessibleName("Next match")
        self.close_button = QPushButton("Close", self)
        self.close_button.setAccessibleName("Close find")
        for button in (self.previous_button, self.next_button, self.close_button):
            button.setAutoDefault(False)
            layout.addWidget(button)
        self.field.textChanged.connect(self._on_text)
        self.field.next_wanted.connect(self.find_next)
        self.field.previous_wanted.connect(self.find_previous)
        self.field.close_wanted.connect(self.close_bar)
        self.next_button.clicked.connect(self.find_next)
        self.previous_button.clicked.connect(self.find_previous)
        self.close_button.clicked.connect(self.close_bar)
        for keys, slot in (
            (QKeySequence.StandardKey.FindNext, self.find_next),
            (QKeySequence.StandardKey.FindPrevious, self.find_previous),
        ):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
        self.hide()

    def open_bar(self) -> None:
        """Show the bar with its words chosen, ready to type over."""
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()
        if self.field.text():
            self._update_status()

    def close_bar(self) -> None:
        """Hide the bar; the transcript keeps the match chosen and takes the focus."""
        self.hide()
        self._view.setFocus(Qt.FocusReason.OtherFocusReason)

    def _model(self) -> QAbstractItemModel:
        return self._view.model()

    def _text(self, row: int) -> str:
        index = self._model().index(row, 0)
        return str(index.data(Qt.ItemDataRole.AccessibleTextRole) or "")

    def matches(self) -> list[int]:
        """The rows whose text holds the words (case-insensitive), in order."""
        words = self.field.text().strip().casefold()
        if not words:
            return []
        return [
            row for row in range(self._model().rowCount()) if words in self._text(row).casefold()
        ]

    def _current(self) -> int:
        index = self._view.currentIndex()
        return index.row() if index.isValid() else -1

    def find_next(self) -> bool:
        """Choose the next matching row after the current one (wrapping); whether one was."""
        return self._go(forward=True)

    def find_previous(self) -> bool:
        """Choose the previous matching row (wrapping); whether one was."""
        return self._go(forward=False)

    def _on_text(self, _text: str) -> None:
        # Typing keeps the current match when it still matches, else goes to the next one.
        rows = self.matches()
        if self._current() in rows:
            self._update_status(rows)
        elif rows:
            self._go(forward=True, rows=rows, from_row=self._current())
        else:
            self._update_status(rows)

    def _go(
        self, *, forward: bool, rows: list[int] | None = None, from_row: int | None = None
    ) -> bool:
        rows = self.matches() if rows is None else rows
        if not rows:
            self._update_status(rows)
            return False
        current = self._current() if from_row is None else from_row
        if forward:
            after = [r for r in rows if r > current]
            target = after[0] if after else rows[0]
        else:
            before = [r for r in rows if r < current]
            target = before[-1] if before else rows[-1]
        index: QModelIndex = self._model().index(target, 0)
        self._view.setCurrentIndex(index)
        self._view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        self._update_status(rows)
        return True

    def _update_status(self, rows: list[int] | None = None) -> None:
        rows = self.matches() if rows is None else rows
        if not self.field.text().strip():
            self.status.setText("")
        elif not rows:
            self.status.setText("Not found in the loaded messages")
        else:
            current = self._current()
            place = rows.index(current) + 1 if current in rows else 0
            self.status.setText(f"{place} of {len(rows)}" if place else f"{len(rows)} found")
        self.next_button.setEnabled(bool(rows))
        self.previous_button.setEnabled(bool(rows))
