"""The "Assistants" dialog and starting a conversation from an assistant, in the window: real
Qt widgets over a real host and SQLite file, the demo server as a subprocess; only the model
is scripted."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QTreeWidgetItem, QWidget
from pytestqt.qtbot import QtBot

from mooring.bootstrap import build_host
from mooring.services.host import Host
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from mooring.ui.dialogs.assistants import AssistantsDialog
from mooring.ui.main_window import MainWindow, WindowInfo
from tests.helpers.scripted_model import ScriptedModel
from tests.services.conftest import demo_definition
from tests.ui.conftest import until
from tests.ui.test_conversations import wait_turn

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def open_window(
    tmp_path: Path, qtbot: QtBot, model: ScriptedModel
) -> AsyncIterator[tuple[MainWindow, Host]]:
    """The main window over a host with the demo server, whose chat talks to the scripted
    model; everything stopped before the test returns."""
    data = tmp_path / "data"
    data.mkdir()
    paths = Paths(data_dir=data, config_dir=data / "config", log_dir=data / "logs", overridden=True)
    db = Database.open(paths.database)
    host = build_host(paths, Settings({}), db, models=(model.resolve, model.factory))
    await host.catalog.add_server(
        demo_definition(tmp_path / "demo-store.sqlite3", tmp_path / "requests.log")
    )
    window = MainWindow(host, WindowInfo(data_dir=str(data), database="db", schema="head"))
    qtbot.addWidget(window)
    window.show()
    try:
        await window.start()
        yield window, host
    finally:
        window.close()
        await window.stop_jobs()
        await host.stop()
        db.close()


def press(widget: QWidget, key: Qt.Key = Qt.Key.Key_Space) -> None:
    """Focus ``widget`` as Tab would, and press ``key`` on it."""
    widget.setFocus(Qt.FocusReason.TabFocusReason)
    QTest.keyClick(widget, key)


def tool_item(dialog: AssistantsDialog, alias: str, tool: str) -> QTreeWidgetItem | None:
    for n in range(dialog.tree.topLevelItemCount()):
        top = dialog.tree.topLevelItem(n)
        if top is None or top.text(0) != alias:
            continue
        for k in range(top.childCount()):
            child = top.child(k)
            if child is not None and child.text(0) == tool:
                return child
    return None


async def test_an_assistant_made_by_keyboard_starts_a_conversation_with_only_its_tools(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("Three sample files.")
    async with open_window(tmp_path, qtbot, chat_model) as (window, host):
        view = window.conversations
        starter = view.starter
        opened: list[AssistantsDialog] = []
        starter.dialog_opened.connect(opened.append)
        window.show_view(window.settings)
        press(window.settings.assistants_button)  # Settings → "Assistants…"
        await until(lambda: bool(opened), starter.dialog_opened)
        dialog = opened[0]
        await until(
            lambda: tool_item(dialog, "demo", "list_sample_files") is not None, dialog.loaded
        )
        assert dialog.every_tool.isChecked()
        assert not dialog.tree.isEnabled()  # every tool: nothing to choose

        dialog.name_field.setFocus(Qt.FocusReason.TabFocusReason)
        QTest.keyClicks(dialog.name_field, "Librarian")
        QTest.keyClick(dialog.name_field, Qt.Key.Key_Tab)
        assert QApplication.focusWidget() is dialog.prompt_field
        QTest.keyClicks(dialog.prompt_field, "Answer like a librarian.")
        press(dialog.every_tool)
        assert dialog.tree.isEnabled()
        item = tool_item(dialog, "demo", "list_sample_files")
        assert item is not None
        dialog.tree.setFocus(Qt.FocusReason.TabFocusReason)
        dialog.tree.setCurrentItem(item)
        QTest.keyClick(dialog.tree, Qt.Key.Key_Space)
        assert item.checkState(0) == Qt.CheckState.Checked
        assert dialog.offered() == ((), ("demo:list_sample_files",))
        saved: list[str] = []
        dialog.saved.connect(saved.append)
        press(dialog.save_button)
        await until(lambda: saved == ["Librarian"], dialog.saved)

        desk = host.assistants
        assert desk is not None
        stored = await desk.get("Librarian")
        assert stored.assistant.system_prompt == "Answer like a librarian."
        assert stored.tools == ("demo:list_sample_files",)
        press(dialog.close_button)
        assert not dialog.isVisible()

        # "From assistant" in the Conversations view lists it; choosing it starts one.
        window.show_view(view)
        await until(lambda: "Librarian" in starter.actions_by_name(), starter.changed)
        shown: list[str] = []
        view.transcript_loaded.connect(shown.append)
        starter.actions_by_name()["Librarian"].trigger()
        await until(lambda: bool(shown), view.transcript_loaded)
        QTest.keyClicks(view.composer, "Which sample files are there?")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)

        [request] = chat_model.requests
        assert request.system is not None
        assert request.system.endswith("Answer like a librarian.")
        assert [t.name for t in request.tools] == ["demo__list_sample_files"]
        row = view.conversations.index(view.conversations.row_of(shown[0]), 0)
        await until(lambda: "Librarian · " in str(row.data()), view.loaded)


async def test_a_mistake_in_the_dialog_is_said_and_the_form_is_kept(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    async with open_window(tmp_path, qtbot, chat_model) as (window, host):
        dialog = window.conversations.starter.manage()
        await until(lambda: dialog.tree.topLevelItemCount() == 1, dialog.loaded)
        for widget in (
            dialog.list,
            dialog.new_button,
            dialog.delete_button,
            dialog.name_field,
            dialog.prompt_field,
            dialog.provider_box,
            dialog.model_box,
            dialog.every_tool,
            dialog.tree,
            dialog.save_button,
            dialog.close_button,
            window.conversations.starter.button,
        ):
            assert widget.accessibleName(), widget
            assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus, widget
        QTest.keyClicks(dialog.prompt_field, "No name yet.")
        press(dialog.save_button)
        await until(lambda: "needs a name" in dialog.status.text(), dialog.refused)
        assert dialog.prompt_field.toPlainText() == "No name yet."
        desk = host.assistants
        assert desk is not None
        assert await desk.assistants() == []
        # A hostile server alias or tool name stays plain text (a tree item renders no HTML).
        assert dialog.status.textFormat() == Qt.TextFormat.PlainText
