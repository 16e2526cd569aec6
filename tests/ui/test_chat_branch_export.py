"""Branching from a message, exporting from the menu and the list, relative times that tick,
and the shortcuts listed: real Qt widgets over a real host on a real SQLite file; the model is
scripted."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMenu
from pytestqt.qtbot import QtBot

from mooring.ui.dialogs.shortcuts import ShortcutsDialog
from mooring.ui.models.conversations import MessageRole
from mooring.ui.views.conversations_view import ACTIVITY_TICK_MS, ConversationsView
from tests.helpers.scripted_model import ScriptedModel
from tests.ui.conftest import until
from tests.ui.test_chat_versions import say, texts
from tests.ui.test_conversations import open_chat, titles

pytestmark = pytest.mark.anyio

popup_noise = pytest.mark.qt_log_ignore("This plugin does not support grabbing the keyboard")
"""A menu that pops up asks the offscreen test platform for the keyboard, which it has not."""


def half_written(folder: Path) -> list[Path]:
    """Temporary files an export left behind."""
    return list(folder.rglob("*.part"))


def speakers(view: ConversationsView) -> list[str]:
    messages = view.messages
    return [str(messages.index(r, 0).data(MessageRole.SPEAKER)) for r in range(messages.rowCount())]


@popup_noise
async def test_branch_from_the_message_menu_and_the_keyboard_opens_the_new_conversation(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("Bonjour.").reply("Fine, thanks.")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, chat):
        await say(view, "Greet me")
        await say(view, "How are you?")
        original = view.current_id
        assert original is not None
        before = await chat.messages(original)
        pane = view.pane

        # A right click on the first reply: its menu offers "Branch from here".
        menus: list[QMenu] = []
        pane.menu_opened.connect(menus.append)
        rect = view.transcript.visualRect(view.messages.index(1, 0))
        view.transcript.customContextMenuRequested.emit(rect.center())
        [menu] = menus
        assert menu.accessibleName() == "Message actions"
        assert view.transcript.currentIndex().row() == 1  # the message clicked is chosen
        [branch] = [a for a in menu.actions() if a.text() == "Branch from here"]
        assert branch.isEnabled()
        assert branch.shortcut().toString() == "Ctrl+Shift+B"
        branch.trigger()
        await until(
            lambda: view.current_id not in (None, original) and len(texts(view)) == 3,
            view.transcript_loaded,
            view.messages.modelReset,
        )
        made = view.current_id
        assert made is not None
        assert texts(view)[1:] == ["Greet me", "Bonjour."]
        assert speakers(view)[0] == "System"
        assert "Branched from “Greet me”" in texts(view)[0]
        assert "Greet me (branch)" in titles(view)
        assert view.conversations.row_of(made) == view.list_view.currentIndex().row()
        assert await chat.messages(original) == before  # the original is untouched

        # Ctrl+Shift+B on the chosen message of the shown conversation: a branch of the branch.
        view.transcript.setCurrentIndex(view.messages.index(1, 0))
        view.transcript.setFocus()
        QTest.keySequence(view.transcript, QKeySequence("Ctrl+Shift+B"))
        await until(
            lambda: view.current_id not in (None, original, made),
            view.transcript_loaded,
        )
        await until(lambda: len(texts(view)) == 3, view.messages.modelReset)
        assert texts(view)[2] == "Greet me"
        assert "Greet me (branch) (branch)" in titles(view)
        assert len(await chat.list_conversations()) == 3


@popup_noise
async def test_export_from_the_menu_the_list_and_a_path_writes_whole_files_or_says_why(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("Imported 12 suppliers.")
    async with open_chat(tmp_path, qtbot, chat_model) as (window, view, chat):
        await say(view, "Import the <suppliers> file")
        conversation_id = view.current_id
        assert conversation_id is not None
        opened: list[QFileDialog] = []
        view.dialog_opened.connect(
            lambda d: opened.append(d) if isinstance(d, QFileDialog) else None
        )

        # File ▸ Export conversation… (Ctrl+Shift+E) asks where, offering Markdown and JSON.
        action = window.menu_actions.export_conversation
        assert action.isEnabled()
        assert action.shortcut().toString() == "Ctrl+Shift+E"
        QTest.keySequence(window, QKeySequence("Ctrl+Shift+E"))
        await until(lambda: bool(opened), view.dialog_opened, limit=10)
        assert opened[0].nameFilters() == ["Markdown (*.md)", "JSON (*.json)"]
        opened[0].reject()

        # The list's context menu offers it too.
        menus: list[QMenu] = []
        view.menu_opened.connect(menus.append)
        row = view.list_view.visualRect(view.conversations.index(0, 0)).center()
        view.list_view.customContextMenuRequested.emit(row)
        [menu] = menus
        [export] = [a for a in menu.actions() if a.text() == "Export conversation…"]
        export.trigger()
        await until(lambda: len(opened) == 2, view.dialog_opened, limit=10)
        opened[1].reject()

        # Written where asked (JSON by the name), whole, and the window says where.
        reports: list[str] = []
        view.report.connect(reports.append)
        target = tmp_path / "out" / "suppliers.json"
        target.parent.mkdir()
        assert await view.export_to(target)
        saved = json.loads(target.read_text(encoding="utf-8"))
        again = json.loads(await chat.export(conversation_id, "json"))
        assert {**saved, "exported_at": None} == {**again, "exported_at": None}
        assert sorted(p.name for p in target.parent.iterdir()) == ["suppliers.json"]
        assert reports[-1] == f"Conversation saved to {target}."
        markdown = target.with_suffix(".md")
        assert await view.export_to(markdown)
        assert markdown.read_text(encoding="utf-8").startswith("# Import the \\<suppliers\\> file")

        # A place that cannot be written: told clearly, nothing half-written, the old file kept.
        assert not await view.export_to(tmp_path / "missing" / "suppliers.md")
        assert not view.notice.isHidden()
        assert "Could not save suppliers.md" in view.notice.text()
        assert "No such file or directory" in view.notice.text()
        assert "Traceback" not in view.notice.text()
        assert not await view.export_to(target.parent)  # a folder, not a file
        assert "Could not save out" in view.notice.text()
        assert sorted(p.name for p in target.parent.iterdir()) == [
            "suppliers.json",
            "suppliers.md",
        ]
        assert half_written(tmp_path) == []  # no half-written file left anywhere


async def test_the_list_s_relative_times_tick_without_reading_the_list_again(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("Hello.")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, chat):
        await say(view, "Hi")
        conversation_id = view.current_id
        assert conversation_id is not None
        stored = await chat.get(conversation_id)
        model = view.conversations
        row = model.index(model.row_of(conversation_id), 0)
        model.now = lambda: stored.updated_at + timedelta(seconds=10)
        model.tick()
        assert "just now" in str(row.data())

        reads: list[None] = []
        view.loaded.connect(lambda: reads.append(None))
        changed: list[int] = []
        model.dataChanged.connect(lambda top, _b, _r: changed.append(top.row()))
        assert view.activity_timer.isActive()
        assert view.activity_timer.interval() == ACTIVITY_TICK_MS
        model.now = lambda: stored.updated_at + timedelta(minutes=5, seconds=3)
        view.activity_timer.timeout.emit()  # a minute went by
        assert changed == [0]
        assert "5 min ago" in str(row.data())
        assert "5 min ago" in str(row.data(Qt.ItemDataRole.AccessibleTextRole))
        model.now = lambda: stored.updated_at + timedelta(hours=2, minutes=1)
        view.activity_timer.timeout.emit()
        assert "2 h ago" in str(row.data())
        assert reads == []  # drawn again from what is held: the list was not read


async def test_the_shortcuts_dialog_lists_the_chat_shortcuts_old_and_new(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    async with open_chat(tmp_path, qtbot, chat_model) as (window, _view, _chat):
        QTest.keyClick(window, Qt.Key.Key_F1)
        dialog = window.findChild(ShortcutsDialog)
        assert isinstance(dialog, ShortcutsDialog)
        table = dialog.table
        rows = {}
        for r in range(table.rowCount()):
            keys, does = table.item(r, 0), table.item(r, 1)
            assert keys is not None
            assert does is not None
            rows[does.text()] = keys.text()
        native = QKeySequence.SequenceFormat.NativeText
        assert rows["New conversation"] == QKeySequence("Ctrl+N").toString(native)
        assert rows["Find in conversation"] == QKeySequence("Ctrl+F").toString(native)
        assert rows["Run a tool…"] == QKeySequence("Ctrl+K").toString(native)
        assert rows["Copy last reply"] == QKeySequence("Ctrl+Shift+C").toString(native)
        assert rows["Export conversation…"] == QKeySequence("Ctrl+Shift+E").toString(native)
        assert rows["Branch from the chosen message (in the transcript)"] == QKeySequence(
            "Ctrl+Shift+B"
        ).toString(native)
        assert len(set(rows.values())) == len(rows)  # no two commands share keys
        dialog.reject()
