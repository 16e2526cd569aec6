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
from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.providers import DEFAULT_URLS, ProviderDraft, local_model_path
from mooring.core.servers import ServerDefinition
from mooring.ui.text import inert

PROVIDER_TITLE = "Add model provider"
EDIT_PROVIDER_TITLE = "Edit model provider"
RULE_TITLE = "Add approval rule"

_KINDS = (
    (ProviderKind.OPENAI, "OpenAI-compatible (OpenAI, Ollama, LM Studio, OpenRouter…)"),
    (ProviderKind.ANTHROPIC, "Anthropic"),
    (ProviderKind.LOCAL, "Local model file (GGUF: runs on this computer, no key, no network)"),
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
    """Collects a :class:`ProviderDraft`; the key is typed hidden and goes to the keyring, or
    the key is read from an environment variable named here. Given a ``provider``, it edits
    that one ("Edit model provider"; an empty key keeps the stored one)."""

    def __init__(
        self,
        parent: QWidget | None = None,
        provider: ProviderConfig | None = None,
        *,
        kind: ProviderKind | None = None,
    ) -> None:
        super().__init__(
            EDIT_PROVIDER_TITLE if provider else PROVIDER_TITLE,
            "edit-provider-dialog" if provider else "add-provider-dialog",
            parent,
        )
        self.editing = provider
        self.name_edit = QLineEdit(self)
        self.kind_combo = QComboBox(self)
        for each, words in _KINDS:
            self.kind_combo.addItem(words, each.value)
        self.url_edit = QLineEdit(self)
        self.model_edit = QLineEdit(self)
        self.model_edit.setPlaceholderText("e.g. gpt-4o-mini, llama3.1, claude-sonnet-4-5")
        self.key_edit = QLineEdit(self)
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("stored in your keyring only; empty for a local server")
        self.key_env_edit = QLineEdit(self)
        self.key_env_edit.setPlaceholderText(
            "or: the environment variable that holds it, e.g. OPENAI_API_KEY (read at each use)"
        )
        self._row("Name:", self.name_edit)
        self._row("Kind:", self.kind_combo)
        self._row("Address:", self.url_edit)
        self._row("Model:", self.model_edit)
        self._row("API key:", self.key_edit)
        self._row("Key from variable:", self.key_env_edit)
        self.url_label = self.form.labelForField(self.url_edit)
        self.kind_combo.currentIndexChanged.connect(lambda _i: self._on_kind())
        if kind is not None:
            self.kind_combo.setCurrentIndex(max(0, self.kind_combo.findData(kind.value)))
        if provider is not None:
            self.add_button.setText("Save")
            self.add_button.setAccessibleName("Save")
            self._fill(provider)
        self._on_kind()

    def _fill(self, provider: ProviderConfig) -> None:
        # Shown inert: plain-text fields, names neutralised as everywhere else.
        self.name_edit.setText(inert(provider.name, limit=200))
        self.kind_combo.setCurrentIndex(max(0, self.kind_combo.findData(provider.kind.value)))
        address = (
            str(local_model_path(provider))
            if provider.kind is ProviderKind.LOCAL
            else provider.base_url
        )
        self.url_edit.setText(inert(address, limit=2000))
        self.model_edit.setText(inert(provider.model, limit=200))
        self.key_env_edit.setText(provider.api_key_env or "")
        if provider.has_api_key:
            self.key_edit.setPlaceholderText("kept in your keyring: leave empty to keep it")

    def ask_for_variable(self) -> None:
        """Offer the environment-variable choice: the key field is emptied and the variable's
        field takes the focus."""
        self.key_edit.clear()
        self.key_env_edit.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_kind(self) -> None:
        local = self.kind() is ProviderKind.LOCAL
        # A local model is a file Mooring runs itself: its path instead of an address, no key.
        label = "Model file" if local else "Address"
        if isinstance(self.url_label, QLabel):
            self.url_label.setText(f"{label}:")
        self.url_edit.setAccessibleName(label)
        self.url_edit.setPlaceholderText(
            "the .gguf file, e.g. ~/models/qwen3-0.6b-q4_k_m.gguf"
            if local
            else DEFAULT_URLS[self.kind()]
        )
        self.model_edit.setPlaceholderText(
            "a name for it (default: the file's name)"
            if local
            else "e.g. gpt-4o-mini, llama3.1, claude-sonnet-4-5"
        )
        for field in (self.key_edit, self.key_env_edit):
            field.setVisible(not local)
            label_widget = self.form.labelForField(field)
            if label_widget is not None:
                label_widget.setVisible(not local)

    def kind(self) -> ProviderKind:
        """The chosen kind of endpoint."""
        # Qt keeps item data as plain strings: the enum is made again from its value.
        return ProviderKind(str(self.kind_combo.currentData()))

    def _problem(self) -> str:
        if not self.name_edit.text().strip():
            return "Give the provider a name."
        if self.kind() is ProviderKind.LOCAL:
            if not self.url_edit.text().strip():
                return "Say which model file to run (a .gguf file)."
            return ""
        if not self.model_edit.text().strip():
            return "Say which model to use."
        if self.key_edit.text().strip() and self.key_env_edit.text().strip():
            return "Type the key or the name of the variable that holds it, not both."
        return ""

    def draft(self) -> ProviderDraft:
        """What was typed (the key included: hand it to the desk, then forget the dialog)."""
        local = self.kind() is ProviderKind.LOCAL
        return ProviderDraft(
            name=self.name_edit.text(),
            kind=self.kind(),
            model=self.model_edit.text(),
            base_url=self.url_edit.text().strip() or None,
            api_key=None if local else self.key_edit.text().strip() or None,
            api_key_env=None if local else self.key_env_edit.text().strip() or None,
        )


class AddRuleDialog(_Form):
    """Collects a rule: which server, which tools, what to do, for how long."""

    def __init__(self, servers: list[ServerDefinition], parent: QWidget | None = None) -> None:
        super().__init__(RULE_TITLE, "add-rule-dialog", parent)
        self.server_combo = QComboBox(self)
        self._servers = {server.id: server for server in servers}
        for server in servers:
            self.server_combo.addItem(inert(server.alias, limit=80), server.id)
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
