"""The Conversations view over a real host and a real SQLite file, with the model scripted:
a message sent from the composer streams its reply into the transcript and is stored; Stop
keeps the partial text; conversations are created, renamed, deleted and searched; without a
provider the view says so; hostile replies are shown inert."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QInputDialog, QMenu, QMessageBox, QWidget
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from mooring.bootstrap import build_host
from mooring.core.chat import ProviderFailure
from mooring.core.conversation import Conversation, Message, MessageStatus, Role
from mooring.core.tasks.states import LocalState
from mooring.services.chat import ChatService
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from mooring.ui.main_window import MainWindow, WindowInfo
from mooring.ui.models.conversations import (
    ConversationListModel,
    ConversationRow,
    MessageListModel,
)
from mooring.ui.views.conversations_view import ConversationsView
from tests.core.tasks.factories import make_record
from tests.helpers.scripted_model import ScriptedModel
from tests.ui.conftest import until

pytestmark = pytest.mark.anyio

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
ACCESSIBLE = Qt.ItemDataRole.AccessibleTextRole


@contextlib.asynccontextmanager
async def open_chat(
    tmp_path: Path,
    qtbot: QtBot,
    model: ScriptedModel,
    before: Callable[[ChatService], Awaitable[object]] | None = None,
) -> AsyncIterator[tuple[MainWindow, ConversationsView, ChatService]]:
    """The main window over a host whose chat talks to the scripted model (``before`` runs
    on the chat before the window starts)."""
    data = tmp_path / "data"
    data.mkdir()
    paths = Paths(data_dir=data, config_dir=data / "config", log_dir=data / "logs", overridden=True)
    db = Database.open(paths.database)
    host = build_host(paths, Settings({}), db, models=(model.resolve, model.factory))
    assert host.chat is not None
    info = WindowInfo(data_dir=str(data), database="db", schema="head")
    window = MainWindow(host, info, layout_file=data / "window.ini")
    qtbot.addWidget(window)
    window.show()
    try:
        if before is not None:
            await before(host.chat)
        await window.start()
        window.show_view(window.conversations)
        yield window, window.conversations, host.chat
    finally:
        window.close()
        await window.stop_jobs()
        await host.stop()
        db.close()


def transcript(view: ConversationsView) -> list[str]:
    model = view.messages
    return [str(model.index(r, 0).data(ACCESSIBLE)) for r in range(model.rowCount())]


def titles(view: ConversationsView) -> list[str]:
    model = view.conversations
    return [str(model.index(r, 0).data()).split("\n")[0] for r in range(model.rowCount())]


async def wait_turn(view: ConversationsView, count: int = 1) -> None:
    ended: list[str] = []
    view.turn_ended.connect(ended.append)
    await until(lambda: len(ended) >= count, view.turn_ended)


def message(id_: str, role: Role, text: str, **more: object) -> Message:
    return Message(id=id_, conversation_id="c1", role=role, content=text, created_at=T0, **more)  # type: ignore[arg-type]


LATER = T0 + timedelta(minutes=5)


def test_the_conversation_model_passes_the_tester(qtmodeltester: ModelTester) -> None:
    conversations = ConversationListModel(now=lambda: LATER)
    first = Conversation(id="c1", title="Suppliers", created_at=T0, updated_at=T0)
    second = Conversation(id="c2", title="Orders\u202e", created_at=T0, updated_at=T0)
    qtmodeltester.check(conversations, force_py=True)  # type: ignore[no-untyped-call]
    conversations.set_rows([ConversationRow(first), ConversationRow(second, "a <b>match</b>")])
    assert conversations.index(1, 0).data(ACCESSIBLE) == (
        "Orders<U+202E> (default model · 5 min ago): a <b>match</b>"
    )
    assert conversations.row_of("c2") == 1
    conversations.set_rows([ConversationRow(second)])
    assert conversations.rowCount() == 1


def test_a_search_snippet_across_lines_reads_as_one_line() -> None:
    conversations = ConversationListModel(now=lambda: LATER)
    found = Conversation(id="c1", title="Suppliers", created_at=T0, updated_at=T0)
    conversations.set_rows([ConversationRow(found, "…the [first] line \r\nand\n\tthe next\x1b…")])
    row = conversations.index(0, 0)
    # The line break is a space, not a literal "\x0a"; other controls stay visible and inert.
    assert row.data(ACCESSIBLE) == (
        "Suppliers (default model · 5 min ago): …the [first] line and the next\\x1b…"
    )
    assert row.data(Qt.ItemDataRole.DisplayRole) == (
        "Suppliers\ndefault model · 5 min ago\n…the [first] line and the next\\x1b…"
    )


def test_each_conversation_says_its_model_its_last_activity_and_its_running_tasks() -> None:
    conversations = ConversationListModel(now=lambda: T0 + timedelta(hours=3))
    chat = Conversation(id="c1", title="Import", created_at=T0, updated_at=T0, model="qwen\u202e3")
    other = Conversation(id="c2", title="Other", created_at=T0, updated_at=T0 + timedelta(hours=3))
    conversations.set_rows([ConversationRow(chat), ConversationRow(other)])
    conversations.set_running([("c1", "r1"), ("c1", "r2")])
    about = conversations.index(0, 0).data(Qt.ItemDataRole.DisplayRole).split("\n")[1]
    assert about == "qwen<U+202E>3 · 3 h ago · 2 tasks running"  # the model's name inert
    assert conversations.index(1, 0).data(ACCESSIBLE) == "Other (default model · just now)"
    changed: list[int] = []
    conversations.dataChanged.connect(lambda top, _b, _r: changed.append(top.row()))
    ended = make_record(LocalState.COMPLETED, id="r1", conversation_id="c1")
    conversations.task_changed(ended)
    assert conversations.index(0, 0).data(ACCESSIBLE).endswith("· 1 task running)")
    assert changed == [0]
    conversations.task_changed(ended)  # told again: nothing changes
    assert changed == [0]
    conversations.task_changed(make_record(LocalState.COMPLETED, id="r2", conversation_id="c1"))
    assert "running" not in conversations.index(0, 0).data(ACCESSIBLE)


def test_the_message_model_passes_the_tester_and_streams(qtmodeltester: ModelTester) -> None:
    messages = MessageListModel()
    qtmodeltester.check(messages, force_py=True)  # type: ignore[no-untyped-call]
    messages.show("c1", [message("m1", Role.USER, "hi"), message("m2", Role.TOOL, "42 rows")])
    messages.stream("m3", "Hel")
    messages.stream("m3", "lo")
    assert messages.index(2, 0).data(ACCESSIBLE) == "Assistant: Hello\n(writing…)"
    messages.append(message("m3", Role.ASSISTANT, "Hello"))
    messages.stream("m3", " late")  # after the whole reply is stored, a piece changes nothing
    assert messages.rowCount() == 3
    assert transcript_of(messages) == ["You: hi", "Tool result: 42 rows", "Assistant: Hello"]
    messages.show(None, [])
    assert messages.rowCount() == 0


def transcript_of(model: MessageListModel) -> list[str]:
    return [str(model.index(r, 0).data(ACCESSIBLE)) for r in range(model.rowCount())]


async def test_a_message_sent_from_the_composer_streams_its_reply_and_is_stored(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("Hello **there**, how can I help?").reply("Second answer.")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, chat):
        names = {view.composer.accessibleName(), view.send_button.accessibleName()}
        assert names == {"Message", "Send"}
        assert view.stop_button.accessibleName() == "Stop"
        streamed: list[int] = []
        view.messages.dataChanged.connect(lambda top, _b, _r: streamed.append(top.row()))
        QTest.keyClicks(view.composer, "What can you do?")
        QTest.mouseClick(view.send_button, Qt.MouseButton.LeftButton)
        await wait_turn(view)
        assert transcript(view) == [
            "You: What can you do?",
            "Assistant: Hello there, how can I help?",
        ]
        assert streamed, "the reply was shown as it streamed"
        assert view.composer.toPlainText() == ""
        conversation_id = view.current_id
        assert conversation_id is not None
        stored = await chat.messages(conversation_id)
        assert [(m.role, m.content) for m in stored] == [
            (Role.USER, "What can you do?"),
            (Role.ASSISTANT, "Hello **there**, how can I help?"),
        ]
        await until(lambda: titles(view) == ["What can you do?"], view.loaded)

        # Shift+Enter is a new line; Enter sends.
        QTest.keyClicks(view.composer, "line one")
        QTest.keyClick(view.composer, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        QTest.keyClicks(view.composer, "line two")
        assert view.composer.toPlainText() == "line one\nline two"
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        assert transcript(view)[2:] == ["You: line one\nline two", "Assistant: Second answer."]
        assert len(await chat.messages(conversation_id)) == 4


async def test_stop_keeps_the_partial_reply_marked_interrupted(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.hang("partial answer")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, chat):
        QTest.keyClicks(view.composer, "Tell me a long story")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await until(
            lambda: any("partial answer" in line for line in transcript(view)),
            view.messages.dataChanged,
            view.messages.rowsInserted,
        )
        assert view.stop_button.isEnabled()
        QTest.keyClick(view.composer, Qt.Key.Key_Escape)
        await wait_turn(view)
        assert transcript(view)[-1] == (
            "Assistant: partial answer\n(interrupted — you stopped this reply)"
        )
        assert view.current_id is not None
        reply = (await chat.messages(view.current_id))[-1]
        assert (reply.content, reply.status) == ("partial answer", MessageStatus.INTERRUPTED)
        assert not view.stop_button.isEnabled()


async def test_conversations_are_created_renamed_searched_and_deleted(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("Use the suppliers tool.").reply("Forty-two.")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, chat):
        QTest.keyClicks(view.composer, "How do I import suppliers?")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        first = view.current_id
        QTest.mouseClick(view.new_button, Qt.MouseButton.LeftButton)
        await until(lambda: view.current_id != first and len(titles(view)) == 2, view.loaded)
        assert transcript(view) == []
        QTest.keyClicks(view.composer, "What is the answer?")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        await until(
            lambda: titles(view) == ["What is the answer?", "How do I import suppliers?"],
            view.loaded,
        )

        # Rename through the dialog.
        dialogs: list[object] = []
        view.dialog_opened.connect(dialogs.append)
        QTest.mouseClick(view.rename_button, Qt.MouseButton.LeftButton)
        await until(lambda: bool(dialogs), view.dialog_opened)
        box = dialogs.pop()
        assert isinstance(box, QInputDialog)
        assert box.windowTitle() == "Rename conversation"
        box.setTextValue("  The answer  ")
        box.accept()
        await until(lambda: titles(view)[0] == "The answer", view.loaded)
        assert (await chat.get(str(view.current_id))).title == "The answer"

        # Search by message text, then clear the search.
        view.search_field.setText("suppliers")
        await until(lambda: len(titles(view)) == 1, view.loaded)
        assert titles(view)[0].startswith("How do I import suppliers?")
        view.search_field.clear()
        await until(lambda: len(titles(view)) == 2, view.loaded)

        # Delete asks first; Cancel keeps it, Delete removes it.
        shown = view.current_id
        QTest.mouseClick(view.delete_button, Qt.MouseButton.LeftButton)
        await until(lambda: bool(dialogs), view.dialog_opened)
        question = dialogs.pop()
        assert isinstance(question, QMessageBox)
        assert question.windowTitle() == "Delete conversation"
        question.reject()
        QTest.mouseClick(view.delete_button, Qt.MouseButton.LeftButton)
        await until(lambda: bool(dialogs), view.dialog_opened)
        question = dialogs.pop()
        assert isinstance(question, QMessageBox)
        assert len(titles(view)) == 2
        delete = next(b for b in question.buttons() if b.text() == "Delete")
        delete.click()
        await until(lambda: titles(view) == ["How do I import suppliers?"], view.loaded)
        assert view.current_id is None
        assert shown != first

        # Undo brings it back whole; nothing was deleted meanwhile.
        assert view.undo_button.isVisibleTo(view)
        assert view.undo_button.accessibleName() == "Undo"
        assert len(await chat.list_conversations()) == 2
        QTest.mouseClick(view.undo_button, Qt.MouseButton.LeftButton)
        await until(lambda: view.current_id == shown, view.transcript_loaded)
        assert titles(view) == ["The answer", "How do I import suppliers?"]
        assert transcript(view) == ["You: What is the answer?", "Assistant: Forty-two."]
        assert not view.undo_button.isVisibleTo(view)

        # Deleted again and not undone: gone for real when the undo time runs out.
        view.presenter.undo_s = 0.05
        await view.delete(str(shown))
        gone: list[str] = []
        view.deletion_done.connect(gone.append)
        await until(lambda: gone == [shown], view.deletion_done)
        assert [c.id for c in await chat.list_conversations()] == [first]
        assert not view.undo_button.isVisibleTo(view)


async def window_is_active(window: MainWindow) -> None:
    """The window is the active one (its shortcuts answer only then)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    window.activateWindow()
    await until(lambda: QApplication.activeWindow() is window, app.focusChanged)


