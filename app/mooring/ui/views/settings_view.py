"""The Settings view: model providers, approval rules, notifications, traces, and where the
data lives — each change made through the host's desks (the same use cases as the CLI's
``providers``, ``rules`` and ``settings`` commands), saved before the view says it is done."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.errors import KnownError, Remedy
from mooring.core.host_api import ProviderDeskApi
from mooring.core.providers import KeySource, ProviderView, Verdict
from mooring.core.views import RuleView
from mooring.settings.editor import SettingsEditor, parse_setting
from mooring.settings.schema import SETTINGS
from mooring.ui.dialogs.preferences import AddProviderDialog, AddRuleDialog
from mooring.ui.qt_async import Jobs, confirm, error_text, wait_dialog
from mooring.ui.remedies import remedy_words
from mooring.ui.text import inert
from mooring.ui.window_info import SettingRow as SettingRow
from mooring.ui.window_info import WindowInfo as WindowInfo

if TYPE_CHECKING:
    from mooring.core.host_api import HostApi

NOTIFY_CHOICES = (
    ("always", "Always"),
    ("when_inactive", "Only while Mooring's window is not active"),
    ("never", "Never"),
)
"""``notifications.when``: the stored value and the words shown."""

ProviderRole = Qt.ItemDataRole.UserRole + 1
RuleRole = Qt.ItemDataRole.UserRole + 2


def verdict_words(config: ProviderConfig, verdict: Verdict) -> str:
    """A provider test's result in plain words, one check a line."""

    def word(value: bool | None, yes: str, no: str) -> str:
        return "not checked" if value is None else (yes if value else no)

    key = (
        "accepted" if config.key_configured else "none configured; the endpoint did not ask for one"
    )
    lines = [
        f"Reachable: {word(verdict.reachable, 'yes', 'no')}",
        f"API key: {word(verdict.key_accepted, key, 'refused')}",
        f"Model {config.model}: {word(verdict.model_found, 'available', 'not found')}",
        f"Tool calling: {word(verdict.tools_supported, 'supported', 'not supported')}",
        *verdict.problems,
        *([advice] if (advice := remedy_words(verdict.remedy, (config.name,))) else []),
        f"{config.name} is ready to chat." if verdict.ok else f"{config.name} is not ready.",
    ]
    return "\n".join(inert(line, limit=500) for line in lines)


def _setting_text(value: object) -> str:
    """A setting's value as typed back (a list as comma-separated words)."""
    if isinstance(value, list):
        return ", ".join(str(part) for part in value)
    return str(value)


_KEY_MARKS = {
    KeySource.NONE: " — no key",
    KeySource.KEYRING: "",
    KeySource.SESSION: " — key kept until Mooring stops (no keyring)",
    KeySource.LOST: " — key lost (no keyring kept it): edit it to give one",
    KeySource.ENV: " — key from ${variable}",
    KeySource.ENV_UNSET: " — key from ${variable}, which is not set",
}
"""How the providers list says where each key comes from."""


