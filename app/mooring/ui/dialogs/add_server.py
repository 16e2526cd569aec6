"""Adding a server: a stdio command or a Streamable HTTP URL, and whether to trust it."""

from __future__ import annotations

import shlex

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from mooring.services.host import ServerSpec

TITLE = "Add server"


class AddServerDialog(QDialog):
    """Collects a :class:`ServerSpec`; :meth:`spec` says what is missing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setObjectName("add-server-dialog")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.alias_edit = QLineEdit(self)
        self.alias_edit.setAccessibleName("Name")
        self.stdio_radio = QRadioButton("Local program (stdio)", self)
        self.http_radio = QRadioButton("Streamable HTTP URL", self)
        self.stdio_radio.setChecked(True)
        self.command_edit = QLineEdit(self)
        self.command_edit.setAccessibleName("Command")
        self.command_edit.setPlaceholderText("e.g. npx -y @modelcontextprotocol/server-everything")
        self.url_edit = QLineEdit(self)
        self.url_edit.setAccessibleName("URL")
        self.url_edit.setPlaceholderText("https://example.com/mcp")
        self.trusted_check = QCheckBox("Trust this server's tool annotations", self)
        form.addRow("Name:", self.alias_edit)
        form.addRow("Kind:", self.stdio_radio)
        form.addRow("", self.http_radio)
        form.addRow("Command:", self.command_edit)
        form.addRow("URL:", self.url_edit)
        form.addRow("", self.trusted_check)
        layout.addLayout(form)
        self.error_label = QLabel(self)
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setStyleSheet("color: #c0392b;")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        layout.addWidget(self.error_label)
        self.buttons = QDialogButtonBox(self)
        self.add_button = self.buttons.addButton("Add", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setAccessibleName("Add")
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._check)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.stdio_radio.toggled.connect(self._kind)
        self._kind()

    def _kind(self) -> None:
        stdio = self.stdio_radio.isChecked()
        self.command_edit.setEnabled(stdio)
        self.url_edit.setEnabled(not stdio)

    def show_error(self, text: str) -> None:
        """Say what is wrong (the dialog stays open, nothing typed is lost)."""
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))

    def spec(self) -> ServerSpec:
        """The server to add; raises ``ValueError`` with a message saying what to fix."""
        alias = self.alias_edit.text().strip()
        if not alias:
            raise ValueError("Give the server a name.")
        if self.stdio_radio.isChecked():
            try:
                words = shlex.split(self.command_edit.text())
            except ValueError as exc:
                raise ValueError(f"The command cannot be read: {exc}.") from exc
            if not words:
                raise ValueError("Type the command that starts the server.")
            return ServerSpec(
                alias=alias,
                command=words[0],
                args=tuple(words[1:]),
                trusted=self.trusted_check.isChecked(),
            )
        url = self.url_edit.text().strip()
        if not url.startswith(("http://", "https://")):
            raise ValueError("The URL must start with http:// or https://.")
        return ServerSpec(alias=alias, url=url, trusted=self.trusted_check.isChecked())

    def _check(self) -> None:
        try:
            self.spec()
        except ValueError as exc:
            self.show_error(str(exc))
            return
        self.show_error("")
        self.accept()
