"""A bug in the window is shown to the user with the log's path, never just printed."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from mooring.core.errors import KnownError
from mooring.ui.crash import TITLE, CrashReporter


@pytest.fixture
def reporter(tmp_path: Path) -> Iterator[CrashReporter]:
    crash = CrashReporter(tmp_path / "logs" / "mooring.log", lambda: None)
    crash.install()
    try:
        yield crash
    finally:
        crash.uninstall()
        if crash.shown is not None:
            crash.shown.done(0)


def _shown(reporter: CrashReporter) -> QMessageBox:
    box = reporter.shown
    assert box is not None
    return box


@pytest.mark.qt_no_exception_capture
def test_a_slot_that_raises_opens_the_problem_dialog_with_the_log_s_path(
    qtbot: QtBot, reporter: CrashReporter, tmp_path: Path
) -> None:
    def broken() -> None:
        raise RuntimeError("the card could not be drawn")

    QTimer.singleShot(0, broken)
    qtbot.waitUntil(lambda: reporter.shown is not None and reporter.shown.isVisible())
    box = _shown(reporter)
    assert box.windowTitle() == TITLE
    assert box.accessibleName() == TITLE
    assert str(tmp_path / "logs" / "mooring.log") in box.informativeText()
    assert "RuntimeError: the card could not be drawn" in box.detailedText()
    assert sys.excepthook == reporter.excepthook


@pytest.mark.qt_no_exception_capture
def test_more_problems_while_one_is_shown_are_counted_on_it_not_stacked(
    qtbot: QtBot, reporter: CrashReporter
) -> None:
    for n in range(3):
        try:
            raise ValueError(f"problem {n}")
        except ValueError as exc:
            reporter.excepthook(type(exc), exc, exc.__traceback__)
    box = _shown(reporter)
    assert "3 problems so far" in box.informativeText()
    assert "problem 0" in box.detailedText()
    box.done(0)
    qtbot.waitUntil(lambda: reporter.shown is None)
    try:
        raise ValueError("later")
    except ValueError as exc:
        reporter.excepthook(type(exc), exc, exc.__traceback__)
    later = _shown(reporter)
    assert later is not box
    assert "so far" not in later.informativeText()


def test_a_coroutine_s_bug_is_shown_but_an_environment_problem_is_only_logged(
    qtbot: QtBot, reporter: CrashReporter, caplog: pytest.LogCaptureFixture
) -> None:
    loop = asyncio.new_event_loop()
    try:
        reporter.watch(loop)
        handler = loop.get_exception_handler()
        assert handler is not None
        unreachable = KnownError("The server cannot be reached.")
        handler(loop, {"message": "Task exception was never retrieved", "exception": unreachable})
        assert reporter.shown is None
        assert "The server cannot be reached." in caplog.text
        bug = AttributeError("'NoneType' object has no attribute 'record'")
        handler(loop, {"message": "Task exception was never retrieved", "exception": bug})
        assert "AttributeError" in _shown(reporter).detailedText()
    finally:
        loop.close()
