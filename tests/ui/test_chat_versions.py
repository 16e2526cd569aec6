"""Regenerate, edit, versions, code blocks and the system prompt from the window: real Qt
widgets over a real host; the model is scripted."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QInputDialog
from pytestqt.qtbot import QtBot

from mooring.ui.dialogs.system_prompt import SystemPromptDialog
from mooring.ui.models.conversations import MessageRole
from mooring.ui.views.conversations_view import ConversationsView
from tests.helpers.scripted_model import ScriptedModel
from tests.ui.conftest import until
from tests.ui.test_conversations import open_chat, wait_turn

pytestmark = pytest.mark.anyio

CODE = "Two blocks:\n\n```python\nprint('a')\n```\n\nand\n\n```sh\necho b\n```"


async def say(view: ConversationsView, text: str) -> None:
    """Type ``text`` in the composer, send it with Enter, wait for the reply's turn to end."""
    QTest.keyClicks(view.composer, text)
    QTest.keyClick(view.composer, Qt.Key.Key_Return)
    await wait_turn(view)


def texts(view: object) -> list[str]:
    messages = view.messages  # type: ignore[attr-defined]
    return [str(messages.index(r, 0).data(MessageRole.TEXT)) for r in range(messages.rowCount())]


async def test_regenerate_keeps_the_old_reply_as_a_version_stepped_to_with_the_keyboard(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("Bonjour.").reply("Hello.")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, _chat):
        await say(view, "Greet me")
        pane = view.pane
        view.transcript.setCurrentIndex(view.messages.index(1, 0))
        assert pane.regenerate_button.isEnabled()
        assert not pane.edit_button.isEnabled()  # the model's words are not the user's to edit
        QTest.mouseClick(pane.regenerate_button, Qt.MouseButton.LeftButton)
        await wait_turn(view)
        await until(
            lambda: view.messages.index(1, 0).data(MessageRole.VERSION) is not None,
            view.messages.dataChanged,
        )
        assert texts(view) == ["Greet me", "Hello."]
        reply = view.messages.index(1, 0)
        assert "2/2" in str(reply.data(MessageRole.SPEAKER))
        assert "(version 2 of 2)" in str(reply.data(Qt.ItemDataRole.AccessibleTextRole))

        # Alt+Left on the chosen reply shows the first version; the buttons say where we are.
        view.transcript.setCurrentIndex(reply)
        assert pane.previous_version_button.isEnabled()
        assert pane.previous_version_button.accessibleName() == "Previous version"
        view.transcript.setFocus()
        QTest.keyClick(view.transcript, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
        await until(lambda: texts(view) == ["Greet me", "Bonjour."], view.messages.modelReset)
        view.transcript.setCurrentIndex(view.messages.index(1, 0))
        await until(lambda: pane.version_label.text() == "1 of 2", view.messages.dataChanged)
        assert not pane.previous_version_button.isEnabled()
        assert pane.next_version_button.isEnabled()


async def test_edit_sends_new_words_in_place_of_the_users_message(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("12 suppliers.").reply("3 files.")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, _chat):
        await say(view, "How many suppliers?")
        view.transcript.setCurrentIndex(view.messages.index(0, 0))
        assert view.pane.edit_button.accessibleName() == "Edit message"

        def answer(dialog: object) -> None:
            assert isinstance(dialog, QInputDialog)
            assert dialog.textValue() == "How many suppliers?"
            dialog.setTextValue("How many files?")
            dialog.accept()

        view.dialog_opened.connect(answer)
        QTest.mouseClick(view.pane.edit_button, Qt.MouseButton.LeftButton)
        await wait_turn(view)
        await until(
            lambda: texts(view) == ["How many files?", "3 files."], view.messages.rowsInserted
        )
        assert [m.content for m in chat_model.requests[-1].messages] == ["How many files?"]


async def test_each_code_block_is_copied_on_its_own(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply(CODE)
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, _chat):
        await say(view, "Show me code")
        view.transcript.setCurrentIndex(view.messages.index(1, 0))
        pane = view.pane
        assert pane.copy_code_button.isEnabled()
        actions = pane.code_menu.actions()
        assert [a.text().split(":")[0] for a in actions] == ["Block 1 (python)", "Block 2 (sh)"]
        actions[1].trigger()
        assert QGuiApplication.clipboard().text() == "echo b"
        actions[0].trigger()
        assert QGuiApplication.clipboard().text() == "print('a')"
        view.transcript.setCurrentIndex(view.messages.index(0, 0))
        assert not pane.copy_code_button.isEnabled()  # the user's message has none


async def test_the_system_prompt_button_saves_the_conversations_own_words(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("D'accord.").reply("Oui.")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, chat):
        await say(view, "Hi")
        assert view.system_button.isEnabled()

        def answer(dialog: object) -> None:
            assert isinstance(dialog, SystemPromptDialog)
            dialog.use_own.setChecked(True)
            dialog.editor.setPlainText("Answer in French.")
            dialog.accept()

        view.dialog_opened.connect(answer)
        QTest.mouseClick(view.system_button, Qt.MouseButton.LeftButton)
        conversation_id = view.current_id
        assert conversation_id is not None
        await until(
            lambda: (
                view.presenter.shown is not None
                and view.presenter.shown.system_prompt == "Answer in French."
            ),
            view.report,
        )
        assert (await chat.get(conversation_id)).system_prompt == "Answer in French."
        await say(view, "Again")
        assert "Answer in French." in (chat_model.requests[-1].system or "")
