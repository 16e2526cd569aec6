"""The notice above a conversation's transcript: why chat cannot go on, and what to do.

A plain-text message with, where the window can do what it advises (open Settings, a
provider's key or model), a button that asks for it (:attr:`ChatNotice.remedy_requested`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from mooring.core.chat import failure_remedy
from mooring.ui.remedies import remedy_action, remedy_words
from mooring.ui.text import inert

if TYPE_CHECKING:
    from collections.abc import Callable

    from mooring.core.chat import TurnResult
    from mooring.core.errors import Remedy

__all__ = ["ChatNotice"]


class ChatNotice(QWidget):
    """The notice (hidden while there is nothing to say) and its remedy's button."""

    changed = Signal(str)
    """The notice's text changed (empty: hidden)."""
    remedy_requested = Signal(str, str)
    """The button was pressed: the :class:`Remedy` value, the name it is about."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel(self)
        self.label.setObjectName("chat-notice")
        self.label.setAccessibleName("Chat notice")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setVisible(False)
        self.button = QPushButton(self)
        self.button.setObjectName("chat-notice-action")
        self.button.setVisible(False)
        self.button.clicked.connect(self._on_action)
        self._remedy: tuple[Remedy, tuple[str, ...]] | None = None
        row.addWidget(self.label, stretch=1)
        row.addWidget(self.button)
        self.setVisible(False)

    def show_text(
        self, text: str | None, remedy: tuple[Remedy | None, tuple[str, ...]] | None = None
    ) -> None:
        """Say ``text`` (``None`` hides the notice), with a button that does what ``remedy``
        (and its subject) says, where the window has one."""
        self.label.setText(text or "")
        self.label.setVisible(bool(text))
        self.setVisible(bool(text))
        action = remedy_action(remedy[0]) if text and remedy is not None else None
        if action is not None and remedy is not None and remedy[0] is not None:
            self._remedy = (remedy[0], remedy[1])
            self.button.setText(action)
            self.button.setAccessibleName(action.rstrip("…"))
        else:
            self._remedy = None
        self.button.setVisible(action is not None)
        self.changed.emit(text or "")

    def show_failure(self, result: TurnResult, say: Callable[[str], None]) -> None:
        """Say why a turn failed (``say``: the failure in words, for the status line), with
        what to do in the window (never a command line)."""
        assert result.error is not None
        remedy = failure_remedy(result.error_kind)
        subject = (result.provider,) if result.provider else ()
        words = inert(result.error, limit=300)
        advice = remedy_words(remedy, subject)
        say(words)
        if advice:
            self.show_text(f"{words} {advice}", (remedy, subject))

    def _on_action(self) -> None:
        if self._remedy is not None:
            remedy, subject = self._remedy
            self.remedy_requested.emit(remedy.value, subject[0] if subject else "")
