"""The system prompt dialog: the default of Settings, or the conversation's own words."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from mooring.ui.dialogs.system_prompt import MAX_CHARS, SystemPromptDialog


def test_a_conversation_following_the_default_can_be_given_its_own_words(qtbot: QtBot) -> None:
    dialog = SystemPromptDialog(None, "Answer in French.")
    qtbot.addWidget(dialog)
    assert dialog.use_default.isChecked()
    assert not dialog.editor.isEnabled()
    assert dialog.choice().text is None

    dialog.use_own.setFocus()
    QTest.keyClick(dialog.use_own, Qt.Key.Key_Space)
    assert dialog.editor.isEnabled()
    dialog.editor.selectAll()
    QTest.keyClicks(dialog.editor, "Be brief.")
    assert dialog.choice().text == "Be brief."

    # Emptied, it means no instructions at all (not the default).
    dialog.editor.clear()
    assert dialog.choice().text == ""


def test_a_prompt_too_long_to_keep_cannot_be_saved_and_says_why(qtbot: QtBot) -> None:
    dialog = SystemPromptDialog("short", "")
    qtbot.addWidget(dialog)
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    assert save.isEnabled()
    dialog.editor.setPlainText("x" * (MAX_CHARS + 1))
    assert not save.isEnabled()
    assert "too long" in dialog.count.text()
    # Back to the default: nothing of the long text is kept, so it can be saved.
    dialog.use_default.setChecked(True)
    assert save.isEnabled()
    assert dialog.choice().text is None


def test_every_control_is_named_and_reached_by_tab(qtbot: QtBot) -> None:
    dialog = SystemPromptDialog("mine", "theirs")
    qtbot.addWidget(dialog)
    for widget in (dialog.use_default, dialog.use_own, dialog.default_view, dialog.editor):
        assert widget.accessibleName()
        assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus
    # The editor passes Tab on instead of typing it (keyboard users can leave it).
    assert dialog.editor.tabChangesFocus()
