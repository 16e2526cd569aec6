"""Running coroutines from Qt slots without ever blocking the GUI thread.

Widgets never await the host inside a signal handler: they hand the coroutine to a
:class:`Jobs` set, which keeps a reference until it ends and reports a failure to the user
(a :class:`KnownError` as its message, anything else as a bug with a short message).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QMessageBox, QWidget

from mooring.core.errors import KnownError
from mooring.ui.remedies import remedy_words

log = logging.getLogger("mooring.ui")

T = TypeVar("T")


def error_text(exc: BaseException) -> str:
    """What to tell the user about ``exc``: a known error's message, hint and what its remedy
    says in the window's terms, else a bug."""
    if isinstance(exc, KnownError):
        advice = remedy_words(exc.remedy, exc.subject)
        return " ".join(part for part in (exc.message, exc.hint, advice) if part)
    return f"Something went wrong ({type(exc).__name__}); details are in the log file."


class Jobs:
    """Background coroutines started by a widget, with their failures reported."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self._report = report
        self._running: set[asyncio.Future[Any]] = set()

    def start(self, coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        """Run ``coro`` on the loop; a failure is reported, never raised into Qt."""
        task = asyncio.ensure_future(coro)
        self._running.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._running.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        if not isinstance(exc, KnownError):
            log.error("background work failed", exc_info=exc)
        try:
            self._report(error_text(exc))
        except RuntimeError:  # the widget that would show it is gone (the window closed)
            log.info("not shown (window closed): %s", error_text(exc))

    def __len__(self) -> int:
        return len(self._running)

    def cancel_soon(self) -> None:
        """Cancel everything still running, without waiting (a dialog closed)."""
        for task in list(self._running):
            task.cancel()

    async def cancel_all(self) -> None:
        """Stop everything still running (the window is closing)."""
        for task in list(self._running):
            task.cancel()
        for task in list(self._running):
            # Stopping: a failure was already reported, a cancellation is what we asked for.
            with contextlib.suppress(BaseException):
                await task


async def wait_dialog(dialog: QDialog, on_open: Callable[[QDialog], None] | None = None) -> int:
    """Open ``dialog`` window-modally (``open()``, never ``exec()``) and await its result;
    ``on_open`` is told once it is shown."""
    future: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def finished(result: int) -> None:
        if not future.done():
            future.set_result(result)

    dialog.finished.connect(finished)
    dialog.open()
    if on_open is not None:
        on_open(dialog)
    try:
        return await future
    finally:
        dialog.finished.disconnect(finished)
        if dialog.isVisible():
            dialog.reject()


async def confirm(
    parent: QWidget | None,
    title: str,
    text: str,
    yes: str,
    on_open: Callable[[QDialog], None] | None = None,
) -> bool:
    """Ask a yes/no question in a titled dialog; ``True`` only when ``yes`` was pressed."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.NoButton)
    box.setParent(parent, box.windowFlags())
    box.setTextFormat(Qt.TextFormat.PlainText)
    accept = box.addButton(yes, QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    await wait_dialog(box, on_open)
    clicked = box.clickedButton()
    box.deleteLater()
    return clicked is accept