async def focus_is_on(widget: QWidget) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    await until(lambda: QApplication.focusWidget() is widget, app.focusChanged)


async def test_ctrl_n_starts_a_new_conversation_from_any_view_with_the_composer_focused(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    async with open_chat(tmp_path, qtbot, chat_model) as (window, view, _chat):
        new = window.new_conversation_action
        assert new.shortcut() == QKeySequence(QKeySequence.StandardKey.New)
        file_menu = next(m for m in window.menuBar().findChildren(QMenu) if m.title() == "&File")
        keys = {a.text(): a.shortcut().toString() for a in file_menu.actions()}
        assert keys["&New conversation"] == "Ctrl+N"
        assert "Ctrl+N" in view.new_button.toolTip()
        assert titles(view) == []

        window.show_view(window.servers)  # from another view
        await window_is_active(window)
        QTest.keyClick(window.servers, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: len(titles(view)) == 1 and view.current_id is not None, view.loaded)
        assert window.tabs.currentWidget() is view
        await focus_is_on(view.composer)
        first = view.current_id

        # From the composer itself, a second one.
        QTest.keyClick(view.composer, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: len(titles(view)) == 2 and view.current_id != first, view.loaded)
        await focus_is_on(view.composer)
        assert view.composer.toPlainText() == ""  # Ctrl+N typed nothing


async def test_enter_presses_the_focused_button_once_and_still_sends_from_the_composer(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("Hi.")
    async with open_chat(tmp_path, qtbot, chat_model) as (window, view, chat):
        await window_is_active(window)
        presses: list[int] = []
        view.new_button.clicked.connect(lambda *_: presses.append(1))
        view.new_button.setFocus()
        await focus_is_on(view.new_button)
        QTest.keyClick(view.new_button, Qt.Key.Key_Return)
        await until(lambda: len(titles(view)) == 1, view.loaded)
        assert len(presses) == 1
        await focus_is_on(view.composer)  # where the new conversation puts it

        # The keypad's Enter too.
        view.new_button.setFocus()
        await focus_is_on(view.new_button)
        QTest.keyClick(view.new_button, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)
        await until(lambda: len(titles(view)) == 2, view.loaded)
        assert len(presses) == 2

        # In the composer Enter sends (once) and presses no button.
        QTest.keyClicks(view.composer, "Hello")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        assert transcript(view) == ["You: Hello", "Assistant: Hi."]
        assert len(presses) == 2
        assert len(await chat.list_conversations()) == 2

        # In a dialog, Enter on its focused button presses it once (Qt's own default button).
        dialogs: list[object] = []
        view.dialog_opened.connect(dialogs.append)
        QTest.mouseClick(view.delete_button, Qt.MouseButton.LeftButton)
        await until(lambda: bool(dialogs), view.dialog_opened)
        question = dialogs.pop()
        assert isinstance(question, QMessageBox)
        delete = next(b for b in question.buttons() if b.text() == "Delete")
        deletes: list[int] = []
        delete.clicked.connect(lambda *_: deletes.append(1))
        delete.setFocus()
        await focus_is_on(delete)
        QTest.keyClick(delete, Qt.Key.Key_Return)
        await until(lambda: len(titles(view)) == 1, view.loaded)
        assert deletes == [1]


async def test_without_a_provider_the_chat_says_so_and_stores_nothing(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.configured = False
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, chat):
        QTest.keyClicks(view.composer, "Hello?")
        QTest.mouseClick(view.send_button, Qt.MouseButton.LeftButton)
        await until(lambda: bool(view.notice.text()), view.notice_changed)
        assert view.notice.isVisibleTo(view)
        assert "No model provider is configured." in view.notice.text()
        assert view.composer.toPlainText() == "Hello?"  # nothing is lost
        assert await chat.list_conversations() == []
        assert chat_model.requests == []


async def test_a_hostile_reply_is_shown_inert(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    hostile = '<b>bold</b> <img src="file:///etc/passwd"> \x1b[31mred \u202eevil'
    chat_model.reply(hostile)
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, _chat):
        QTest.keyClicks(view.composer, "Say something nasty")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        shown = transcript(view)[-1]
        assert '<b>bold</b> <img src="file:///etc/passwd">' in shown  # text, not markup
        assert "\x1b" not in shown
        assert "\u202e" not in shown
        assert "\\x1b[31mred" in shown
        assert "<U+202E>evil" in shown
        view.transcript.grab()  # the delegate paints it without loading anything


async def test_a_tool_round_appears_in_the_transcript_as_its_result(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.call("import_suppliers", {"file": "a.csv"}).reply("That tool is not here.")
    async with open_chat(tmp_path, qtbot, chat_model) as (_window, view, chat):
        QTest.keyClicks(view.composer, "Import the suppliers")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        lines = transcript(view)
        assert lines[0] == "You: Import the suppliers"
        assert lines[1] == "Assistant: (asked to run: import_suppliers)"
        assert lines[2].startswith("Tool result: There is no tool called 'import_suppliers'")
        assert lines[3] == "Assistant: That tool is not here."
        assert view.current_id is not None
        assert len(await chat.messages(view.current_id)) == len(lines)


async def test_the_transcript_keeps_the_reading_position_while_a_reply_streams(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    async with open_chat(tmp_path, qtbot, chat_model) as (window, view, _chat):
        window.resize(700, 420)
        history = [message(f"m{i}", Role.USER, f"message {i}\n\nsecond line") for i in range(40)]
        view.messages.show("c1", history)
        bar = view.transcript.verticalScrollBar()
        await until(lambda: bar.maximum() > 0, bar.rangeChanged)
        view.transcript.scrollToBottom()
        await until(lambda: bar.value() == bar.maximum())

        # At the bottom, the streaming reply is followed.
        grown = bar.maximum()
        view.messages.stream("r1", "a reply\n\n" * 5)
        await until(lambda: bar.maximum() > grown, bar.rangeChanged)
        assert bar.value() == bar.maximum()

        # Scrolled up to read, the reader stays where they are while more arrives.
        bar.setValue(0)
        grown = bar.maximum()
        view.messages.stream("r1", "more text\n\n" * 5)
        await until(lambda: bar.maximum() > grown, bar.rangeChanged)
        assert bar.value() == 0


async def test_a_failed_reply_says_why_and_the_latest_conversation_opens_at_launch(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("An older answer.")
    chat_model.fail(ProviderFailure.SERVER_ERROR, "upstream exploded", partial="Half of it")

    async def earlier(chat: ChatService) -> None:
        older = await chat.create()
        await chat.send(older.id, "An older question")

    async with open_chat(tmp_path, qtbot, chat_model, earlier) as (_window, view, _chat):
        await until(lambda: len(transcript(view)) == 2, view.transcript_loaded)
        assert transcript(view) == ["You: An older question", "Assistant: An older answer."]
        QTest.keyClicks(view.composer, "And now?")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        last = transcript(view)[-1]
        assert last.startswith("Assistant: Half of it\n(error: ")
        assert view.messages.rowCount() == 4


async def test_a_refused_key_says_what_to_do_in_the_window_and_offers_it(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.fail(
        ProviderFailure.AUTH,
        "The model endpoint 'scripted' refused the API key (HTTP 401). No API key is "
        "configured for it.",
    )
    async with open_chat(tmp_path, qtbot, chat_model) as (window, view, _chat):
        QTest.keyClicks(view.composer, "Hello?")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await wait_turn(view)
        await until(lambda: bool(view.notice.text()), view.notice_changed)
        said = view.notice.text()
        assert "refused the API key" in said
        assert "Give scripted a key: in Settings, under Model providers" in said
        assert "mooring " not in said
        assert view.notice_button.isVisibleTo(view)
        assert view.notice_button.text() == "Edit provider…"
        assert view.notice_button.accessibleName() == "Edit provider"
        assert view.notice_button.focusPolicy() & Qt.FocusPolicy.TabFocus
        view.notice_button.click()
        assert window.tabs.currentWidget() is window.settings
