"""The window's links of the notification chain: the system tray and the in-app toast.

Both show a notice's generic words only (its summary and body); a click opens what the notice
is about (:class:`~mooring.core.notifications.OpenTarget`) through the ``opened`` signal. The
toast also keeps a count of notices not yet seen, for the badge on the Tasks panel.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStyle,
    QSystemTrayIcon,
    QWidget,
)

from mooring.core.notifications import Notice, OpenTarget

TOAST_MS = 8000
"""How long a toast stays (the badge stays until the window is looked at)."""

STILL_RUNNING = (
    "Mooring keeps running here: it follows your background work and tells you when it needs "
    "you. Quit from this icon's menu, or File → Quit."
)
"""Said once, the first time closing the window keeps Mooring running in the tray."""


def tray_icon(window: QWidget) -> QIcon:
    """The window's icon, or a standard one while Mooring has none of its own."""
    icon = window.windowIcon()
    if icon.isNull():
        icon = window.style().standardIcon(QStyle.StandardPixmap.SP_ComputerIcon)
    return icon


class TrayNotifier(QObject):
    """Shows notices as system tray messages; ``show_notice`` is ``False`` without a tray."""

    opened = Signal(object)
    """A tray message was clicked, or "Open Mooring" chosen: its :class:`OpenTarget` (or
    ``None``)."""
    quit_requested = Signal()
    """"Quit Mooring" was chosen in the tray icon's menu."""

    def __init__(
        self,
        icon: QIcon,
        parent: QObject | None = None,
        *,
        available: Callable[[], bool] = QSystemTrayIcon.isSystemTrayAvailable,
    ) -> None:
        super().__init__(parent)
        self._icon = icon
        self._available = available
        self._tray: QSystemTrayIcon | None = None
        self._target: OpenTarget | None = None

    @property
    def tray(self) -> QSystemTrayIcon | None:
        """The tray icon, once it was needed."""
        return self._tray

    @property
    def available(self) -> bool:
        """Whether the desktop has a system tray."""
        return bool(self._available())

    def ensure_icon(self) -> QSystemTrayIcon | None:
        """Show the tray icon (with its Open / Quit menu); ``None`` without a tray."""
        if not self._available():
            return None
        if self._tray is None:
            from PySide6.QtWidgets import QMenu

            self._tray = QSystemTrayIcon(self._icon, self)
            self._tray.setToolTip("Mooring")
            self._tray.messageClicked.connect(self._on_clicked)
            self._tray.activated.connect(self._on_activated)
            self.menu = QMenu()
            self.open_action = self.menu.addAction("Open Mooring")
            self.open_action.triggered.connect(lambda: self.opened.emit(None))
            self.quit_action = self.menu.addAction("Quit Mooring")
            self.quit_action.triggered.connect(self.quit_requested.emit)
            self._tray.setContextMenu(self.menu)
            self._tray.show()
        return self._tray

    def show_notice(self, notice: Notice) -> bool:
        """Show ``notice`` as a tray message (a newer one replaces it on screen)."""
        tray = self.ensure_icon()
        if tray is None:
            return False
        self._target = notice.target
        tray.showMessage(
            notice.summary, notice.body, QSystemTrayIcon.MessageIcon.Information, TOAST_MS
        )
        return True

    def explain(self, text: str) -> bool:
        """Show a message from the tray icon (not a notice: nothing to open)."""
        tray = self.ensure_icon()
        if tray is None:
            return False
        self._target = None
        tray.showMessage("Mooring", text, QSystemTrayIcon.MessageIcon.Information, TOAST_MS)
        return True

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.opened.emit(None)

    def _on_clicked(self) -> None:
        self.opened.emit(self._target)


