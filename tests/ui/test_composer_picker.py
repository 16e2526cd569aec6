"""The composer's pickers over a real host, the bundled demo server as a subprocess and the
model scripted: ``/`` chooses a prompt (its arguments asked for in a form) whose text fills the
composer; ``@`` attaches a resource whose text the model receives with the message."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog, QLineEdit
from pytestqt.qtbot import QtBot

from mooring.core.host_api import HostApi
from mooring.core.views import ServerSpec
from mooring.ui.widgets.composer_picker import PickerDialog, ValuesDialog
from tests.e2e.test_tool_show import RAW
from tests.helpers.node_peers import everything_server, node
from tests.helpers.scripted_model import ScriptedModel
from tests.mcp.servers import PEERS
from tests.ui.conftest import until
from tests.ui.test_conversations import open_chat, wait_turn

pytestmark = pytest.mark.anyio


async def add_demo(host: HostApi, tmp_path: Path) -> None:
    """The bundled demo server as a stdio subprocess, called ``demo``."""
    store = str(tmp_path / "demo-store.sqlite3")
    args = ("-m", "mooring.demo_server", "--store", store)
    await host.server_desk.add(ServerSpec(alias="demo", command=sys.executable, args=args))


async def test_slash_then_a_prompt_with_arguments_fills_the_composer_with_its_text(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_chat(tmp_path, qtbot, ScriptedModel()) as (window, view, _chat):
        opened: list[QDialog] = []
        filled: list[str] = []
        await add_demo(window.host, tmp_path)
        view.picker.dialog_opened.connect(opened.append)
        view.picker.prompt_filled.connect(filled.append)
        view.composer.setFocus()

        QTest.keyClicks(view.composer, "/")
        await until(lambda: len(opened) == 1, view.picker.dialog_opened)
        picker = opened[0]
        assert isinstance(picker, PickerDialog)
        rows = [picker.list.item(r).text() for r in range(picker.list.count())]
        assert any(row.startswith("demo/summarise_import\nAsk the model") for row in rows), rows
        QTest.keyClicks(picker.filter_edit, "summarise")
        QTest.keyClick(picker.filter_edit, Qt.Key.Key_Down)  # the keyboard moves the choice
        QTest.keyClick(picker.filter_edit, Qt.Key.Key_Return)

        await until(lambda: len(opened) == 2, view.picker.dialog_opened)
        form = opened[1]
        assert isinstance(form, ValuesDialog)
        assert set(form.form.inputs) == {"path", "focus"}
        form._on_ok()  # without the required path: refused, the form stays open
        assert form.isVisible()
        path = form.form.inputs["path"]
        assert isinstance(path, QLineEdit)
        path.setText("suppliers_clean.csv")
        form._on_ok()

        await until(lambda: bool(filled), view.picker.prompt_filled)
        assert filled == ["demo/summarise_import"]
        assert view.composer.toPlainText() == (
            "Import the supplier file suppliers_clean.csv with import_suppliers, then "
            "summarise the result."
        )


async def test_slash_left_without_choosing_types_a_slash(tmp_path: Path, qtbot: QtBot) -> None:
    async with open_chat(tmp_path, qtbot, ScriptedModel()) as (_window, view, _chat):
        opened: list[QDialog] = []
        view.picker.dialog_opened.connect(opened.append)
        QTest.keyClicks(view.composer, "/")
        await until(lambda: bool(opened), view.picker.dialog_opened)
        opened[0].reject()
        await until(lambda: view.composer.toPlainText() == "/", view.composer.textChanged)


async def test_at_attaches_a_resource_whose_text_the_model_receives_and_the_message_keeps(
    tmp_path: Path, qtbot: QtBot
) -> None:
    model = ScriptedModel().reply("Three files.")
    async with open_chat(tmp_path, qtbot, model) as (window, view, chat):
        opened: list[QDialog] = []
        view.picker.dialog_opened.connect(opened.append)
        await add_demo(window.host, tmp_path)
        view.composer.setPlainText("Which files are there? ")
        view.composer.moveCursor(view.composer.textCursor().MoveOperation.End)

        QTest.keyClicks(view.composer, "@")
        await until(lambda: bool(opened), view.picker.dialog_opened)
        picker = opened[0]
        assert isinstance(picker, PickerDialog)
        QTest.keyClicks(picker.filter_edit, "samples")
        QTest.keyClick(picker.filter_edit, Qt.Key.Key_Return)
        await until(lambda: bool(view.picker.attachments), view.picker.attachments_changed)
        assert view.picker.attached_label.text() == "Attached: demo:mooring-demo://samples"

        view.send_button.click()
        await wait_turn(view)
        assert not view.picker.attachments  # sent with that message only
        [asked] = model.requests
        user = asked.messages[-1].content
        assert user.startswith("Which files are there?\n\n[Attached resource demo:mooring-")
        assert "suppliers_clean.csv (" in user  # the resource's text, read from the server
        assert view.current_id is not None
        [stored, _reply] = await chat.messages(view.current_id)
        assert stored.content == user  # kept with the message: a reload gives it again


async def test_a_hostile_prompt_is_listed_and_fills_the_composer_inert(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_chat(tmp_path, qtbot, ScriptedModel()) as (window, view, _chat):
        hostile = (str(PEERS / "hostile_server.py"),)
        await window.host.server_desk.add(
            ServerSpec(alias="h", command=sys.executable, args=hostile)
        )
        opened: list[QDialog] = []
        filled: list[str] = []
        view.picker.dialog_opened.connect(opened.append)
        view.picker.prompt_filled.connect(filled.append)

        QTest.keyClicks(view.composer, "/")
        await until(lambda: bool(opened), view.picker.dialog_opened)
        picker = opened[0]
        assert isinstance(picker, PickerDialog)
        [row] = [picker.list.item(r).text() for r in range(picker.list.count())]
        assert row.startswith("h/whisper\\x1b[5m\nPrompts <b>\\x1b[2J\\x1b[Hbad")
        assert not any(char in row for char in RAW)
        QTest.keyClick(picker.filter_edit, Qt.Key.Key_Return)

        await until(lambda: len(opened) == 2, view.picker.dialog_opened)
        form = opened[1]
        assert isinstance(form, ValuesDialog)
        assert "\x1b" not in form.windowTitle()
        topic = form.form.inputs["topic"]
        assert isinstance(topic, QLineEdit)
        topic.setText("x")
        form._on_ok()

        await until(lambda: bool(filled), view.picker.prompt_filled)
        text = view.composer.toPlainText()
        assert text.startswith("About x \\x1b[2J\\x1b[Hbad")
        assert "<U+202E>txt.exe" in text
        assert not any(char in text for char in RAW)


async def test_at_then_a_resource_template_asks_for_its_variables_and_attaches_what_it_names(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_chat(tmp_path, qtbot, ScriptedModel()) as (window, view, _chat):
        args = (str(everything_server()), "stdio")
        await window.host.server_desk.add(ServerSpec(alias="everything", command=node(), args=args))
        opened: list[QDialog] = []
        view.picker.dialog_opened.connect(opened.append)

        QTest.keyClicks(view.composer, "@")
        await until(lambda: bool(opened), view.picker.dialog_opened)
        picker = opened[0]
        assert isinstance(picker, PickerDialog)
        QTest.keyClicks(picker.filter_edit, "dynamic/text/")
        QTest.keyClick(picker.filter_edit, Qt.Key.Key_Return)

        await until(lambda: len(opened) == 2, view.picker.dialog_opened)
        form = opened[1]
        assert isinstance(form, ValuesDialog)
        assert list(form.form.inputs) == ["resourceId"]
        field = form.form.inputs["resourceId"]
        assert isinstance(field, QLineEdit)
        field.setText("7")
        form._on_ok()

        await until(lambda: bool(view.picker.attachments), view.picker.attachments_changed)
        [attached] = view.picker.attachments
        assert attached.uri == "demo://resource/dynamic/text/7"
        assert attached.text.startswith("Resource 7: This is a plaintext resource")
