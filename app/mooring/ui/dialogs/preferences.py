"""Dialogs of the Settings view: adding a model provider, adding an approval rule.

Each collects what the user typed and says what is missing; the Settings view hands it to the
host's desks and keeps the dialog open with the error until it is right or cancelled.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from mooring.core.approval.rules import Decision, Scope
from mooring.core.chat import ProviderKind
from mooring.core.providers import DEFAULT_URLS, ProviderDraft
from mooring.core.servers import ServerDefinition
from mooring.ui.text import neutralise

PROVIDER_TITLE = "Add model provider"
RULE_TITLE = "Add approval rule"

_KINDS = (
    (ProviderKind.OPENAI, "OpenAI-compatible (OpenAI, Ollama, LM Studio, OpenRouter…)"),
    (ProviderKind.ANTHROPIC, "Anthropic"),
)
_DECISIONS = (
    (Decision.ALLOW, "Allow without asking"),
    (Decision.ASK, "Always ask"),
    (Decision.DENY, "Deny without asking"),
)
_SCOPES = (
    (Scope.ALWAYS, "Always"),
    (Scope.ONCE, "Once (the next call only)"),
)


class _Form(QDialog):
    """A titled form with an error line and Add / Cancel."""

    def __init__(self, title: str, name: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName(name)
        self.layout_ = QVBoxLayout(self)
        self.form = QFormLayout()
        self.layout_.addLayout(self.form)
        self.error_label = QLabel(self)
        self.error_label.setObjectName("form-error")
        self.error_label.setAccessibleName("Problem")
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setStyleSheet("color: #c0392b;")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        self.layout_.addWidget(self.error_label)
        self.buttons = QDialogButtonBox(self)
        self.add_button = self.buttons.addButton("Add", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setAccessibleName("Add")
        cancel = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        cancel.setAccessibleName("Cancel")
        self.buttons.accepted.connect(self._check)
        self.buttons.rejected.connect(self.reject)
        self.layout_.addWidget(self.buttons)

    def _row(self, label: str, widget: QWidget) -> None:
        widget.setAccessibleName(label.rstrip(":"))
        self.form.addRow(label, widget)

    def show_error(self, text: str) -> None:
        """Say what is wrong (the dialog stays open, nothing typed is lost)."""
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))

    def _problem(self) -> str:
        return ""

    def _check(self) -> None:
        problem = self._problem()
        if problem:
            self.show_error(problem)
            return
        self.accept()


class AddProviderDialog(_Form):
    """Collects a :class:`ProviderDraft`; the key is typed hidden and goes to the keyring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(PROVIDER_TITLE, "add-provider-dialog", parent)
        self.name_edit = QLineEdit(self)
        self.kind_combo = QComboBox(self)
        for kind, words in _KINDS:
            self.kind_combo.addItem(words, kind.value)
        self.url_edit = QLineEdit(self)
        self.model_edit = QLineEdit(self)
        self.model_edit.setPlaceholderText("e.g. gpt-4o-mini, llama3.1, claude-sonnet-4-5")
        self.key_edit = QLineEdit(self)
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("stored in your keyring only; empty for a local server")
        self._row("Name:", self.name_edit)
        self._row("Kind:", self.kind_combo)
        self._row("Address:", self.url_edit)
        self._row("Model:", self.model_edit)
        self._row("API key:", self.key_edit)
        self.kind_combo.currentIndexChanged.connect(lambda _i: self._on_kind())
        self._on_kind()

    def _on_kind(self) -> None:
        self.url_edit.setPlaceholderText(DEFAULT_URLS[self.kind()])

    def kind(self) -> ProviderKind:
        """The chosen kind of endpoint."""
        # Qt keeps item data as plain strings: the enum is made again from its value.
        return ProviderKind(str(self.kind_combo.currentData()))

    def _problem(self) -> str:
        if not self.name_edit.text().strip():
            return "Give the provider a name."
        if not self.model_edit.text().strip():
            return "Say which model to use."
        return ""

    def draft(self) -> ProviderDraft:
        """What was typed (the key included: hand it to the desk, then forget the dialog)."""
        return ProviderDraft(
            name=self.name_edit.text(),
            kind=self.kind(),
            model=self.model_edit.text(),
            base_url=self.url_edit.text().strip() or None,
            api_key=self.key_edit.text().strip() or None,
        )


class AddRuleDialog(_Form):
    """Collects a rule: which server, which tools, what to do, for how long."""

    def __init__(self, servers: list[ServerDefinition], parent: QWidget | None = None) -> None:
        super().__init__(RULE_TITLE, "add-rule-dialog", parent)
        self.server_combo = QComboBox(self)
        self._servers = {server.id: server for server in servers}
        for server in servers:
            self.server_combo.addItem(neutralise(server.alias, limit=80), server.id)
        self.tool_edit = QLineEdit(self)
        self.tool_edit.setPlaceholderText("a tool name, or a pattern such as * or list_*")
        self.decision_combo = QComboBox(self)
        for decision, words in _DECISIONS:
            self.decision_combo.addItem(words, decision.value)
        self.scope_combo = QComboBox(self)
        for scope, words in _SCOPES:
            self.scope_combo.addItem(words, scope.value)
        self._row("Server:", self.server_combo)
        self._row("Tool:", self.tool_edit)
        self._row("Decision:", self.decision_combo)
        self._row("For:", self.scope_combo)

    def _problem(self) -> str:
        if self.server() is None:
            return "Add a server first: a rule is about one server's tools."
        if not self.tool_edit.text().strip():
            return "Say which tool (or a pattern such as * or list_*)."
        return ""

    def server(self) -> ServerDefinition | None:
        """The chosen server."""
        return self._servers.get(str(self.server_combo.currentData()))

    def tool_pattern(self) -> str:
        """The tool name or pattern."""
        return self.tool_edit.text().strip()

    def decision(self) -> Decision:
        """What the rule decides."""
        return Decision(str(self.decision_combo.currentData()))

    def scope(self) -> Scope:
        """How long the rule holds."""
        return Scope(str(self.scope_combo.currentData()))
