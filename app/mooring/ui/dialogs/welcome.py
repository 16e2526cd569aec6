"""The first-run welcome: what Mooring does in two sentences and ways to start — import
servers from other apps, try the sample import on the bundled server, set up a model provider,
or use a local model (a GGUF file Mooring runs itself).

It is not modal and closes with Esc: nothing waits for it, and a user who just wants to look
around closes it or ignores it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from mooring.core.server_import import ConfigPreview

TITLE = "Welcome to Mooring"
ABOUT = (
    "Mooring runs the tools of your MCP servers — for you, and for a model if you set one up; "
    "long jobs become tasks that keep going when you close the window, and their cards in the "
    "Tasks tab say where each one stands.\n\n"
    "Before a tool runs, Mooring asks you to approve it (once, for a conversation, or always), "
    "so nothing changes behind your back."
)


class WelcomeDialog(QDialog):
    """The welcome; its buttons ask the window to act (and then close it)."""

    import_requested = Signal()
    sample_requested = Signal()
    providers_requested = Signal()
    local_requested = Signal()
    filled = Signal()
    """What other apps' settings hold, and whether the sample can run, are shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setObjectName("welcome-dialog")
        self.setModal(False)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.previews: list[ConfigPreview] = []
        self.is_filled = False
        """Whether :attr:`filled` was emitted."""
        layout = QVBoxLayout(self)
        # Wrapped labels need their height for the width: the dialog takes its layout's size.
        layout.setSizeConstraint(QLayout.SizeConstraint.SetFixedSize)
        heading = QLabel(TITLE, self)
        font = QFont(heading.font())
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        heading.setFont(font)
        layout.addWidget(heading)
        about = QLabel(ABOUT, self)
        about.setTextFormat(Qt.TextFormat.PlainText)
        about.setWordWrap(True)
        about.setFixedWidth(560)
        layout.addWidget(about)
        self.import_button = QPushButton("Import servers…", self)
        self.import_button.setAccessibleName("Import servers")
        self.import_note = QLabel("Looking for Claude Desktop, VS Code and Cursor settings…", self)
        self.sample_button = QPushButton("Try the sample import", self)
        self.sample_button.setAccessibleName("Try the sample import")
        self.sample_note = QLabel(
            "Imports a small supplier list on the bundled demo server: you approve it, the "
            "task asks you which column holds the supplier ids, and you answer it.",
            self,
        )
        self.providers_button = QPushButton("Set up a model provider", self)
        self.providers_button.setAccessibleName("Set up a model provider")
        self.providers_note = QLabel(
            "Chat needs a model: OpenAI-compatible (also Ollama, LM Studio) or Anthropic, in "
            "Settings. Tools work without one (File → Run a tool…, Ctrl+K).",
            self,
        )
        self.local_button = QPushButton("Use a local model", self)
        self.local_button.setAccessibleName("Use a local model")
        self.local_note = QLabel(
            "Chat with a model that runs on this computer: no key, no account, no network. "
            "Give its GGUF file (docs/local-models.md lists small ones that call tools).",
            self,
        )
        for button, note in (
            (self.import_button, self.import_note),
            (self.sample_button, self.sample_note),
            (self.providers_button, self.providers_note),
            (self.local_button, self.local_note),
        ):
            note.setTextFormat(Qt.TextFormat.PlainText)
            note.setWordWrap(True)
            note.setFixedWidth(340)
            row = QHBoxLayout()
            button.setMinimumWidth(200)
            row.addWidget(button, alignment=Qt.AlignmentFlag.AlignTop)
            row.addWidget(note, stretch=1)
            layout.addLayout(row)
        self.buttons = QDialogButtonBox(self)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.close_button.setText("Look around")
        self.close_button.setAccessibleName("Look around")
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.import_button.clicked.connect(lambda: self._then(self.import_requested))
        self.sample_button.clicked.connect(lambda: self._then(self.sample_requested))
        self.providers_button.clicked.connect(lambda: self._then(self.providers_requested))
        self.local_button.clicked.connect(lambda: self._then(self.local_requested))
        self.import_button.setEnabled(False)
        self.close_button.setFocus()

    def _then(self, signal: SignalInstance) -> None:
        self.accept()
        signal.emit()

    def show_found(self, previews: list[ConfigPreview]) -> None:
        """Say what other apps' configurations hold (the import button needs something new)."""
        self.previews = previews
        new = sum(len(p.new) for p in previews)
        apps = sorted({p.source.app for p in previews if p.new})
        if new:
            self.import_button.setEnabled(True)
            self.import_note.setText(
                f"Found {new} server(s) in {', '.join(apps)} that you can bring over."
            )
        elif previews:
            self.import_note.setText(
                "Found settings of "
                + ", ".join(sorted({p.source.app for p in previews}))
                + ", with nothing new to import."
            )
        else:
            self.import_note.setText(
                "No Claude Desktop, VS Code or Cursor settings were found; add servers in the "
                "Servers tab."
            )

    def set_sample_available(self, available: bool) -> None:
        """Whether the bundled demo server is configured (the sample import needs it)."""
        self.sample_button.setEnabled(available)
        if not available:
            self.sample_note.setText("The bundled demo server is not configured here.")
