"""The Settings view changes what the CLI changes: model providers (tested against a scripted
model endpoint), approval rules, notifications and traces — saved before the view says so."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import anyio
import keyring
import keyring.backends.fail
import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QLineEdit,
    QMessageBox,
    QTableWidgetItem,
    QWidget,
)
from pytestqt.qtbot import QtBot

from mooring.bootstrap import build_host
from mooring.core.approval.rules import Decision, Scope
from mooring.core.chat import PROVIDER_SECRET_SCOPE, ProviderKind
from mooring.core.ids import new_id
from mooring.core.providers import ProviderDraft, api_key_name
from mooring.core.servers import ServerDefinition, Transport
from mooring.services.host import Host
from mooring.settings.editor import SettingsEditor
from mooring.settings.paths import Paths
from mooring.settings.schema import SETTINGS
from mooring.settings.store import Settings, load_settings
from mooring.storage.db import Database
from mooring.ui.dialogs.preferences import AddProviderDialog, AddRuleDialog
from mooring.ui.views.settings_view import SettingRow, SettingsView, WindowInfo
from tests.helpers.model_endpoints import ModelEndpoint, Text
from tests.ui.conftest import until

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def open_view(tmp_path: Path, qtbot: QtBot) -> AsyncIterator[tuple[SettingsView, Host]]:
    """A Settings view over a real host and settings file (stopped inside the test)."""
    data = tmp_path / "data"
    paths = Paths(data_dir=data, config_dir=data / "config", log_dir=data / "logs", overridden=True)
    data.mkdir()
    settings = Settings()
    db = Database.open(paths.database)
    host = build_host(paths, settings, db)
    info = WindowInfo(
        data_dir=str(data),
        database=str(paths.database),
        schema="current",
        settings_file=str(paths.settings_file),
        editor=SettingsEditor(paths.settings_file, settings),
    )
    view = SettingsView(info, host=host)
    qtbot.addWidget(view)
    view.show()
    try:
        await view.load()
        yield view, host
    finally:
        await view.stop()
        with anyio.fail_after(30):
            await host.stop()
        db.close()


async def next_dialog(view: SettingsView) -> object:
    opened: list[object] = []
    view.dialog_opened.connect(opened.append)
    await until(lambda: bool(opened), view.dialog_opened)
    view.dialog_opened.disconnect(opened.append)
    return opened[0]


async def test_a_provider_added_here_is_tested_listed_made_default_and_removed(
    tmp_path: Path, qtbot: QtBot, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.api_key = "sk-canary-settings"
    model_endpoint.models = ["scripted-model", "other-model"]
    async with open_view(tmp_path, qtbot) as (view, host):
        assert view.providers_list.count() == 1  # the "none yet" line, not a provider
        assert view.selected_provider() is None
        assert not view.test_provider_button.isEnabled()

        adding = view.jobs.start(view.add_provider_interactively())
        dialog = await next_dialog(view)
        assert isinstance(dialog, AddProviderDialog)
        assert dialog.windowTitle() == "Add model provider"
        assert dialog.key_edit.echoMode() is QLineEdit.EchoMode.Password
        dialog.name_edit.setText("local")
        dialog.add_button.click()
        assert dialog.isVisible()
        assert dialog.error_label.text() == "Say which model to use."
        dialog.url_edit.setText("ftp://nowhere")
        dialog.model_edit.setText("scripted-model")
        dialog.add_button.click()
        await until(lambda: "http(s)" in dialog.error_label.text(), view.dialog_opened, limit=10)
        dialog.url_edit.setText(model_endpoint.openai_url)
        dialog.key_edit.setText("sk-canary-settings")
        dialog.add_button.click()
        await adding

        chosen = view.selected_provider()
        assert chosen is not None
        assert chosen.name == "local"
        assert chosen.has_api_key
        assert "default" in view.providers_list.currentItem().text()
        # The key is in the keyring, and not in the database file.
        assert host.secrets.get(PROVIDER_SECRET_SCOPE, api_key_name(chosen.id)) == (
            "sk-canary-settings"
        )
        assert b"sk-canary-settings" not in await anyio.Path(view.info.database).read_bytes()

        model_endpoint.script(Text("OK"))
        view.test_provider_button.click()
        words = await _checked(view)
        assert "Reachable: yes" in words
        assert "API key: accepted" in words
        assert "Model scripted-model: available" in words
        assert "local is ready to chat." in words
        assert view.provider_result_label.text() == words
        assert model_endpoint.requests[-1].headers["authorization"] == "Bearer sk-canary-settings"

        view.models_button.click()
        words = await _checked(view)
        assert words == "Models: scripted-model (configured), other-model"

        await host.provider_desk.add(  # type: ignore[union-attr]
            _draft("second", model_endpoint.openai_url)
        )
        await view.load()
        view.providers_list.setCurrentRow(1)
        view.default_provider_button.click()
        await until(lambda: "second" in _default_row(view), view.loaded)
        default = await host.providers.default_provider()  # type: ignore[union-attr]
        assert default is not None
        assert default.name == "second"

        view.providers_list.setCurrentRow(0)
        removing = view.jobs.start(view.remove_provider_interactively(chosen))
        box = await next_dialog(view)
        assert isinstance(box, QMessageBox)
        assert box.windowTitle() == "Remove provider"
        next(b for b in box.buttons() if b.text() == "Remove").click()
        await removing
        names = [c.name for c in await host.providers.list_providers()]  # type: ignore[union-attr]
        assert names == ["second"]
        assert host.secrets.get(PROVIDER_SECRET_SCOPE, api_key_name(chosen.id)) is None


async def test_a_refused_key_is_said_in_plain_words(
    tmp_path: Path, qtbot: QtBot, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.api_key = "sk-the-right-one"
    async with open_view(tmp_path, qtbot) as (view, host):
        await host.provider_desk.add(  # type: ignore[union-attr]
            _draft("wrong", model_endpoint.openai_url, key="sk-wrong")
        )
        await view.load()
        view.test_provider_button.click()
        words = await _checked(view)
        assert "API key: refused" in words
        assert "wrong is not ready." in words


async def test_rules_are_added_and_removed_here_as_with_the_cli(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_view(tmp_path, qtbot) as (view, host):
        server = ServerDefinition(
            id=new_id(),
            alias="files",
            transport=Transport.STDIO,
            command="true",
            created_at=datetime.now(UTC),
        )
        await host.catalog.add_server(server)
        assert view.rules_table.rowCount() == 0
        assert not view.remove_rule_button.isEnabled()

        adding = view.jobs.start(view.add_rule_interactively())
        dialog = await next_dialog(view)
        assert isinstance(dialog, AddRuleDialog)
        assert dialog.windowTitle() == "Add approval rule"
        dialog.add_button.click()
        assert dialog.error_label.text().startswith("Say which tool")
        dialog.tool_edit.setText("list_*")
        dialog.decision_combo.setCurrentIndex(dialog.decision_combo.findData("allow"))
        dialog.add_button.click()
        await adding

        [rule] = await host.rules.list_rules()
        assert (rule.tool_pattern, rule.decision, rule.scope) == (
            "list_*",
            Decision.ALLOW,
            Scope.ALWAYS,
        )
        assert rule.server_identity == server.identity
        cells = [item.text() for c in range(4) if (item := view.rules_table.item(0, c))]
        assert cells == ["files", "list_*", "allow", "always"]

        view.rules_table.selectRow(0)
        view.remove_rule_button.click()
        await until(lambda: view.rules_table.rowCount() == 0, view.loaded)
        assert await host.rules.list_rules() == []


async def test_notifications_and_traces_are_saved_to_the_settings_file(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_view(tmp_path, qtbot) as (view, _host):
        settings_file = Path(view.info.settings_file)
        saved: list[str] = []
        view.setting_saved.connect(saved.append)

        view.notify_combo.setCurrentIndex(view.notify_combo.findData("never"))
        view.notify_combo.activated.emit(view.notify_combo.currentIndex())
        await until(lambda: "notifications.when" in saved, view.setting_saved)
        view.show_names_check.click()
        await until(lambda: "notifications.show_names" in saved, view.setting_saved)
        view.trace_files_check.click()
        await until(lambda: "telemetry.file_export" in saved, view.setting_saved)

        stored = load_settings(settings_file)
        assert stored.get("notifications.when") == "never"
        assert stored.get("notifications.show_names") is True
        assert stored.get("telemetry.file_export") is False
        on_disk = json.loads(await anyio.Path(settings_file).read_text())["values"]
        assert on_disk["notifications.when"] == "never"


async def test_the_data_folder_is_shown_and_opens(tmp_path: Path, qtbot: QtBot) -> None:
    async with open_view(tmp_path, qtbot) as (view, _host):
        opened: list[QUrl] = []

        def record(url: QUrl) -> bool:
            opened.append(url)
            return True

        view.open_url = record
        assert view.data_dir_label.text() == view.info.data_dir
        view.open_folder_button.click()
        assert [u.toLocalFile() for u in opened] == [view.info.data_dir]


async def test_every_control_has_a_name_and_takes_the_keyboard(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_view(tmp_path, qtbot) as (view, _host):
        controls = [
            w
            for w in view.findChildren(QWidget)
            if (
                not w.objectName().startswith("qt_")  # Qt's own parts (a table's corner)
                and isinstance(w, QAbstractButton | QComboBox | QLineEdit)
            )
            or w.objectName() in ("providers-list", "rules-table", "settings-table")
        ]
        assert len(controls) >= 12
        for widget in controls:
            assert widget.accessibleName() or (
                isinstance(widget, QAbstractButton) and widget.text()
            ), widget
            assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus, widget.accessibleName()


async def _checked(view: SettingsView) -> str:
    words: list[str] = []
    view.provider_checked.connect(words.append)
    await until(lambda: bool(words), view.provider_checked, limit=30)
    view.provider_checked.disconnect(words.append)
    return words[0]


def _default_row(view: SettingsView) -> str:
    for row in range(view.providers_list.count()):
        text = view.providers_list.item(row).text()
        if "default" in text:
            return text
    return ""


def _draft(name: str, url: str, *, key: str = "sk-canary-settings") -> ProviderDraft:
    return ProviderDraft(
        name=name, kind=ProviderKind.OPENAI, model="scripted-model", base_url=url, api_key=key
    )


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """No usable keyring, as on a headless machine (keyring's own fail backend)."""
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@pytest.mark.usefixtures("no_keyring")
async def test_without_a_keyring_a_typed_key_is_refused_and_a_variable_offered(
    tmp_path: Path, qtbot: QtBot, model_endpoint: ModelEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_endpoint.api_key = "sk-canary-from-env"
    monkeypatch.delenv("MOORING_TEST_PROVIDER_KEY", raising=False)
    async with open_view(tmp_path, qtbot) as (view, host):
        adding = view.jobs.start(view.add_provider_interactively())
        dialog = await next_dialog(view)
        assert isinstance(dialog, AddProviderDialog)
        dialog.name_edit.setText("hosted")
        dialog.url_edit.setText(model_endpoint.openai_url)
        dialog.model_edit.setText("scripted-model")
        dialog.key_edit.setText("sk-canary-from-env")
        dialog.add_button.click()
        await until(lambda: "keyring" in dialog.error_label.text(), view.dialog_opened, limit=10)

        # Not accepted: said in the dialog, which stays open on the variable's field.
        said = dialog.error_label.text()
        assert "can keep the API key of 'hosted'" in said
        assert "Key from variable" in said
        assert "mooring " not in said  # the window says what to do in the window
        assert dialog.isVisible()
        assert dialog.key_edit.text() == ""
        assert dialog.key_env_edit.hasFocus()
        assert dialog.key_env_edit.accessibleName() == "Key from variable"
        assert await host.providers.list_providers() == []  # type: ignore[union-attr]

        dialog.key_env_edit.setText("MOORING_TEST_PROVIDER_KEY")
        dialog.add_button.click()
        await adding
        [config] = await host.providers.list_providers()  # type: ignore[union-attr]
        assert (config.api_key_env, config.has_api_key) == ("MOORING_TEST_PROVIDER_KEY", False)
        assert "key from $MOORING_TEST_PROVIDER_KEY, which is not set" in (
            view.providers_list.currentItem().text()
        )

        # Read at each use: set now, the next test carries it.
        monkeypatch.setenv("MOORING_TEST_PROVIDER_KEY", "sk-canary-from-env")
        model_endpoint.script(Text("OK"))
        view.test_provider_button.click()
        words = await _checked(view)
        assert "API key: accepted" in words
        assert model_endpoint.requests[-1].headers["authorization"] == ("Bearer sk-canary-from-env")
        await view.load()
        assert (
            view.providers_list.currentItem().text().endswith("key from $MOORING_TEST_PROVIDER_KEY")
        )


async def test_a_provider_is_edited_here_its_key_kept_or_replaced(
    tmp_path: Path, qtbot: QtBot, model_endpoint: ModelEndpoint
) -> None:
    async with open_view(tmp_path, qtbot) as (view, host):
        await host.provider_desk.add(  # type: ignore[union-attr]
            _draft("local", model_endpoint.openai_url, key="sk-first")
        )
        await view.load()
        [before] = await host.providers.list_providers()  # type: ignore[union-attr]
        assert view.edit_provider_button.isEnabled()
        assert view.edit_provider_button.accessibleName() == "Edit provider"

        editing = view.jobs.start(view.edit_provider_interactively(before))
        dialog = await next_dialog(view)
        assert isinstance(dialog, AddProviderDialog)
        assert dialog.windowTitle() == "Edit model provider"
        assert dialog.add_button.text() == "Save"
        assert (dialog.name_edit.text(), dialog.model_edit.text(), dialog.url_edit.text()) == (
            "local",
            "scripted-model",
            model_endpoint.openai_url,
        )
        assert dialog.key_edit.text() == ""  # a secret is never shown
        dialog.name_edit.setText("renamed")
        dialog.model_edit.setText("other-model")
        dialog.add_button.click()
        await editing
        [after] = await host.providers.list_providers()  # type: ignore[union-attr]
        assert (after.id, after.name, after.model, after.has_api_key) == (
            before.id,
            "renamed",
            "other-model",
            True,
        )
        assert host.secrets.get(PROVIDER_SECRET_SCOPE, api_key_name(after.id)) == "sk-first"
        assert "renamed" in view.providers_list.currentItem().text()

        # What a chat's "Edit provider…" does: this provider's edit dialog.
        view.edit_provider_named("renamed")
        dialog = await next_dialog(view)
        assert isinstance(dialog, AddProviderDialog)
        assert dialog.name_edit.text() == "renamed"
        dialog.key_edit.setText("sk-second")
        dialog.add_button.click()
        await until(lambda: not dialog.isVisible(), view.loaded)
        await until(
            lambda: host.secrets.get(PROVIDER_SECRET_SCOPE, api_key_name(after.id)) == "sk-second",
            view.loaded,
        )


async def test_a_refused_key_says_what_to_do_in_the_window_not_a_command(
    tmp_path: Path, qtbot: QtBot, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.api_key = "sk-the-right-one"
    async with open_view(tmp_path, qtbot) as (view, host):
        await host.provider_desk.add(  # type: ignore[union-attr]
            _draft("nokey", model_endpoint.openai_url, key="")
        )
        await view.load()
        view.test_provider_button.click()
        words = await _checked(view)
        assert "API key: refused" in words
        assert "Give nokey a key: in Settings, under Model providers, select it" in words
        assert "mooring " not in words


async def test_any_setting_is_changed_in_the_window_not_with_a_command(
    tmp_path: Path, qtbot: QtBot
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    settings_file = data / "settings.json"
    live = Settings()
    rows = tuple(
        SettingRow(s.key, str(live.get(s.key)), s.description)
        for s in SETTINGS
        if s.key in ("engine.idle_exit_s", "notifications.muted_conversations")
    )
    info = WindowInfo(
        data_dir=str(data),
        database="db",
        schema="head",
        settings_file=str(settings_file),
        settings=rows,
        editor=SettingsEditor(settings_file, live),
    )
    view = SettingsView(info)
    qtbot.addWidget(view)
    view.show()
    box = view.table.parentWidget()
    assert isinstance(box, QGroupBox)
    assert "mooring " not in box.title()
    reports: list[str] = []
    view.report.connect(reports.append)
    try:

        def cell(row: int, column: int) -> QTableWidgetItem:
            item = view.table.item(row, column)
            assert item is not None
            return item

        row = next(
            r for r in range(view.table.rowCount()) if cell(r, 0).text() == "engine.idle_exit_s"
        )
        assert cell(row, 0).flags() & Qt.ItemFlag.ItemIsEditable == Qt.ItemFlag(0)
        assert cell(row, 1).flags() & Qt.ItemFlag.ItemIsEditable

        cell(row, 1).setText("soon")  # what the user typed in the cell
        assert reports == ["engine.idle_exit_s takes a int, not 'soon'."]
        assert cell(row, 1).text() == "600"  # the stored value, shown again

        saved: list[str] = []
        view.setting_saved.connect(saved.append)
        cell(row, 1).setText("120")
        await until(lambda: bool(saved), view.setting_saved)
        assert load_settings(settings_file).get("engine.idle_exit_s") == 120
        assert cell(row, 1).text() == "120"
    finally:
        await view.stop()
