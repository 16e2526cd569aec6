"""The approval dialog: everything needed to decide is on it, and each button means one thing."""

from __future__ import annotations

import asyncio

import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome, ApprovalRequest
from mooring.core.approval.rules import Scope
from mooring.ui.dialogs.approval import ApprovalDialog, DialogAsker
from tests.ui.conftest import next_dialog


def request(**changes: object) -> ApprovalRequest:
    values: dict[str, object] = {
        "id": "q1",
        "server_id": "s1",
        "server_alias": "demo",
        "tool": "delete_supplier",
        "arguments": {"supplier_id": "S-0042", "notes": "x" * 3000, "nested": {"a": [1, 2]}},
        "reason": "the server is not trusted",
        "destructive": True,
        "preview": ["suppliers.csv: 12 KB, 240 rows"],
    }
    values.update(changes)
    return ApprovalRequest(**values)  # type: ignore[arg-type]


def texts(dialog: ApprovalDialog) -> list[str]:
    return [label.text() for label in dialog.findChildren(QLabel)]


def answer_of(qtbot: QtBot, dialog: ApprovalDialog, button: str) -> ApprovalAnswer:
    with qtbot.waitSignal(dialog.decided, timeout=5000) as caught:
        dialog.buttons[button].click()
    answer = caught.args[0] if caught.args else None
    assert isinstance(answer, ApprovalAnswer)
    return answer


def test_the_dialog_shows_server_tool_reason_preview_and_every_argument(qtbot: QtBot) -> None:
    dialog = ApprovalDialog(request())
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.windowTitle() == "Approve tool call"
    shown = texts(dialog)
    assert "demo wants to run delete_supplier" in shown
    assert "the server is not trusted" in shown
    assert "suppliers.csv: 12 KB, 240 rows" in shown
    assert any("delete or overwrite" in t for t in shown)
    arguments = dialog.arguments_view.toPlainText()
    assert '"supplier_id": "S-0042"' in arguments
    assert "x" * 3000 in arguments  # in full: never cut, the view scrolls
    assert '"a": [\n' in arguments
    assert dialog.arguments_view.isReadOnly()


def test_hostile_names_and_arguments_are_shown_as_inert_text(qtbot: QtBot) -> None:
    dialog = ApprovalDialog(
        request(
            server_alias="<b>evil</b>",
            tool="run\u202eexe.txt",
            arguments={"path": "report\u202egnp.exe", "html": "<img src=x>"},
        )
    )
    qtbot.addWidget(dialog)
    assert "run<U+202E>exe.txt" in dialog.tool_label.text()
    assert dialog.server_label.text() == "<b>evil</b>"
    assert dialog.server_label.textFormat() is Qt.TextFormat.PlainText
    arguments = dialog.arguments_view.toPlainText()
    assert "\u202e" not in arguments
    assert "report<U+202E>gnp.exe" in arguments
    assert "<img src=x>" in arguments


@pytest.mark.parametrize(
    ("button", "expected"),
    [
        ("Allow once", ApprovalAnswer(ApprovalOutcome.APPROVED)),
        ("Always allow this tool", ApprovalAnswer(ApprovalOutcome.APPROVED, Scope.ALWAYS)),
        ("Deny", ApprovalAnswer(ApprovalOutcome.DENIED)),
        ("Always deny this tool", ApprovalAnswer(ApprovalOutcome.DENIED, Scope.ALWAYS)),
    ],
)
def test_each_button_gives_its_answer(qtbot: QtBot, button: str, expected: ApprovalAnswer) -> None:
    dialog = ApprovalDialog(request())
    qtbot.addWidget(dialog)
    dialog.show()
    assert answer_of(qtbot, dialog, button) == expected
    assert not dialog.isVisible()


def test_a_conversation_may_be_remembered_only_when_there_is_one(qtbot: QtBot) -> None:
    without = ApprovalDialog(request())
    qtbot.addWidget(without)
    assert "Allow in this conversation" not in without.buttons
    within = ApprovalDialog(request(conversation_id="c1"))
    qtbot.addWidget(within)
    within.show()
    assert answer_of(qtbot, within, "Allow in this conversation") == ApprovalAnswer(
        ApprovalOutcome.APPROVED, Scope.CONVERSATION
    )


def test_escape_dismisses_the_question_and_enter_allows_nothing(qtbot: QtBot) -> None:
    dialog = ApprovalDialog(request())
    qtbot.addWidget(dialog)
    dialog.show()
    answers: list[object] = []
    dialog.decided.connect(answers.append)
    QTest.keyClick(dialog, Qt.Key.Key_Return)  # focus is on Deny: Enter never approves
    assert answers in ([], [ApprovalAnswer(ApprovalOutcome.DENIED)])
    if not answers:
        QTest.keyClick(dialog, Qt.Key.Key_Escape)
        assert answers == [ApprovalAnswer(ApprovalOutcome.CANCELLED)]


@pytest.mark.anyio
async def test_the_asker_opens_the_dialog_without_blocking_and_returns_the_press() -> None:
    asker = DialogAsker()
    pending = asyncio.ensure_future(asker(request()))
    dialog = await next_dialog(asker)
    assert dialog.isVisible()
    assert dialog.isModal()
    assert not pending.done()  # the loop runs on while the question is open
    dialog.buttons["Allow once"].click()
    async with asyncio.timeout(10):
        assert await pending == ApprovalAnswer(ApprovalOutcome.APPROVED)
    assert asker.open_dialogs == []


@pytest.mark.anyio
async def test_a_withdrawn_question_closes_its_dialog() -> None:
    asker = DialogAsker()
    pending = asyncio.ensure_future(asker(request()))
    dialog = await next_dialog(asker)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert not shiboken6.isValid(dialog) or not dialog.isVisible()
    assert asker.open_dialogs == []
