"""Attaching files in the window: dropped on the composer or picked (Ctrl+Shift+A), shown as
chips, removed by keyboard; an image for a model that reads none is refused before anything is
sent and the draft and its files stay; what is sent shows under the message, an image as a
thumbnail decoded from its stored bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QWidget
from pytestqt.qtbot import QtBot

from mooring.core.files import FileKind
from mooring.ui.models.conversations import MessageRole
from tests.helpers.scripted_model import ScriptedModel
from tests.helpers.tiny_png import tiny_png
from tests.ui.conftest import until
from tests.ui.test_conversations import ACCESSIBLE, open_chat, wait_turn

pytestmark = pytest.mark.anyio


def drop(widget: QWidget, *paths: Path) -> None:
    """Drop files on a widget as a file manager does: the drag enters, moves, drops."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    action, button, none = (
        Qt.DropAction.CopyAction,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(widget, QDragEnterEvent(QPoint(5, 5), action, mime, button, none))
    QApplication.sendEvent(widget, QDragMoveEvent(QPoint(5, 5), action, mime, button, none))
    QApplication.sendEvent(widget, QDropEvent(QPointF(5, 5), action, mime, button, none))


async def test_dropped_files_show_as_chips_an_image_is_refused_and_kept_then_removed_by_key(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Suppliers: 40\n")
    image = tmp_path / "red.png"
    image.write_bytes(tiny_png())
    chat_model.reply("Forty suppliers.")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, chat):
        drop(view.composer.viewport(), notes, image)
        assert [c.accessibleName() for c in view.files.chips] == [
            "Attached file notes.txt, 14 bytes",
            "Attached image red.png, 73 bytes",
        ]
        assert view.composer.toPlainText() == ""  # the names are not typed into the box
        assert "200 KB" in view.files.attach_button.toolTip()

        QTest.keyClicks(view.composer, "What is this?")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await until(lambda: "does not take images" in view.notice.text(), view.notice_bar.changed)
        assert chat_model.requests == []
        assert view.composer.toPlainText() == "What is this?"
        assert [c.text() for c in view.files.chips] == [
            "notes.txt (14 bytes) ✕",
            "red.png (73 bytes) ✕",
        ]

        view.files.chips[1].setFocus()
        QTest.keyClick(view.files.chips[1], Qt.Key.Key_Delete)
        assert [c.accessibleName() for c in view.files.chips] == [
            "Attached file notes.txt, 14 bytes"
        ]
        assert view.files.chips[0].hasFocus()

        view.composer.setFocus()
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        [asked] = chat_model.requests[-1].messages
        assert "[Attached file notes.txt (text/plain, 14 bytes)]\nSuppliers: 40\n" in asked.content
        assert view.files.chips == []
        shown = str(view.messages.index(0, 0).data(ACCESSIBLE))
        assert shown.startswith("You: What is this?")
        assert "Attached file notes.txt (text/plain, 14 bytes)" in shown
        assert view.current_id is not None
        [user, _reply] = await chat.messages(view.current_id)
        assert [f.name for f in user.files] == ["notes.txt"]


async def test_a_picked_image_goes_to_a_vision_model_and_shows_as_a_thumbnail(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    image = tmp_path / "red.png"
    image.write_bytes(tiny_png())
    chat_model.reply("A red square.")
    async with open_chat(tmp_path, qtbot, chat_model) as (window, view, chat):
        conversation_id = await view.new_conversation()
        assert conversation_id is not None
        await chat.configure(conversation_id, model="gpt-4o")

        opened: list[QFileDialog] = []
        view.dialog_opened.connect(
            lambda d: opened.append(d) if isinstance(d, QFileDialog) else None
        )
        rows = dict((does, keys) for keys, does in window.menu_actions.shortcut_rows())
        assert rows["Attach files…"] == "Ctrl+Shift+A"
        window.menu_actions.attach.trigger()  # Edit > Attach files…, Ctrl+Shift+A
        await until(lambda: bool(opened), view.dialog_opened, limit=10)
        [dialog] = opened
        assert dialog.accessibleName() == "Attach files"
        # As a user does: go to the folder, type the name, Attach. (QFileDialog.selectFile
        # leaves the name box alone while it has the focus, so it is typed into.)
        dialog.setDirectory(str(image.parent))
        name = dialog.findChild(QLineEdit, "fileNameEdit")
        assert isinstance(name, QLineEdit)
        name.setText(image.name)
        dialog.accept()
        await until(lambda: bool(view.files.chips), view.files.files_changed, limit=10)

        QTest.keyClicks(view.composer, "Colour?")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        [asked] = chat_model.requests[-1].messages
        assert [(i.kind, i.data) for i in asked.images] == [(FileKind.IMAGE, tiny_png())]
        [thumb] = view.messages.index(0, 0).data(MessageRole.THUMBNAILS)
        assert isinstance(thumb, QImage)
        assert (thumb.width(), thumb.height()) == (96, 72)
        assert thumb.pixelColor(10, 10).red() == 255
        assert "Attached image red.png (image/png, 73 bytes)" in str(
            view.messages.index(0, 0).data(ACCESSIBLE)
        )
