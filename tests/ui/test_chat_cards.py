"""The conversation's own parts over a real host, the demo server as a subprocess and the
window's approval dialog, with the model scripted: a tool round shows as a card (server, tool,
arguments on demand, the approval decision and why, the task's state as it changes); the
task's result goes back to the model with "Continue with result"; the provider and model are
chosen per conversation; a very long transcript opens on its newest page and reads older ones
as the reader scrolls up, keeping their place."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtTest import QTest
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from mooring.bootstrap import build_host
from mooring.core.approval.rules import ApprovalAuditEntry
from mooring.core.conversation import ConversationRound, Message, Role, ToolRound
from mooring.core.ids import new_id
from mooring.services.chat import ChatService
from mooring.services.host import Host
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from mooring.ui.dialogs.approval import DialogAsker
from mooring.ui.main_window import MainWindow, WindowInfo
from mooring.ui.models.conversations import MessageListModel, MessageRole
from mooring.ui.models.tool_rounds import approval_words
from mooring.ui.presenters.conversations import PAGE_SIZE
from mooring.ui.views.conversations_view import ConversationsView
from mooring.ui.views.transcript import PADDING
from tests.helpers.scripted_model import CONFIG, ScriptedModel
from tests.services.conftest import SAMPLES, demo_definition
from tests.ui.conftest import next_dialog, until

pytestmark = pytest.mark.anyio

ACCESSIBLE = Qt.ItemDataRole.AccessibleTextRole
CLEAN = str(SAMPLES / "suppliers_clean.csv")
TOTAL = 1_000
"""Messages in the long conversation (``bench/`` times 10,000 and more)."""


@dataclass
class Chat:
    window: MainWindow
    view: ConversationsView
    chat: ChatService
    host: Host
    asker: DialogAsker


@contextlib.asynccontextmanager
async def open_window(tmp_path: Path, qtbot: QtBot, model: ScriptedModel) -> AsyncIterator[Chat]:
    """The main window over a host with the demo server, the window's approval dialog and
    the scripted model; everything stops before the test returns."""
    data = tmp_path / "data"
    data.mkdir()
    paths = Paths(data_dir=data, config_dir=data / "config", log_dir=data / "logs", overridden=True)
    db = Database.open(paths.database)
    asker = DialogAsker()
    settings = Settings({"mcp.request_timeout_ms": 10_000, "mcp.call_timeout_ms": 30_000})
    host = build_host(paths, settings, db, ask=asker, models=(model.resolve, model.factory))
    assert host.chat is not None
    await host.catalog.add_server(
        demo_definition(tmp_path / "demo-store.sqlite3", tmp_path / "requests.log")
    )
    host.start_monitoring()
    info = WindowInfo(data_dir=str(data), database="db", schema="head")
    window = MainWindow(host, info, layout_file=data / "window.ini")
    qtbot.addWidget(window)
    window.show()
    try:
        await window.start()
        window.show_view(window.conversations)
        yield Chat(window, window.conversations, host.chat, host, asker)
    finally:
        for dialog in list(asker.open_dialogs):
            dialog.reject()
        window.close()
        await window.stop_jobs()
        with anyio.fail_after(30):
            await host.stop()
        db.close()


def lines(view: ConversationsView) -> list[str]:
    model = view.messages
    return [str(model.index(r, 0).data(ACCESSIBLE)) for r in range(model.rowCount())]


def card_row(view: ConversationsView) -> int:
    model = view.messages
    return next(r for r in range(model.rowCount()) if model.card(r) is not None)


async def test_a_task_round_shows_as_a_card_and_its_result_continues_the_conversation(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.call("demo__import_suppliers", {"path": CLEAN, "note": "\u202eevil"})
    chat_model.reply("I started the import.")
    chat_model.reply("All suppliers are imported.")
    async with open_window(tmp_path, qtbot, chat_model) as ui:
        view = ui.view
        QTest.keyClicks(view.composer, "Import the clean suppliers")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        dialog = await next_dialog(ui.asker)
        assert dialog.windowTitle() == "Approve tool call"
        dialog.buttons["Allow once"].click()
        await until(lambda: "I started the import." in "".join(lines(view)), view.turn_ended)

        # The card: server, tool, the decision and why, the task; arguments hidden.
        row = card_row(view)
        card = lines(view)[row]
        assert card.startswith("Tool round: demo · import_suppliers\n")
        assert "Approval: Allowed once by you\n" in card
        assert "Why: " in card
        assert "Background task: " in card
        assert "Arguments: 2 fields, hidden (Space shows them)" in card
        assert "evil" not in card  # the note argument: hidden (the outcome may name the file)

        # Keyboard: Space shows the arguments as pretty, neutralised JSON; Left hides them.
        view.transcript.setFocus()
        view.transcript.setCurrentIndex(view.messages.index(row, 0))
        assert view.arguments_button.isEnabled()
        QTest.keyClick(view.transcript, Qt.Key.Key_Space)
        shown = lines(view)[row]
        assert f'"path": "{CLEAN}"' in shown
        assert '"note": "<U+202E>evil"' in shown
        assert "\u202e" not in shown
        assert view.arguments_button.accessibleName() == "Hide arguments"
        QTest.keyClick(view.transcript, Qt.Key.Key_Left)
        # Hidden again (the task's own status line may name the file: the arguments may not).
        hidden = lines(view)[row]
        assert f'"path": "{CLEAN}"' not in hidden
        assert "<U+202E>evil" not in hidden
        assert "Arguments: 2 fields, hidden (Space shows them)" in hidden
        view.transcript.grab()  # the delegate paints the card

        # The card follows the task to its end; then its result can go back to the model.
        await until(
            lambda: "Background task: completed" in lines(view)[row],
            view.messages.dataChanged,
            limit=90,
        )
        await until(lambda: view.continue_button.isEnabled(), view.continue_changed)
        assert any(line.startswith("Task result: ") for line in lines(view))
        assert view.continue_button.accessibleName() == "Continue with result"

        # "Open task" (Enter on the card) shows the task's card in the Tasks view, which
        # offers to continue its conversation with the result.
        view.transcript.setCurrentIndex(view.messages.index(row, 0))
        QTest.keyClick(view.transcript, Qt.Key.Key_Return)
        tasks = ui.window.tasks
        assert ui.window.tabs.currentWidget() is tasks
        await until(
            lambda: "Continue with result" in tasks.card.visible_buttons(), tasks.card.changed
        )
        assert tasks.card.view is not None
        assert tasks.card.view.record.tool_round_id == view.messages.card(row).round_id  # type: ignore[union-attr]
        assert "Open conversation" in tasks.card.visible_buttons()
        assert "Cancel" not in tasks.card.visible_buttons()

        QTest.mouseClick(tasks.card.buttons["Continue with result"], Qt.MouseButton.LeftButton)
        assert ui.window.tabs.currentWidget() is view
        await until(
            lambda: lines(view)[-1] == "Assistant: All suppliers are imported.", view.turn_ended
        )
        assert not view.continue_button.isEnabled()
        last_request = chat_model.requests[-1].messages[-1]
        assert last_request.role is Role.USER
        assert "completed" in last_request.content
        assert view.current_id is not None
        stored = await ui.chat.messages(view.current_id)
        assert stored[-1].content == "All suppliers are imported."  # stored, then shown


async def test_the_provider_and_model_are_chosen_per_conversation(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    chat_model.reply("Hi.")
    async with open_window(tmp_path, qtbot, chat_model) as ui:
        view = ui.view
        QTest.mouseClick(view.new_button, Qt.MouseButton.LeftButton)
        await until(lambda: view.provider_box.count() == 1, view.choices_loaded)
        assert view.provider_box.accessibleName() == "Provider"
        assert view.model_box.accessibleName() == "Model"
        assert view.provider_box.currentText() == CONFIG.name  # the default provider
        assert view.model_box.currentText() == ""  # the provider's default model
        conversation_id = view.current_id
        assert conversation_id is not None

        view.model_box.setEditText("another-model")
        line = view.model_box.lineEdit()
        assert line is not None
        line.editingFinished.emit()
        await until(lambda: "another-model" in ui.window.statusBar().currentMessage(), view.report)
        assert (await ui.chat.get(conversation_id)).model == "another-model"
        QTest.keyClicks(view.composer, "Hello")
        QTest.keyClick(view.composer, Qt.Key.Key_Return)
        await until(lambda: lines(view)[-1:] == ["Assistant: Hi."], view.turn_ended)
        assert chat_model.requests[-1].model == "another-model"

        view.model_box.setEditText("")
        line.editingFinished.emit()
        await until(lambda: "default model" in ui.window.statusBar().currentMessage(), view.report)
        assert (await ui.chat.get(conversation_id)).model is None


async def test_a_very_long_conversation_opens_on_its_newest_page_and_reads_older_ones(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    async with open_window(tmp_path, qtbot, chat_model) as ui:
        view = ui.view
        ui.window.resize(800, 500)
        conversation = await ui.chat.create(title="Long")
        start = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
        book = ui.host.chat._book  # type: ignore[union-attr]  # seeding storage directly
        await book.append_messages(
            [
                Message(
                    id=new_id(),
                    conversation_id=conversation.id,
                    role=Role.USER if n % 2 == 0 else Role.ASSISTANT,
                    content=f"message {n}",
                    created_at=start + timedelta(seconds=n),
                )
                for n in range(TOTAL)
            ]
        )
        await view.load()
        await view.open_conversation(conversation.id)
        model = view.messages
        assert model.rowCount() == PAGE_SIZE
        assert lines(view)[-1] == f"Assistant: message {TOTAL - 1}"
        assert lines(view)[0] == f"You: message {TOTAL - PAGE_SIZE}"
        bar = view.transcript.verticalScrollBar()
        await until(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), bar.rangeChanged)

        # Scrolling to the top reads the page before, and the reader stays on their message.
        added: list[int] = []
        view.older_loaded.connect(added.append)
        bar.setValue(bar.minimum())
        reading = str(view.transcript.indexAt(QPoint(PADDING, PADDING)).data(ACCESSIBLE))
        assert reading == f"You: message {TOTAL - PAGE_SIZE}"
        await until(lambda: bool(added), view.older_loaded)
        assert model.rowCount() == 2 * PAGE_SIZE
        assert lines(view)[0] == f"You: message {TOTAL - 2 * PAGE_SIZE}"
        now_top = view.transcript.indexAt(QPoint(PADDING, PADDING))
        assert str(now_top.data(ACCESSIBLE)) == str(model.index(PAGE_SIZE, 0).data(ACCESSIBLE)), (
            "the message that was at the top is still there"
        )
        assert reading  # something was shown before the page arrived


def test_the_transcript_model_with_cards_and_pages_passes_the_tester(
    qtmodeltester: ModelTester,
) -> None:
    model = MessageListModel()
    qtmodeltester.check(model, force_py=True)  # type: ignore[no-untyped-call]
    at = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

    def message(n: int) -> Message:
        return Message(
            id=f"m{n}", conversation_id="c1", role=Role.USER, content=f"m{n}", created_at=at
        )

    model.show("c1", [message(n) for n in range(5, 10)], has_older=True)
    asked: list[tuple[str, str]] = []
    model.older_wanted.connect(lambda c, before: asked.append((c, before)))
    assert not model.canFetchMore(QModelIndex())  # not until the reader reaches the top
    model.reader_at_top = True
    assert model.canFetchMore(QModelIndex())
    model.fetchMore(QModelIndex())
    assert asked == [("c1", "m5")]
    assert not model.canFetchMore(QModelIndex())  # one page at a time
    model.prepend("c1", [message(n) for n in range(0, 5)], has_older=False)
    assert [model.index(r, 0).data(MessageRole.ID) for r in range(model.rowCount())] == [
        f"m{n}" for n in range(10)
    ]
    assert not model.canFetchMore(QModelIndex())


def test_the_approval_on_a_card_says_who_decided_why_and_what_was_remembered() -> None:
    at = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    tool_round = ToolRound(
        id="r1",
        server_id="s1",
        tool="delete_supplier",
        arguments={"id": "SUP-1"},
        argument_digest="d",
        created_at=at,
        approval="approved",
    )

    def words(outcome: str, actor: str, **more: str | None) -> tuple[str, str]:
        entry = ApprovalAuditEntry(
            id="a1",
            at=at,
            server_id="s1",
            tool="delete_supplier",
            argument_digest="d",
            outcome=outcome,
            actor=actor,
            **more,
        )
        return approval_words(ConversationRound(round=tool_round, record=None, approval=entry))

    assert words("approved", "user", reason="the tool may delete data") == (
        "Allowed once by you",
        "the tool may delete data",
    )
    assert words("approved", "user", remembered="conversation")[0] == (
        "Allowed by you — remembered for this conversation"
    )
    assert words("denied", "user", remembered="always")[0] == (
        "Denied by you — remembered: always for this tool"
    )
    assert words("auto_allowed", "policy", rule_id="rule1")[0] == "Allowed by your rule"
    assert words("auto_allowed", "policy")[0] == "Allowed by the policy"
    assert words("auto_denied", "policy", reason="too big\u202e")[1] == "too big<U+202E>"
    assert words("aborted", "program")[0] == "The question was withdrawn — not sent (by Mooring)"
    # No audit entry (an older database): the round's own outcome still says something.
    bare = ConversationRound(round=tool_round, record=None)
    assert approval_words(bare) == ("Allowed once by you", "")


async def test_a_deletion_waiting_for_undo_is_done_when_the_window_closes(
    tmp_path: Path, qtbot: QtBot, chat_model: ScriptedModel
) -> None:
    async with open_window(tmp_path, qtbot, chat_model) as ui:
        kept = await ui.chat.create(title="Kept")
        gone = await ui.chat.create(title="Gone")
        await ui.view.load()
        await ui.view.delete(gone.id)
        assert len(await ui.chat.list_conversations()) == 2  # still undoable
        await ui.view.stop()
        assert [c.id for c in await ui.chat.list_conversations()] == [kept.id]


def test_a_tool_result_waiting_for_its_card_shows_no_more_than_the_card_will() -> None:
    # A tool's result arrives before its round's card is read: shown whole, a 16,000-character
    # result was laid out and painted on the GUI thread only to be replaced a moment later.
    # A task's final result (a follow-up, never a card) is still shown whole.
    at = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    rows = "\n".join(f"{n:06d},Supplier {n},Lyon" for n in range(1000))
    model = MessageListModel()
    waiting = Message(
        id="m1", conversation_id="c1", role=Role.TOOL, content=rows, created_at=at,
        tool_call_id="call-1", tool_round_id="r1",
    )  # fmt: skip
    followup = Message(
        id="m2", conversation_id="c1", role=Role.TOOL, content=rows, created_at=at,
        tool_round_id="r1", followup=True,
    )  # fmt: skip
    model.show("c1", [waiting, followup], has_older=False)
    shown = [str(model.index(r, 0).data(MessageRole.BODY)) for r in range(2)]
    assert len(rows) > 20_000
    assert shown[0].startswith(rows[:500])
    assert len(shown[0]) == 600
    assert shown[1] == rows
