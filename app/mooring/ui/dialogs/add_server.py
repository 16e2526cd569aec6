"""Adding or editing a server: a stdio command or a Streamable HTTP URL, its environment
(secret values to the keyring, values that are not secret to the database, values read from
Mooring's own environment by name) or headers (secrets: the keyring keeps them), trust, and
which tools may run."""

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
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from mooring.core.servers import ServerDefinition, Transport
from mooring.core.views import ServerSpec
from mooring.ui.text import inert

TITLE = "Add server"
EDIT_TITLE = "Edit server"
KEPT = "(kept in the keyring: leave empty to keep)"


def _pairs(text: str, what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        name, sep, value = line.partition("=")
        if not name.strip() or (not sep and what == "header"):
            raise ValueError(f"Line {number} of the {what}s should look like NAME=VALUE.")
        pairs[name.strip()] = value.strip() if sep else ""
    return pairs


def _names(text: str) -> tuple[str, ...]:
    return tuple(n for n in (part.strip() for part in text.replace("\n", ",").split(",")) if n)


class AddServerDialog(QDialog):
    """Collects a :class:`ServerSpec`; :meth:`spec` says what is missing. Given a
    ``server``, it edits that server (titled "Edit server"; secret values are never shown:
    a name listed without a value keeps the stored one)."""

    def __init__(self, parent: QWidget | None = None, server: ServerDefinition | None = None):
        super().__init__(parent)
        self.editing = server
        self.setWindowTitle(EDIT_TITLE if server else TITLE)
        self.setObjectName("edit-server-dialog" if server else "add-server-dialog")
        self.setMinimumWidth(540)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.alias_edit = QLineEdit(self)
        self.alias_edit.setAccessibleName("Name")
        self.stdio_radio = QRadioButton("Local program (stdio)", self)
        self.stdio_radio.setAccessibleName("Local program (stdio)")
        self.http_radio = QRadioButton("Streamable HTTP URL", self)
        self.http_radio.setAccessibleName("Streamable HTTP URL")
        self.stdio_radio.setChecked(True)
        self.command_edit = QLineEdit(self)
        self.command_edit.setAccessibleName("Command")
        self.command_edit.setPlaceholderText("e.g. npx -y @modelcontextprotocol/server-everything")
        self.cwd_edit = QLineEdit(self)
        self.cwd_edit.setAccessibleName("Working folder")
        self.cwd_edit.setPlaceholderText("optional")
        self.env_edit = QPlainTextEdit(self)
        self.env_edit.setAccessibleName("Environment (secret)")
        self.env_edit.setPlaceholderText(
            "NAME=value, one per line: secrets such as API keys (values go to the keyring)"
        )
        self.env_edit.setTabChangesFocus(True)
        self.env_edit.setFixedHeight(64)
        self.plain_env_edit = QPlainTextEdit(self)
        self.plain_env_edit.setAccessibleName("Environment (not secret)")
        self.plain_env_edit.setPlaceholderText(
            "NAME=value, one per line: paths and settings (stored in Mooring's database)"
        )
        self.plain_env_edit.setTabChangesFocus(True)
        self.plain_env_edit.setFixedHeight(64)
        self.env_refs_edit = QPlainTextEdit(self)
        self.env_refs_edit.setAccessibleName("Environment from variables")
        self.env_refs_edit.setPlaceholderText(
            "NAME=VARIABLE, one per line: read from Mooring's environment when the server starts"
        )
        self.env_refs_edit.setTabChangesFocus(True)
        self.env_refs_edit.setFixedHeight(64)
        self.url_edit = QLineEdit(self)
        self.url_edit.setAccessibleName("URL")
        self.url_edit.setPlaceholderText("https://example.com/mcp")
        self.headers_edit = QPlainTextEdit(self)
        self.headers_edit.setAccessibleName("Headers")
        self.headers_edit.setPlaceholderText("Name=value, one per line (values go to the keyring)")
        self.headers_edit.setTabChangesFocus(True)
        self.headers_edit.setFixedHeight(64)
        self.trusted_check = QCheckBox("Trust this server's tool annotations", self)
        self.trusted_check.setAccessibleName("Trusted")
        self.allowed_edit = QLineEdit(self)
        self.allowed_edit.setAccessibleName("Allowed tools")
        self.allowed_edit.setPlaceholderText("empty: every tool; else names or patterns, a, b*")
        self.hidden_edit = QLineEdit(self)
        self.hidden_edit.setAccessibleName("Hidden tools")
        self.hidden_edit.setPlaceholderText("names or patterns never shown to the model")
        form.addRow("&Name:", self.alias_edit)
        form.addRow("Kind:", self.stdio_radio)
        form.addRow("", self.http_radio)
        form.addRow("&Command:", self.command_edit)
        form.addRow("&Working folder:", self.cwd_edit)
        form.addRow("&Environment (secret):", self.env_edit)
        form.addRow("Environment (n&ot secret):", self.plain_env_edit)
        form.addRow("Environment from &variables:", self.env_refs_edit)
        form.addRow("&URL:", self.url_edit)
        form.addRow("&Headers:", self.headers_edit)
        form.addRow("", self.trusted_check)
        form.addRow("&Allowed tools:", self.allowed_edit)
        form.addRow("Hi&dden tools:", self.hidden_edit)
        layout.addLayout(form)
        self.error_label = QLabel(self)
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setStyleSheet("color: #c0392b;")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        layout.addWidget(self.error_label)
        self.move_button = QPushButton("Store them as not secret", self)
        self.move_button.setAccessibleName("Store the secret environment values as not secret")
        self.move_button.setToolTip(
            "For values that are not secrets (paths, settings): moves them to Environment "
            "(not secret)"
        )
        self.move_button.clicked.connect(self.move_to_not_secret)
        self.move_button.setVisible(False)
        layout.addWidget(self.move_button)
        self.buttons = QDialogButtonBox(self)
        verb = "Save" if server else "Add"
        self.add_button = self.buttons.addButton(verb, QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setAccessibleName(verb)
        cancel = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        cancel.setAccessibleName("Cancel")
        self.buttons.accepted.connect(self._check)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.stdio_radio.toggled.connect(self._kind)
        if server is not None:
            self._fill(server)
        self._kind()

    def _fill(self, server: ServerDefinition) -> None:
        # The user's own definition: shown as typed (neutralised: it may come from an import).
        self.alias_edit.setText(inert(server.alias))
        self.http_radio.setChecked(server.transport is Transport.HTTP)
        self.stdio_radio.setChecked(server.transport is Transport.STDIO)
        if server.command:
            self.command_edit.setText(inert(shlex.join((server.command, *server.args))))
        self.cwd_edit.setText(inert(server.cwd or ""))
        self.url_edit.setText(inert(server.url or ""))
        self.env_edit.setPlainText("\n".join(inert(k) for k, v in server.env.items() if not v))
        self.plain_env_edit.setPlainText(
            "\n".join(f"{inert(k)}={inert(v)}" for k, v in server.env.items() if v)
        )
        self.env_refs_edit.setPlainText(
            "\n".join(f"{inert(k)}={inert(v)}" for k, v in server.env_refs.items())
        )
        self.headers_edit.setPlainText("\n".join(f"{inert(k)}=" for k in server.headers))
        if server.env or server.headers:
            self.env_edit.setToolTip(KEPT)
            self.headers_edit.setToolTip(KEPT)
        self.trusted_check.setChecked(server.trusted)
        if server.allowed_tools is not None:
            self.allowed_edit.setText(", ".join(inert(t) for t in server.allowed_tools))
        self.hidden_edit.setText(", ".join(inert(t) for t in server.hidden_tools))

    def _kind(self) -> None:
        stdio = self.stdio_radio.isChecked()
        for widget in (
            self.command_edit,
            self.cwd_edit,
            self.env_edit,
            self.plain_env_edit,
            self.env_refs_edit,
        ):
            widget.setEnabled(stdio)
        for widget in (self.url_edit, self.headers_edit):
            widget.setEnabled(not stdio)

    def show_error(self, text: str) -> None:
        """Say what is wrong (the dialog stays open, nothing typed is lost)."""
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))
        self.move_button.setVisible(False)

    def offer_not_secret(self) -> None:
        """No keyring can keep the secret values: offer to store them as not secret (the
        user says whether they are; nothing moves without the click)."""
        self.move_button.setVisible(bool(self.env_edit.toPlainText().strip()))

    def move_to_not_secret(self) -> None:
        """Move the lines of the secret environment to the not-secret one."""
        moved = self.env_edit.toPlainText().strip()
        kept = self.plain_env_edit.toPlainText().strip()
        self.plain_env_edit.setPlainText("\n".join(part for part in (kept, moved) if part))
        self.env_edit.clear()
        self.move_button.setVisible(False)
        self.plain_env_edit.setFocus(Qt.FocusReason.OtherFocusReason)

    def spec(self) -> ServerSpec:
        """The server to add or save; raises ``ValueError`` with a message saying what to fix."""
        alias = self.alias_edit.text().strip()
        if not alias:
            raise ValueError("Give the server a name.")
        allowed = _names(self.allowed_edit.text()) or None
        hidden = _names(self.hidden_edit.text())
        trusted = self.trusted_check.isChecked()
        if self.stdio_radio.isChecked():
            try:
                words = shlex.split(self.command_edit.text())
            except ValueError as exc:
                raise ValueError(f"The command cannot be read: {exc}.") from exc
            if not words:
                raise ValueError("Type the command that starts the server.")
            return ServerSpec(
                command=words[0],
                args=tuple(words[1:]),
                cwd=self.cwd_edit.text().strip() or None,
                env=_pairs(self.env_edit.toPlainText(), "secret environment value"),
                plain_env=_pairs(self.plain_env_edit.toPlainText(), "environment value"),
                env_refs=_pairs(
                    self.env_refs_edit.toPlainText(), "environment value read from a variable"
                ),
                alias=alias,
                trusted=trusted,
                allowed_tools=allowed,
                hidden_tools=hidden,
            )
        url = self.url_edit.text().strip()
        if not url.startswith(("http://", "https://")):
            raise ValueError("The URL must start with http:// or https://.")
        return ServerSpec(
            url=url,
            headers=_pairs(self.headers_edit.toPlainText(), "header"),
            alias=alias,
            trusted=trusted,
            allowed_tools=allowed,
            hidden_tools=hidden,
        )

    def _check(self) -> None:
        try:
            self.spec()
        except ValueError as exc:
            self.show_error(str(exc))
            return
        self.show_error("")
        self.accept()
