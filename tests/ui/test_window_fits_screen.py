"""The window stays on the screen: a task's long result scrolls inside the task pane (it never
grows the window past the screen), and a saved geometry larger than the screen comes back
clamped to it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QRect, QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from mooring.core.tasks.states import LocalState
from mooring.ui.main_window import MainWindow, WindowInfo
from tests.core.tasks.factories import make_record
from tests.ui.conftest import open_ui_host
from tests.ui.test_tasks_panel import view_of

pytestmark = pytest.mark.anyio

MANY_LINES = "\n".join(f"row {n}: supplier {n} imported" for n in range(5000))
UNBROKEN = "x" * 5000


def available() -> QRect:
    screen = QGuiApplication.primaryScreen()
    assert screen is not None
    return screen.availableGeometry()


def settle() -> None:
    """Carry out the posted layout requests up to the window: each widget's layout, once
    done, asks its parent's, so they go one level of the widget tree per round."""
    for _ in range(64):
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)


@pytest.mark.parametrize("text", [MANY_LINES, UNBROKEN], ids=["5000-lines", "one-long-line"])
async def test_a_long_result_scrolls_in_the_task_pane_and_the_window_stays_on_the_screen(
    tmp_path: Path, qtbot: QtBot, text: str
) -> None:
    screen = available()
    async with open_ui_host(tmp_path) as ui:
        window = MainWindow(ui.host, WindowInfo("", "", ""), layout_file=tmp_path / "window.ini")
        qtbot.addWidget(window)
        try:
            window.resize(min(1000, screen.width() - 100), min(660, screen.height() - 100))
            window.show()
            qtbot.waitExposed(window)
            await window.start()
            size = window.size()
            card = window.tasks.card
            long = view_of(
                make_record(LocalState.COMPLETED, id="long", status_message=text),
                result={"content": [{"type": "text", "text": text}]},
            )
            window.tasks.model.reset_views([long])
            window.show_task("long")
            assert card.view is not None
            assert card.view.id == "long"
            result = card.result_label
            assert result.text()[:40] == text[:40]
            assert result.textFormat() is Qt.TextFormat.PlainText
            assert card.message_label.textFormat() is Qt.TextFormat.PlainText
            settle()

            # The window never needs more than the screen, and keeps its size.
            hint = window.minimumSizeHint()
            assert hint.height() <= screen.height(), hint
            assert hint.width() <= screen.width(), hint
            assert window.minimumHeight() <= screen.height()
            assert window.minimumWidth() <= screen.width()
            assert window.size() == size
            assert screen.contains(window.frameGeometry()), window.frameGeometry()

            # The rest of the result is reached by scrolling, with the mouse or the keyboard.
            scroll = card.scroll_area
            assert scroll.accessibleName() == "Task details"
            bar = scroll.verticalScrollBar() if text is MANY_LINES else scroll.horizontalScrollBar()
            qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=2000)
            # The buttons below the pane and the status bar are still in the window.
            for below in (scroll, window.statusBar()):
                assert below.isVisible()
                assert below.mapTo(window, below.rect().bottomRight()).y() < window.height()
            assert scroll.focusPolicy() & Qt.FocusPolicy.TabFocus
            scroll.setFocus()
            before = bar.value()
            QTest.keyClick(scroll, Qt.Key.Key_PageDown if text is MANY_LINES else Qt.Key.Key_Right)
            assert bar.value() > before
            bar.setValue(bar.maximum())
            end = result.mapTo(card.body, result.rect().bottomRight())
            viewport = scroll.viewport()
            qtbot.waitUntil(
                lambda: viewport.rect().contains(card.body.mapTo(viewport, end)), timeout=2000
            )
        finally:
            window.close()
            await window.stop_jobs()


@pytest.mark.parametrize("shown", [False, True], ids=["saved-hidden", "saved-shown"])
def test_a_saved_geometry_larger_than_the_screen_is_restored_within_it(
    tmp_path: Path, qtbot: QtBot, shown: bool
) -> None:
    """As the reported window, 1000 by 2347 px on a 900 px screen: the next launch fits it to the
    screen (frame included), whatever Qt's own check leaves."""
    screen = available()
    layout = tmp_path / "window.ini"
    first = MainWindow(layout_file=layout)
    qtbot.addWidget(first)
    if shown:
        first.show()
        qtbot.waitExposed(first)
    first.setGeometry(
        QRect(screen.x() + 40, screen.y() + 30, screen.width() + 200, screen.height() + 1447)
    )
    assert first.height() > screen.height()
    first.saved_layout.save()
    first.close()
    assert QSettings(str(layout), QSettings.Format.IniFormat).value("geometry") is not None

    again = MainWindow(layout_file=layout)
    qtbot.addWidget(again)
    assert screen.contains(again.frameGeometry()), (again.frameGeometry(), screen)
    again.show()
    qtbot.waitExposed(again)
    assert screen.contains(again.frameGeometry()), (again.frameGeometry(), screen)
    assert again.height() > screen.height() // 2  # fitted, not thrown away
    again.close()
