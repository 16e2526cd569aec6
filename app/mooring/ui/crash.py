"""A bug in the window is shown, not lost: an uncaught exception opens a dialog naming the log.

Two ways an exception escapes the window's code: a Qt slot or virtual method that raises
(PySide6 hands it to ``sys.excepthook``), and a coroutine or callback on the loop that raises
with nobody to hear it (the loop's exception handler). :class:`CrashReporter` takes both: the
traceback goes to the log, and the user sees "Mooring hit a problem" with the log file's path
and the details, opened with ``open()`` (never a nested loop). While one is shown, more are
counted on it rather than stacked. An environment problem (a ``KnownError``, a lost
connection) is not a bug: the loop's default handler logs it as before.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from mooring.core.errors import KnownError

log = logging.getLogger("mooring.ui")

TITLE = "Mooring hit a problem"


class CrashReporter:
    """Shows the window's uncaught exceptions (see the module's docstring)."""

    def __init__(self, log_file: Path, parent: Callable[[], QWidget | None]) -> None:
        self._log_file = log_file
        self._parent = parent
        self._box: QMessageBox | None = None
        self._count = 0
        self._previous_hook: Any = None

    @property
    def shown(self) -> QMessageBox | None:
        """The dialog on screen now (``None``: none)."""
        return self._box

    def install(self) -> None:
        """Take ``sys.excepthook``."""
        self._previous_hook = sys.excepthook
        sys.excepthook = self.excepthook

    def watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Take ``loop``'s exception handler."""
        loop.set_exception_handler(self.loop_exception)

    def uninstall(self) -> None:
        """Give ``sys.excepthook`` back."""
        if self._previous_hook is not None:
            sys.excepthook = self._previous_hook
            self._previous_hook = None

    def excepthook(
        self,
        kind: type[BaseException],
        value: BaseException,
        tb: TracebackType | None,
    ) -> None:
        """An exception no code caught: log it, then show it."""
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, value, tb)
            return
        log.critical("uncaught exception in the window", exc_info=(kind, value, tb))
        self.show("".join(traceback.format_exception(kind, value, tb)))

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The loop's exception handler: a bug is shown; anything else is logged as asyncio
        logs it."""
        error = context.get("exception")
        if error is None or isinstance(
            error, KnownError | OSError | EOFError | asyncio.CancelledError
        ):
            loop.default_exception_handler(context)
            return
        log.critical(
            "uncaught exception in the window: %s",
            context.get("message", ""),
            exc_info=(type(error), error, error.__traceback__),
        )
        self.show("".join(traceback.format_exception(type(error), error, error.__traceback__)))

    def show(self, details: str) -> None:
        """The dialog, or one more problem counted on the one already shown."""
        self._count += 1
        if self._box is not None:
            self._box.setInformativeText(self._informative())
            return
        box = QMessageBox(self._parent())
        box.setIcon(QMessageBox.Icon.Critical)
        box.setWindowTitle(TITLE)
        box.setTextFormat(Qt.TextFormat.PlainText)  # nothing in a traceback is markup
        box.setText(
            "Something went wrong inside Mooring. What you were doing may not have finished; "
            "your tasks and conversations are kept."
        )
        box.setInformativeText(self._informative())
        box.setDetailedText(details)
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.setAccessibleName(TITLE)
        box.setAccessibleDescription(f"The details are in {self._log_file}")
        box.finished.connect(self._closed)
        self._box = box
        box.open()

    def _informative(self) -> str:
        more = f" ({self._count} problems so far.)" if self._count > 1 else ""
        return f"The details are in the log file:\n{self._log_file}{more}"

    def _closed(self) -> None:
        if self._box is not None:
            self._box.deleteLater()
        self._box = None
        self._count = 0