class Toast(QFrame):
    """A notice inside the window, with "Open" and "Dismiss", and the unseen-notice count."""

    opened = Signal(object)
    """"Open" was pressed: the notice's :class:`OpenTarget` (or ``None``)."""
    badge_changed = Signal(int)
    """How many notices arrived since the user last looked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notification-toast")
        self.setAccessibleName("Notification")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        self.message = QLabel(self)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setAccessibleName("Notification text")
        self.open_button = QPushButton("Open", self)
        self.open_button.setAccessibleName("Open")
        self.dismiss_button = QPushButton("Dismiss", self)
        self.dismiss_button.setAccessibleName("Dismiss")
        layout.addWidget(self.message, stretch=1)
        layout.addWidget(self.open_button)
        layout.addWidget(self.dismiss_button)
        self._target: OpenTarget | None = None
        self._unseen: dict[int, int] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TOAST_MS)
        self._timer.timeout.connect(self.hide)
        self.open_button.clicked.connect(self._on_open)
        self.dismiss_button.clicked.connect(self.hide)
        self.hide()

    @property
    def unseen(self) -> int:
        """Notices (counted by what they tell) since :meth:`clear_badge`."""
        return sum(self._unseen.values())

    def show_notice(self, notice: Notice) -> bool:
        """Show ``notice`` (replacing the one of its burst); always delivers."""
        self.message.setText(f"{notice.summary}: {notice.body.replace(chr(10), ' · ')}")
        self._target = notice.target
        self._unseen[notice.key] = notice.count
        self.badge_changed.emit(self.unseen)
        self.show()
        self.raise_()
        self._timer.start()
        return True

    def clear_badge(self) -> None:
        """The user looked: nothing is unseen any more."""
        if self._unseen:
            self._unseen.clear()
            self.badge_changed.emit(0)

    def _on_open(self) -> None:
        self.hide()
        self.opened.emit(self._target)


class ConsentQuestion(QObject):
    """The first-time question: may Mooring notify? Opened with ``open()`` (never ``exec()``)
    and awaited through a future."""

    TITLE = "Notifications"
    TEXT = (
        "Mooring can tell you when background work finishes or needs you. Notifications only "
        "say that something happened, never what it was about."
    )

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        from PySide6.QtWidgets import QMessageBox

        self.box = QMessageBox(QMessageBox.Icon.Question, self.TITLE, self.TEXT, parent=parent)
        self.allow_button = self.box.addButton(
            "Allow notifications", QMessageBox.ButtonRole.AcceptRole
        )
        self.decline_button = self.box.addButton("Not now", QMessageBox.ButtonRole.RejectRole)
        self.box.setDefaultButton(self.allow_button)
        self._answer: asyncio.Future[bool] | None = None
        self._result: bool | None = None
        self.box.finished.connect(self._on_finished)

    def open(self) -> None:
        """Show the question (the event loop keeps running)."""
        self.box.open()

    async def answer(self) -> bool:
        """``True`` if the user allowed notifications (closing the box is "not now")."""
        if self._result is not None:
            return self._result
        if not self.box.isVisible():
            self.open()
        self._answer = asyncio.get_running_loop().create_future()
        return await self._answer

    def _on_finished(self, _result: int) -> None:
        self._result = self.box.clickedButton() is self.allow_button
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(self._result)


def pending_questions() -> list[QWidget]:
    """The approval and input dialogs open now: the user is answering those."""
    from mooring.ui.dialogs.approval import ApprovalDialog
    from mooring.ui.dialogs.input_form import InputFormDialog

    return [
        widget
        for widget in QApplication.topLevelWidgets()
        if isinstance(widget, ApprovalDialog | InputFormDialog) and widget.isVisible()
    ]


class _Closed(QObject):
    """Resolves a future once any of the watched dialogs is hidden, closed or gone."""

    def __init__(self, dialogs: list[QWidget], closed: asyncio.Future[None]) -> None:
        super().__init__()
        self._dialogs = dialogs
        self._closed = closed
        for dialog in dialogs:
            dialog.installEventFilter(self)
            dialog.destroyed.connect(self._done)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Hide, QEvent.Type.Close):
            self._done()
        return False

    def _done(self, *_args: object) -> None:
        if not self._closed.done():
            self._closed.set_result(None)

    def release(self) -> None:
        for dialog in self._dialogs:
            with contextlib.suppress(RuntimeError):  # already deleted
                dialog.removeEventFilter(self)
                dialog.destroyed.disconnect(self._done)


async def calm_moment(on_wait: Callable[[list[QWidget]], None] | None = None) -> None:
    """Return once no approval or input dialog is open (at once if none is); ``on_wait`` is
    told each time it waits, with the dialogs it waits for.

    The first-time notification question must never open over one of those: it would take
    the focus (and the keyboard, and an assistive tool's attention) from "Allow once"."""
    while busy := pending_questions():
        closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        watcher = _Closed(busy, closed)
        if on_wait is not None:
            on_wait(busy)
        try:
            await closed
        finally:
            watcher.release()
        # Let what answering leads to happen first (the next queued question opens, the
        # dialog is deleted), then look again.
        await asyncio.sleep(0)


async def ask_notification_consent(
    window: QWidget,
    *,
    on_open: Callable[[ConsentQuestion], None] | None = None,
    on_wait: Callable[[list[QWidget]], None] | None = None,
) -> bool:
    """Ask once, in the window, whether Mooring may notify, at a calm moment: never over an
    approval or an input form still to be answered (the asker waits; the notice that led to
    the question is held by the notifier meanwhile). ``on_open`` sees the question shown,
    ``on_wait`` each wait for the dialogs still open (see :func:`calm_moment`)."""
    await calm_moment(on_wait)
    question = ConsentQuestion(window)
    question.open()
    if on_open is not None:
        on_open(question)
    return await question.answer()
