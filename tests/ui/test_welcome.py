"""The first-run welcome over a real host: it never blocks the window, Esc closes it, and its
three ways to start work — the sample import on the bundled server, importing other apps'
servers, provider setup."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot

from mooring.core.chat import ProviderKind
from mooring.core.ids import new_id
from mooring.core.tasks.states import LocalState
from mooring.ui.dialogs.import_servers import ImportDialog
from mooring.ui.dialogs.input_form import InputFormDialog
from mooring.ui.dialogs.preferences import AddProviderDialog
from mooring.ui.dialogs.welcome import WelcomeDialog
from tests.helpers.local_model import smol_model
from tests.services.conftest import SAMPLES, demo_definition
from tests.ui.conftest import next_dialog, until
from tests.ui.test_window_flows import open_window

pytestmark = pytest.mark.anyio


async def test_the_welcome_does_not_block_and_esc_closes_it(tmp_path: Path, qtbot: QtBot) -> None:
    async with open_window(tmp_path, qtbot) as (window, _ui_host):
        welcome = window.show_welcome()
        assert isinstance(welcome, WelcomeDialog)
        assert welcome.windowTitle() == "Welcome to Mooring"
        assert not welcome.isModal()
        assert window.isEnabled()
        # The bundled server is not configured in this data folder: no sample to try.
        await until(lambda: not welcome.sample_button.isEnabled(), welcome.filled, limit=30)
        for button in (
            welcome.import_button,
            welcome.sample_button,
            welcome.providers_button,
            welcome.local_button,
            welcome.close_button,
        ):
            assert button.accessibleName()
        # Looking around: the main window's views work while the welcome is open.
        window.show_view(window.servers)
        assert window.tabs.currentWidget() is window.servers
        QTest.keyClick(welcome, Qt.Key.Key_Escape)
        assert not welcome.isVisible()
        assert window.welcome is None


async def test_the_sample_import_asks_a_question_then_completes_when_answered(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """The sample shows what Mooring is for: a long task, approved, that asks the user which
    column holds the ids (docs/getting-started.md says so), then completes once answered."""
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        bundled = dataclasses.replace(
            demo_definition(tmp_path / "bundled.sqlite3", tmp_path / "bundled.log"),
            id=new_id(),
            alias="bundled",
            builtin=True,
        )
        env = dict(bundled.env)
        env["MOORING_DEMO_SAMPLES_DIR"] = str(SAMPLES)
        await ui_host.host.catalog.add_server(dataclasses.replace(bundled, env=env))
        welcome = window.show_welcome()
        await until(lambda: welcome.sample_button.isEnabled(), welcome.filled, limit=30)
        welcome.sample_button.click()
        assert not welcome.isVisible()
        approval = await next_dialog(ui_host.asker)
        assert approval.windowTitle() == "Approve tool call"
        approval.buttons["Allow once"].click()
        card = window.tasks.card
        await until(
            lambda: card.view is not None and card.view.record.state is LocalState.INPUT_REQUIRED,
            card.changed,
            limit=60,
        )
        assert card.state_label.text() == "needs your input"
        assert window.tabs.currentWidget() is window.tasks
        assert card.view is not None
        assert card.view.record.tool == "import_suppliers"
        assert card.view.server_label == "bundled"
        assert card.visible_buttons() == ["Answer", "Cancel"]
        card.buttons["Answer"].click()
        form = window.tasks.forms[card.view.id]
        assert isinstance(form, InputFormDialog)
        assert "Which column is the supplier identifier?" in form.message_label.text()
        assert form.form is not None
        combo = form.form.inputs["column"]
        assert isinstance(combo, QComboBox)
        combo.setCurrentIndex(combo.findData("vendor_code"))
        form.send_button.click()
        await until(
            lambda: card.view is not None and card.view.record.state is LocalState.COMPLETED,
            card.changed,
            limit=60,
        )


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux locations")
async def test_the_welcome_offers_the_servers_found_and_opens_the_import(
    tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {"notes": {"command": "notes-server"}}}))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    async with open_window(tmp_path, qtbot) as (window, _ui_host):
        welcome = window.show_welcome()
        await until(lambda: welcome.import_button.isEnabled(), welcome.filled, limit=30)
        assert "1 server(s) in Claude Desktop" in welcome.import_note.text()
        opened: list[object] = []
        window.servers.dialog_opened.connect(opened.append)
        welcome.import_button.click()
        await until(lambda: bool(opened), window.servers.dialog_opened)
        dialog = opened.pop()
        assert isinstance(dialog, ImportDialog)
        assert window.tabs.currentWidget() is window.servers
        assert [e.name for e in dialog.chosen()] == ["notes"]
        dialog.reject()


async def test_use_a_local_model_adds_a_model_file_as_a_provider_with_no_key(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        welcome = window.show_welcome()
        opened: list[object] = []
        window.settings.dialog_opened.connect(opened.append)
        welcome.local_button.click()
        await until(lambda: bool(opened), window.settings.dialog_opened)
        dialog = opened.pop()
        assert isinstance(dialog, AddProviderDialog)
        assert window.tabs.currentWidget() is window.settings
        assert dialog.kind() is ProviderKind.LOCAL
        assert dialog.url_edit.accessibleName() == "Model file"
        assert not dialog.key_edit.isVisibleTo(dialog)  # no key for a local model
        assert not dialog.key_env_edit.isVisibleTo(dialog)
        dialog.name_edit.setText("smol")
        dialog.add_button.click()
        assert dialog.error_label.text() == "Say which model file to run (a .gguf file)."
        reports: list[str] = []
        window.settings.report.connect(reports.append)
        dialog.url_edit.setText(str(smol_model()))
        dialog.add_button.click()
        await until(lambda: bool(reports), window.settings.report, limit=30)
        assert reports == ["Added smol: it is the default."]
        desk = ui_host.host.provider_desk
        assert desk is not None
        [view] = await desk.providers()
        assert (view.config.kind, view.config.model) == (ProviderKind.LOCAL, smol_model().stem)
        assert not view.config.key_configured
