"""The sample import offered in an empty conversation whose model runs on this computer.

A local model needs no key and no network, so a first run with one can try what Mooring is for
at once: the chip ("Try: Import the sample suppliers") puts words in the message box that ask
the model to call the bundled demo server's import (``core/sample.py``). Nothing is sent until
the user sends it, and the model's call is asked about like any other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QWidget

from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.sample import SAMPLE_PROMPT, SAMPLE_SUGGESTION
from mooring.core.servers import ServerDefinition

__all__ = ["SampleChip"]


class SampleChip(QWidget):
    """A row with the suggestion's button, shown only where it applies (:meth:`consider`)."""

    considered = Signal(bool)
    """Whether the chip is offered, decided again."""

    def __init__(
        self,
        composer: QPlainTextEdit,
        bundled_server: Callable[[], Awaitable[ServerDefinition | None]],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.composer = composer
        self._bundled_server = bundled_server
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.button = QPushButton(SAMPLE_SUGGESTION, self)
        self.button.setObjectName("sample-chip")
        self.button.setAccessibleName(SAMPLE_SUGGESTION)
        self.button.setToolTip(
            "Put a request for the sample import in the message box (the model's tool call "
            "is asked about before it runs)"
        )
        row.addWidget(self.button)
        row.addStretch(1)
        self.button.clicked.connect(self.fill)
        self.setVisible(False)

    def fill(self) -> None:
        """Put the sample's request in the message box, ready to send."""
        self.composer.setPlainText(SAMPLE_PROMPT)
        self.composer.moveCursor(QTextCursor.MoveOperation.End)
        self.composer.setFocus()

    async def consider(self, config: ProviderConfig | None, empty: bool) -> None:
        """Offer the chip when the conversation is ``empty``, its provider ``config`` is a
        local model and the bundled demo server is configured; hide it otherwise."""
        offered = empty and config is not None and config.kind is ProviderKind.LOCAL
        if offered:
            offered = await self._bundled_server() is not None
        self.setVisible(offered)
        self.considered.emit(offered)
