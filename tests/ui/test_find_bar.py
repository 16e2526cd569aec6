"""Find in the open conversation: Enter / F3 move through the matching messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QListView, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from mooring.core.conversation import Message, Role
from mooring.ui.models.conversations import MessageListModel
from mooring.ui.widgets.find_bar import FindBar

TEXTS = [
    "Import the suppliers file",
    "I imported **12 suppliers**.",
    "Which column holds the VAT number?",
    "The `vat` column. Suppliers without one are flagged.",
    "Thanks",
]


def transcript(qtbot: QtBot) -> tuple[QWidget, QListView, FindBar]:
    window = QWidget()
    layout = QVBoxLayout(window)
    view = QListView(window)
    model = MessageListModel(view)
    view.setModel(model)
    t0 = datetime(2026, 12, 5, tzinfo=UTC)
    model.show(
        "c1",
        [
            Message(
                id=f"m{n}",
                conversation_id="c1",
                role=Role.USER if n % 2 == 0 else Role.ASSISTANT,
                content=text,
                created_at=t0 + timedelta(seconds=n),
            )
            for n, text in enumerate(TEXTS)
        ],
    )
    bar = FindBar(view, window)
    layout.addWidget(bar)
    layout.addWidget(view)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    return window, view, bar


def test_enter_and_f3_move_through_the_matches_and_wrap(qtbot: QtBot) -> None:
    _window, view, bar = transcript(qtbot)
    assert bar.isHidden()
    bar.open_bar()
    assert bar.isVisible()
    assert bar.field.hasFocus()

    QTest.keyClicks(bar.field, "SUPPLIERS")  # case does not matter; the painted text counts
    assert view.currentIndex().row() == 0
    assert bar.status.text() == "1 of 3"
    QTest.keyClick(bar.field, Qt.Key.Key_Return)
    assert view.currentIndex().row() == 1
    QTest.keyClick(bar.field, Qt.Key.Key_F3)
    assert view.currentIndex().row() == 3
    assert bar.status.text() == "3 of 3"
    QTest.keyClick(bar.field, Qt.Key.Key_Return)  # wraps to the first
    assert view.currentIndex().row() == 0
    QTest.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert view.currentIndex().row() == 3  # and back, wrapping the other way

    # Words found nowhere: said so, nothing chosen anew, Next and Previous disabled.
    bar.field.setText("invoice")
    assert bar.status.text() == "Not found in the loaded messages"
    assert not bar.next_button.isEnabled()
    assert view.currentIndex().row() == 3

    # Esc closes the bar; the transcript keeps the match and takes the focus.
    bar.field.setText("vat")  # the chosen message still matches: it stays chosen
    assert view.currentIndex().row() == 3
    bar.field.setText("column holds")
    assert view.currentIndex().row() == 2
    QTest.keyClick(bar.field, Qt.Key.Key_Escape)
    assert bar.isHidden()
    assert view.hasFocus()
    assert view.currentIndex().row() == 2


def test_the_bar_and_its_buttons_are_named_for_assistive_technology(qtbot: QtBot) -> None:
    _window, _view, bar = transcript(qtbot)
    bar.open_bar()
    for widget in (bar, bar.field, bar.next_button, bar.previous_button, bar.close_button):
        assert widget.accessibleName()
    QTest.mouseClick(bar.close_button, Qt.MouseButton.LeftButton)
    assert bar.isHidden()