class SettingsView(QWidget):
    """The "Settings" view.

    Without a ``host`` (or an ``editor``) the parts that need it are hidden: the view then
    only shows where the data lives and every setting's value.
    """

    report = Signal(str)
    loaded = Signal()
    """Providers and rules were (re)read from the host."""
    dialog_opened = Signal(object)
    """A dialog of this view opened (adding a provider or rule, confirming a removal)."""
    provider_checked = Signal(str)
    """A provider test or model listing finished; the words shown."""
    assistants_requested = Signal()
    """The user asked for the "Assistants" dialog (the window opens it)."""
    setting_saved = Signal(str)
    """A setting was written to the settings file (its key)."""

    def __init__(
        self,
        info: WindowInfo,
        parent: QWidget | None = None,
        *,
        host: HostApi | None = None,
        editor: SettingsEditor | None = None,
    ) -> None:
        super().__init__(parent)
        self.info = info
        self.host = host
        self.editor = editor or info.editor
        self.jobs = Jobs(self.report.emit)
        self.open_url: Callable[[QUrl], bool] = QDesktopServices.openUrl
        """Opens a folder in the desktop's file manager (tests replace it)."""
        self.setObjectName("settings-view")
        self.setAccessibleName("Settings")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        outer.addWidget(scroll)
        page = QWidget(scroll)
        scroll.setWidget(page)
        layout = QVBoxLayout(page)

        layout.addWidget(self._where(info, page))
        self.providers_box = self._providers(page)
        layout.addWidget(self.providers_box)
        self.rules_box = self._rules(page)
        layout.addWidget(self.rules_box)
        self.notifications_box = self._notifications(page)
        layout.addWidget(self.notifications_box)
        layout.addWidget(self._traces(page))
        layout.addWidget(self._all_settings(info, page), stretch=1)

        self.providers_box.setVisible(host is not None and host.provider_desk is not None)
        self.rules_box.setVisible(host is not None)
        self.notifications_box.setVisible(self.editor is not None)
        self.trace_files_check.setEnabled(self.editor is not None)
        self._on_provider_selection()
        self._on_rule_selection()
        self._show_stored()  # values as they are typed back (a list as words)

    # -- building --------------------------------------------------------------------------------

    def _where(self, info: WindowInfo, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Where your data lives", parent)
        form = QFormLayout(box)
        self.data_dir_label = self._value(info.data_dir, box)
        self.database_label = self._value(info.database, box)
        self.schema_label = self._value(info.schema, box)
        self.settings_file_label = self._value(info.settings_file, box)
        self.log_file_label = self._value(info.log_file, box)
        form.addRow("Data folder:", self.data_dir_label)
        form.addRow("Database:", self.database_label)
        form.addRow("Schema:", self.schema_label)
        form.addRow("Settings file:", self.settings_file_label)
        form.addRow("Log file:", self.log_file_label)
        self.open_folder_button = QPushButton("Open folder", box)
        self.open_folder_button.setAccessibleName("Open data folder")
        self.open_folder_button.clicked.connect(self.open_data_folder)
        row = QHBoxLayout()
        row.addWidget(self.open_folder_button)
        row.addStretch(1)
        form.addRow("", row)
        return box

    def _providers(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Model providers", parent)
        column = QVBoxLayout(box)
        self.providers_list = QListWidget(box)
        self.providers_list.setObjectName("providers-list")
        self.providers_list.setAccessibleName("Model providers")
        self.providers_list.setMaximumHeight(120)
        column.addWidget(self.providers_list)
        row = QHBoxLayout()
        self.add_provider_button = QPushButton("Add provider…", box)
        self.edit_provider_button = QPushButton("Edit provider…", box)
        self.test_provider_button = QPushButton("Test connection", box)
        self.models_button = QPushButton("List models", box)
        self.default_provider_button = QPushButton("Make default", box)
        self.remove_provider_button = QPushButton("Remove provider", box)
        self.local_models_button = QPushButton("Local models…", box)
        self.assistants_button = QPushButton("Assistants…", box)
        self.assistants_button.setToolTip(
            "Saved presets for new conversations: instructions, provider, model and tools"
        )
        self.assistants_button.setVisible(
            self.host is not None and self.host.assistants is not None
        )
        for button in (
            self.add_provider_button,
            self.edit_provider_button,
            self.test_provider_button,
            self.models_button,
            self.default_provider_button,
            self.remove_provider_button,
            self.local_models_button,
            self.assistants_button,
        ):
            button.setAccessibleName(button.text().rstrip("…"))
            row.addWidget(button)
        row.addStretch(1)
        column.addLayout(row)
        self.provider_result_label = QLabel(box)
        self.provider_result_label.setObjectName("provider-result")
        self.provider_result_label.setAccessibleName("Provider check result")
        self.provider_result_label.setTextFormat(Qt.TextFormat.PlainText)
        self.provider_result_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.provider_result_label.setWordWrap(True)
        column.addWidget(self.provider_result_label)
        self.add_provider_button.clicked.connect(
            lambda: self.jobs.start(self.add_provider_interactively())
        )
        self.edit_provider_button.clicked.connect(
            lambda: self._with_provider(self.edit_provider_interactively)
        )
        self.test_provider_button.clicked.connect(lambda: self._with_provider(self.test_provider))
        self.models_button.clicked.connect(lambda: self._with_provider(self.list_models))
        self.default_provider_button.clicked.connect(lambda: self._with_provider(self.make_default))
        self.remove_provider_button.clicked.connect(
            lambda: self._with_provider(self.remove_provider_interactively)
        )
        self.providers_list.currentRowChanged.connect(lambda _r: self._on_provider_selection())
        self.local_models_button.clicked.connect(lambda: self.jobs.start(self.show_local_models()))
        self.assistants_button.clicked.connect(lambda: self.assistants_requested.emit())
        return box

    async def show_local_models(self) -> None:
        """The recommended local models and the ones here; downloads with a progress bar."""
        from mooring.adapters.model_files import models_dir
        from mooring.ui.dialogs.local_models import LocalModelsDialog

        dialog = LocalModelsDialog(models_dir(Path(self.info.data_dir)), self.window())
        try:
            await wait_dialog(dialog, self.dialog_opened.emit)
        finally:
            dialog.deleteLater()

    def _rules(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Approval rules", parent)
        column = QVBoxLayout(box)
        hint = QLabel(
            "Standing decisions for a server's tools. Without a rule, a call that may change "
            "something asks first.",
            box,
        )
        hint.setWordWrap(True)
        column.addWidget(hint)
        self.rules_table = QTableWidget(0, 4, box)
        self.rules_table.setObjectName("rules-table")
        self.rules_table.setAccessibleName("Approval rules")
        self.rules_table.setHorizontalHeaderLabels(("Server", "Tool", "Decision", "For"))
        self.rules_table.verticalHeader().setVisible(False)
        self.rules_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.rules_table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.rules_table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.rules_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.rules_table.setMaximumHeight(160)
        column.addWidget(self.rules_table)
        row = QHBoxLayout()
        self.add_rule_button = QPushButton("Add rule…", box)
        self.remove_rule_button = QPushButton("Remove rule", box)
        for button in (self.add_rule_button, self.remove_rule_button):
            button.setAccessibleName(button.text().rstrip("…"))
            row.addWidget(button)
        row.addStretch(1)
        column.addLayout(row)
        self.add_rule_button.clicked.connect(lambda: self.jobs.start(self.add_rule_interactively()))
        self.remove_rule_button.clicked.connect(self._on_remove_rule_clicked)
        self.rules_table.itemSelectionChanged.connect(self._on_rule_selection)
        return box

    def _notifications(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Notifications", parent)
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.notify_combo = QComboBox(box)
        self.notify_combo.setAccessibleName("Notify about background work")
        for value, words in NOTIFY_CHOICES:
            self.notify_combo.addItem(words, value)
        self.show_names_check = QCheckBox(
            "Name the server and tool (never arguments, results or file names)", box
        )
        self.show_names_check.setAccessibleName("Name the server and tool in notifications")
        form.addRow("Notify:", self.notify_combo)
        form.addRow("Privacy:", self.show_names_check)
        if self.editor is not None:
            when = str(self.editor.get("notifications.when"))
            self.notify_combo.setCurrentIndex(max(0, self.notify_combo.findData(when)))
            self.show_names_check.setChecked(bool(self.editor.get("notifications.show_names")))
        self.notify_combo.activated.connect(
            lambda _i: self._save("notifications.when", str(self.notify_combo.currentData()))
        )
        self.show_names_check.clicked.connect(
            lambda checked: self._save("notifications.show_names", bool(checked))
        )
        return box

    def _traces(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Traces", parent)
        column = QVBoxLayout(box)
        self.trace_files_check = QCheckBox(
            "Write traces of tool calls to files in the data folder (from the next launch)", box
        )
        self.trace_files_check.setAccessibleName("Write traces to files")
        if self.editor is not None:
            self.trace_files_check.setChecked(bool(self.editor.get("telemetry.file_export")))
        self.trace_files_check.clicked.connect(
            lambda checked: self._save("telemetry.file_export", bool(checked))
        )
        column.addWidget(self.trace_files_check)
        self.export_button = QPushButton("Export traces…", box)
        self.export_button.setAccessibleName("Export traces")
        column.addWidget(self.export_button, alignment=Qt.AlignmentFlag.AlignLeft)
        return box

    def _all_settings(self, info: WindowInfo, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Every setting (double-click a value, or press F2, to change it)", parent)
        inner = QVBoxLayout(box)
        self.table = QTableWidget(len(info.settings), 3, box)
        self.table.setObjectName("settings-table")
        self.table.setAccessibleName("Settings list")
        self.table.setHorizontalHeaderLabels(("Setting", "Value", "What it does"))
        self.table.verticalHeader().setVisible(False)
        self._filling = True
        self.table.setEditTriggers(
            QTableWidget.EditTrigger.DoubleClicked | QTableWidget.EditTrigger.EditKeyPressed
            if self.editor is not None
            else QTableWidget.EditTrigger.NoEditTriggers
        )
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.setMinimumHeight(160)
        for row, setting in enumerate(info.settings):
            for column, text in enumerate((setting.key, setting.value, setting.description)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if column != 1:
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(row, column, item)
        self._filling = False
        self.table.itemChanged.connect(self._on_setting_edited)
        self.table.resizeColumnToContents(0)
        self.table.resizeColumnToContents(1)
        inner.addWidget(self.table)
        return box

    def _value(self, text: str, parent: QWidget) -> QLabel:
        label = QLabel(text, parent)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setWordWrap(True)
        return label

    # -- reading -------------------------------------------------------------------------------

    async def load(self) -> None:
        """Read the providers and the rules from the host."""
        if self.host is None:
            self.loaded.emit()
            return
        if self.host.provider_desk is not None:
            self._show_providers(await self.host.provider_desk.providers())
        self._show_rules(await self.host.rule_desk.rules())
        self.loaded.emit()

    def _show_providers(self, views: list[ProviderView]) -> None:
        chosen = self.selected_provider()
        self.providers_list.clear()
        for view in views:
            config = view.config
            marks = " — default" if view.default else ""
            marks += _KEY_MARKS[view.key].format(variable=inert(config.api_key_env or ""))
            text = (
                f"{inert(config.name, limit=60)} ({config.kind.value}, "
                f"{inert(config.model, limit=60)}, {inert(config.base_url, limit=120)})"
                f"{marks}"
            )
            item = QListWidgetItem(text, self.providers_list)
            item.setData(ProviderRole, config)
            if chosen is not None and chosen.id == config.id:
                self.providers_list.setCurrentItem(item)
        if self.providers_list.currentRow() < 0 and self.providers_list.count():
            self.providers_list.setCurrentRow(0)
        if not views:
            item = QListWidgetItem(
                "No model providers yet: add one to chat (Mooring runs tools without one).",
                self.providers_list,
            )
            item.setFlags(Qt.ItemFlag.NoItemFlags)
        self._on_provider_selection()

    def _show_rules(self, views: list[RuleView]) -> None:
        self.rules_table.setRowCount(len(views))
        for row, view in enumerate(views):
            rule = view.rule
            cells = (
                inert(view.server_words, limit=80),
                inert(rule.tool_pattern, limit=120),
                rule.decision.value,
                rule.scope.value,
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(RuleRole, rule.id)
                self.rules_table.setItem(row, column, item)
        self._on_rule_selection()

    def selected_provider(self) -> ProviderConfig | None:
        """The chosen provider."""
        item = self.providers_list.currentItem()
        data = item.data(ProviderRole) if item is not None else None
        return data if isinstance(data, ProviderConfig) else None

    def selected_rule(self) -> str | None:
        """The id of the chosen rule."""
        items = self.rules_table.selectedItems()
        data = items[0].data(RuleRole) if items else None
        return data if isinstance(data, str) else None

    def _on_provider_selection(self) -> None:
        chosen = self.selected_provider() is not None
        for button in (
            self.edit_provider_button,
            self.test_provider_button,
            self.models_button,
            self.default_provider_button,
            self.remove_provider_button,
        ):
            button.setEnabled(chosen)

    def _on_rule_selection(self) -> None:
        self.remove_rule_button.setEnabled(self.selected_rule() is not None)

    # -- actions -------------------------------------------------------------------------------

    def open_data_folder(self) -> None:
        """Show the data folder in the desktop's file manager."""
        if not self.open_url(QUrl.fromLocalFile(self.info.data_dir)):
            self.report.emit(f"Could not open {self.info.data_dir}.")

    def _provider_desk(self) -> ProviderDeskApi:
        desk = self.host.provider_desk if self.host is not None else None
        if desk is None:
            raise KnownError("Model providers are not available in this build.")
        return desk

    def _with_provider(self, action: Callable[[ProviderConfig], object]) -> None:
        config = self.selected_provider()
        if config is not None:
            outcome = action(config)
            if outcome is not None:
                self.jobs.start(outcome)  # type: ignore[arg-type]

    async def add_provider_interactively(self, kind: ProviderKind | None = None) -> None:
        """Ask for a provider (of ``kind`` to begin with) and add it; the dialog stays open
        until it is right or cancelled. The key goes to the keyring and nowhere else."""
        assert self.host is not None
        desk = self.host.provider_desk
        if desk is None:
            return
        dialog = AddProviderDialog(self.window(), kind=kind)
        try:
            while await wait_dialog(dialog, self.dialog_opened.emit):
                try:
                    added = await desk.add(dialog.draft())
                except Exception as exc:  # noqa: BLE001  # shown in the dialog, nothing lost
                    self._refused(dialog, exc)
                    continue
                name = inert(added.config.name, limit=60)
                words = f"Added {name}" + (": it is the default." if added.became_default else ".")
                self.report.emit(words)
                await self.load()
                self._select_provider(added.config.id)
                return
        finally:
            dialog.key_edit.clear()
            dialog.deleteLater()

    def _refused(self, dialog: AddProviderDialog, exc: BaseException) -> None:
        """Say in the dialog why the provider was not stored; a key no keyring can keep
        offers the environment-variable choice at once."""
        dialog.show_error(error_text(exc))
        if isinstance(exc, KnownError) and exc.remedy is Remedy.KEY_FROM_ENV:
            dialog.ask_for_variable()

    async def edit_provider_interactively(self, config: ProviderConfig) -> None:
        """Edit a provider (name, kind, address, model, key kept or replaced, or read from a
        variable); the dialog stays open until it is right or cancelled."""
        desk = self._provider_desk()
        dialog = AddProviderDialog(self.window(), config)
        try:
            while await wait_dialog(dialog, self.dialog_opened.emit):
                try:
                    edited = await desk.edit(config, dialog.draft())
                except Exception as exc:  # noqa: BLE001  # shown in the dialog, nothing lost
                    self._refused(dialog, exc)
                    continue
                self.report.emit(f"Saved {inert(edited.name, limit=60)}.")
                await self.load()
                self._select_provider(edited.id)
                return
        finally:
            dialog.key_edit.clear()
            dialog.deleteLater()

    def edit_provider_named(self, name: str) -> None:
        """Select the provider called ``name`` (any, if none is) and open its edit dialog."""
        for row in range(self.providers_list.count()):
            data = self.providers_list.item(row).data(ProviderRole)
            if isinstance(data, ProviderConfig) and data.name == name:
                self.providers_list.setCurrentRow(row)
        self._with_provider(self.edit_provider_interactively)

    def _select_provider(self, provider_id: str) -> None:
        for row in range(self.providers_list.count()):
            data = self.providers_list.item(row).data(ProviderRole)
            if isinstance(data, ProviderConfig) and data.id == provider_id:
                self.providers_list.setCurrentRow(row)

    async def test_provider(self, config: ProviderConfig) -> None:
        """Make one tiny request to the provider and show, in plain words, what works."""
        desk = self._provider_desk()
        self.provider_result_label.setText(f"Testing {inert(config.name, limit=60)}…")
        self.test_provider_button.setEnabled(False)
        try:
            verdict = await desk.test(config)
        except Exception as exc:  # noqa: BLE001  # said in the view
            words = error_text(exc)
        else:
            words = verdict_words(config, verdict)
        finally:
            self._on_provider_selection()
        self.provider_result_label.setText(words)
        self.provider_checked.emit(words)

    async def list_models(self, config: ProviderConfig) -> None:
        """Show the models the provider's endpoint lists."""
        desk = self._provider_desk()
        self.provider_result_label.setText(f"Asking {inert(config.name, limit=60)}…")
        try:
            found = await desk.models(config)
        except Exception as exc:  # noqa: BLE001  # said in the view
            words = error_text(exc)
        else:
            if not found:
                words = f"It does not list its models; {config.model} is configured."
            else:
                words = "Models: " + ", ".join(
                    inert(m, limit=80) + (" (configured)" if m == config.model else "")
                    for m in found[:200]
                )
        self.provider_result_label.setText(inert(words, limit=4000))
        self.provider_checked.emit(words)

    async def make_default(self, config: ProviderConfig) -> None:
        """Make the provider the default for new conversations."""
        desk = self._provider_desk()
        await desk.set_default(config)
        self.report.emit(f"{inert(config.name, limit=60)} is now the default provider.")
        await self.load()

    async def remove_provider_interactively(self, config: ProviderConfig) -> None:
        """Remove the provider and its keys after a confirmation."""
        name = inert(config.name, limit=60)
        if await confirm(
            self,
            "Remove provider",
            f"Remove {name}? Its key is deleted from your keyring. Conversations that used it "
            "keep their messages.",
            "Remove",
            self.dialog_opened.emit,
        ):
            await self.remove_provider(config)

    async def remove_provider(self, config: ProviderConfig) -> None:
        """Remove a provider and its keyring secrets (no question asked)."""
        desk = self._provider_desk()
        successor = await desk.remove(config)
        words = f"Removed {inert(config.name, limit=60)}."
        if successor is not None:
            words += f" The default provider is {inert(successor.name, limit=60)}."
        self.report.emit(words)
        self.provider_result_label.clear()
        await self.load()

    async def add_rule_interactively(self) -> None:
        """Ask for a rule and add it (the dialog stays open until it is right or cancelled)."""
        assert self.host is not None
        desk = self.host.rule_desk
        dialog = AddRuleDialog(await desk.servers(), self.window())
        try:
            while await wait_dialog(dialog, self.dialog_opened.emit):
                server = dialog.server()
                assert server is not None  # the dialog checked
                try:
                    await desk.add(server, dialog.tool_pattern(), dialog.decision(), dialog.scope())
                except Exception as exc:  # noqa: BLE001  # shown in the dialog, nothing lost
                    dialog.show_error(error_text(exc))
                    continue
                alias = inert(server.alias, limit=60)
                pattern = inert(dialog.tool_pattern(), limit=80)
                self.report.emit(f"Rule added: {dialog.decision().value} {alias}/{pattern}.")
                await self.load()
                return
        finally:
            dialog.deleteLater()

    def _on_remove_rule_clicked(self) -> None:
        rule_id = self.selected_rule()
        if rule_id is not None:
            self.jobs.start(self.remove_rule(rule_id))

    async def remove_rule(self, rule_id: str) -> None:
        """Remove a rule: the calls it covered ask again."""
        assert self.host is not None
        await self.host.rule_desk.remove(rule_id)
        self.report.emit("Rule removed: those calls ask first again.")
        await self.load()

    def _save(self, key: str, value: object) -> None:
        if self.editor is not None:
            self.jobs.start(self.save_setting(key, value))

    async def save_setting(self, key: str, value: object) -> None:
        """Write one setting, then show it (a failure is said and the control set back)."""
        assert self.editor is not None
        try:
            await self.editor.set(key, value)
        except Exception as exc:  # noqa: BLE001  # said; the control shows what is stored
            self.report.emit(error_text(exc))
            self._show_stored()
            return
        self._show_stored()
        self.setting_saved.emit(key)

    def _show_stored(self) -> None:
        if self.editor is None:
            return
        when = str(self.editor.get("notifications.when"))
        self.notify_combo.setCurrentIndex(max(0, self.notify_combo.findData(when)))
        self.show_names_check.setChecked(bool(self.editor.get("notifications.show_names")))
        self.trace_files_check.setChecked(bool(self.editor.get("telemetry.file_export")))
        keys = [s.key for s in SETTINGS]
        self._filling = True
        try:
            for row in range(self.table.rowCount()):
                key_item = self.table.item(row, 0)
                if key_item is not None and key_item.text() in keys:
                    text = _setting_text(self.editor.get(key_item.text()))
                    value = QTableWidgetItem(text)
                    value.setToolTip(text)
                    self.table.setItem(row, 1, value)
        finally:
            self._filling = False

    def _on_setting_edited(self, item: QTableWidgetItem) -> None:
        """A value typed in the settings list: checked against its declaration, then saved
        (what cannot be taken is said, and the stored value shown again)."""
        if self._filling or item.column() != 1 or self.editor is None:
            return
        key_item = self.table.item(item.row(), 0)
        if key_item is None:
            return
        try:
            value = parse_setting(key_item.text(), item.text().strip())
        except KnownError as exc:
            self.report.emit(error_text(exc))
            self._show_stored()
            return
        self._save(key_item.text(), value)

    async def stop(self) -> None:
        """End the work this view started."""
        await self.jobs.cancel_all()
