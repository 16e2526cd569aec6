"""Copying what was said and saving a conversation, from the window: the exact text on the
clipboard, the CLI's export written where the user chose, every shortcut listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QLineEdit
from pytestqt.qtbot import QtBot

from mooring.ui.dialogs.shortcuts import ShortcutsDialog
from tests.helpers.scripted_model import ScriptedModel
from tests.ui.conftest import until
from tests.ui.test_conversations import open_chat, wait_turn

pytestmark = pytest.mark.anyio

REPLY = "Use `vendor_code`:\n\n```python\nprint('<b>hi</b>\\x1b')\n```\n\n**Done.**"


async def test_copy_puts_the_exact_text_of_a_message_and_of_the_last_reply_on_the_clipboard(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply(REPLY)
    async with open_chat(tmp_path, qtbot, chat_model) as (window, view, _chat):
        clipboard = QGuiApplication.clipboard()
        clipboard.setText("")
        QTest.keyClicks(view.composer, "Which column?")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        # Ctrl+Shift+C, from anywhere in the window: the reply as the model wrote it
        # (its Markdown, not the rendered or neutralised text).
        window.copy_reply_action.trigger()
        assert clipboard.text() == REPLY
        # The chosen message, by its button and by Ctrl+C in the transcript.
        view.transcript.setCurrentIndex(view.messages.index(0, 0))
        assert view.copy_button.isEnabled()
        assert view.copy_button.accessibleName() == "Copy message"
        QTest.mouseClick(view.copy_button, Qt.MouseButton.LeftButton)
        assert clipboard.text() == "Which column?"
        view.transcript.setCurrentIndex(view.messages.index(1, 0))
        view.transcript.setFocus()
        QTest.keySequence(view.transcript, QKeySequence.StandardKey.Copy)
        assert clipboard.text() == REPLY


async def test_export_saves_the_conversation_where_the_user_chose_as_the_cli_does(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("Imported 12 suppliers.")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, chat):
        QTest.keyClicks(view.composer, "Import the <suppliers> file")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        conversation_id = view.current_id
        assert conversation_id is not None
        assert view.export_button.isEnabled()
        target = tmp_path / "out" / "suppliers.json"
        target.parent.mkdir()

        opened: list[QFileDialog] = []
        view.dialog_opened.connect(
            lambda d: opened.append(d) if isinstance(d, QFileDialog) else None
        )
        QTest.mouseClick(view.export_button, Qt.MouseButton.LeftButton)
        await until(lambda: bool(opened), view.dialog_opened, limit=10)
        [dialog] = opened
        assert dialog.accessibleName() == "Export conversation"
        # The suggested name is the title, made safe for a file system.
        assert dialog.selectedFiles()[0].endswith("Import the suppliers file.md")
        # The user goes to the folder and types the name (a .json name: JSON is written).
        dialog.setDirectory(str(target.parent))
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        assert isinstance(name, QLineEdit)
        name.setText(target.name)
        dialog.accept()
        await until(target.exists, view.report, limit=10)
        saved = json.loads(target.read_text(encoding="utf-8"))
        again = json.loads(await chat.export(conversation_id, "json"))
        assert {**saved, "exported_at": None} == {**again, "exported_at": None}
        assert [m["content"] for m in saved["messages"]] == [
            "Import the <suppliers> file",
            "Imported 12 suppliers.",
        ]
        markdown = tmp_path / "out" / "suppliers.md"
        await view.presenter.export(conversation_id, markdown, "md")
        written = markdown.read_text(encoding="utf-8").splitlines()
        fresh = (await chat.export(conversation_id, "md")).splitlines()
        kept = [line for line in written if not line.startswith("- Exported: ")]
        assert kept == [line for line in fresh if not line.startswith("- Exported: ")]
        assert "Import the <suppliers> file" in "\n".join(written)


async def test_the_shortcuts_dialog_lists_the_window_s_own_shortcuts(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    async with open_chat(tmp_path, qtbot, chat_model) as (window, view, _chat):
        rows = dict((does, keys) for keys, does in window.menu_actions.shortcut_rows())
        assert rows["New conversation"] == QKeySequence("Ctrl+N").toString(
            QKeySequence.SequenceFormat.NativeText
        )
        assert rows["Run a tool…"] == "Ctrl+K"
        assert rows["Copy last reply"] == "Ctrl+Shift+C"
        assert rows["Find in conversation"] == "Ctrl+F"
        assert rows["Search conversations"] == "Ctrl+Shift+F"
        assert rows["Keyboard shortcuts"] == "F1"
        QTest.keyClick(window, Qt.Key.Key_F1)
        dialog = window.findChild(ShortcutsDialog)
        assert isinstance(dialog, ShortcutsDialog)
        assert dialog.isVisible()
        assert dialog.accessibleName() == "Keyboard shortcuts"
        items = [dialog.table.item(r, 1) for r in range(dialog.table.rowCount())]
        shown = {item.text() for item in items if item is not None}
        assert {"Copy last reply", "Find in conversation", "Run a tool…"} <= shown
        dialog.reject()
        # Ctrl+F opens the find bar over the transcript; Ctrl+Shift+F searches conversations.
        QTest.keySequence(window, QKeySequence.StandardKey.Find)
        assert view.find_bar.isVisible()
        assert view.find_bar.field.hasFocus()
        QTest.keySequence(window, QKeySequence("Ctrl+Shift+F"))
        assert view.search_field.hasFocus()
