"""A conversation's system prompt: its own instructions to the model, none, or the default of
Settings. Mooring's own guidance on tools, tasks and approvals is always sent first; the
dialog says so rather than showing it for editing."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

TITLE = "System prompt"
MAX_CHARS = 20_000
"""As the chat service allows (``services.chat.MAX_SYSTEM_PROMPT``)."""


class Source(Enum):
    """Where a conversation's instructions come from."""

    DEFAULT = "default"
    OWN = "own"


@dataclass(frozen=True, slots=True)
class SystemPromptChoice:
    """What the user chose: ``text`` is ``None`` for the default of Settings."""

    text: str | None


class SystemPromptDialog(QDialog):
    """Choose the default of Settings, or write this conversation's own instructions (empty:
    none at all)."""

    def __init__(self, current: str | None, default: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setAccessibleName(TITLE)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Your instructions to the model in this conversation. Mooring's own guidance on "
            "tools, background tasks and approvals is always sent before them.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.use_default = QRadioButton("&Use the default of Settings", self)
        self.use_default.setAccessibleName("Use the default system prompt")
        self.use_own = QRadioButton("&Write this conversation's own", self)
        self.use_own.setAccessibleName("Write this conversation's own system prompt")
        group = QButtonGroup(self)
        group.addButton(self.use_default)
        group.addButton(self.use_own)
        layout.addWidget(self.use_default)
        self.default_view = QPlainTextEdit(self)
        self.default_view.setPlainText(default or "(none)")
        self.default_view.setReadOnly(True)
        self.default_view.setAccessibleName("Default system prompt")
        self.default_view.setMaximumHeight(70)
        layout.addWidget(self.default_view)
        layout.addWidget(self.use_own)
        self.editor = QPlainTextEdit(self)
        self.editor.setAccessibleName("This conversation's system prompt")
        self.editor.setPlaceholderText("For example: Answer briefly, in French.")
        self.editor.setTabChangesFocus(True)
        layout.addWidget(self.editor)
        self.count = QLabel(self)
        self.count.setAccessibleName("Length of the system prompt")
        layout.addWidget(self.count)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

        if current is None:
            self.use_default.setChecked(True)
            self.editor.setPlainText(default)  # a start to edit from, if the user switches
        else:
            self.use_own.setChecked(True)
            self.editor.setPlainText(current)
        self.use_own.toggled.connect(self._update)
        self.editor.textChanged.connect(self._update)
        self._update()
        self.resize(520, 420)

    def _update(self) -> None:
        own = self.use_own.isChecked()
        self.editor.setEnabled(own)
        length = len(self.editor.toPlainText())
        too_long = own and length > MAX_CHARS
        self.count.setText(
            f"{length:,} of at most {MAX_CHARS:,} characters"
            + (" — too long to save" if too_long else "")
        )
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        save.setEnabled(not too_long)

    @property
    def source(self) -> Source:
        return Source.OWN if self.use_own.isChecked() else Source.DEFAULT

    def choice(self) -> SystemPromptChoice:
        """What to store: the conversation's own text, or ``None`` for the default."""
        if self.source is Source.DEFAULT:
            return SystemPromptChoice(None)
        return SystemPromptChoice(self.editor.toPlainText())
