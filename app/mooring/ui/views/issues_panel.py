"""The Issues panel: problems that survive restarts, with the fixes each one offers."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListView,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from mooring.core.events import IssueDidChange
from mooring.core.issues import IssueAction
from mooring.core.views import IssueView
from mooring.ui.models.issues import IssueListModel, IssueRole
from mooring.ui.qt_async import Jobs, confirm

if TYPE_CHECKING:
    from mooring.core.host_api import HostApi

ACTION_WORDS: dict[IssueAction, str] = {
    IssueAction.RETRY: "Retry",
    IssueAction.ABANDON: "Abandon",
    IssueAction.SIGN_IN: "Sign in",
    IssueAction.CHECK_SERVER: "Show server",
    IssueAction.SHOW_TASK: "Show task",
    IssueAction.DISMISS: "Dismiss",
}
"""The button for each action an issue offers."""


class IssuesPanel(QWidget):
    """The "Issues" panel."""

    report = Signal(str)
    dialog_opened = Signal(object)
    sign_in_requested = Signal(str)
    """An issue's "Sign in" was pressed (its subject: a task record id or a server id)."""
    """A dialog of this panel opened (a confirmation)."""
    count_changed = Signal(int)
    show_task = Signal(str)
    """The user wants to see a task (record id)."""
    show_server = Signal(str)
    """The user wants to see a server (server id)."""

    def __init__(self, host: HostApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.setObjectName("issues-panel")
        self.setAccessibleName("Issues")
        self.jobs = Jobs(self.report.emit)
        self.model = IssueListModel(self)
        self._reload: asyncio.Task[None] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.empty_label = QLabel("No open issues.", self)
        layout.addWidget(self.empty_label)
        self.list_view = QListView(self)
        self.list_view.setObjectName("issues-list")
        self.list_view.setAccessibleName("Issue list")
        self.list_view.setModel(self.model)
        self.list_view.setWordWrap(True)
        layout.addWidget(self.list_view, stretch=2)
        self.detail_label = QLabel(self)
        self.detail_label.setTextFormat(Qt.TextFormat.PlainText)
        self.detail_label.setWordWrap(True)
        layout.addWidget(self.detail_label)
        self.actions_row = QHBoxLayout()
        layout.addLayout(self.actions_row)
        self.buttons: dict[IssueAction, QPushButton] = {}
        for action, words in ACTION_WORDS.items():
            button = QPushButton(words, self)
            button.setAccessibleName(words)
            button.clicked.connect(lambda _=False, a=action: self._on_action(a))
            self.actions_row.addWidget(button)
            self.buttons[action] = button
        self.actions_row.addStretch(1)
        self.list_view.selectionModel().selectionChanged.connect(lambda *_: self._on_selection())
        self.model.modelReset.connect(self._on_selection)
        self._unsubscribe = host.events.on(IssueDidChange, lambda _e: self.schedule_reload())
        self._on_selection()

    async def load(self) -> None:
        """Read the open issues."""
        self.model.set_views(await self.host.open_issues())
        count = self.model.rowCount()
        self.empty_label.setVisible(count == 0)
        if count and not self.list_view.selectionModel().hasSelection():
            self.list_view.setCurrentIndex(self.model.index(0, 0))
        self._on_selection()
        self.count_changed.emit(count)

    def schedule_reload(self) -> None:
        """Read again soon."""
        if self._reload is None or self._reload.done():
            self._reload = asyncio.ensure_future(self.load())

    def selected(self) -> IssueView | None:
        """The chosen issue."""
        indexes = self.list_view.selectionModel().selectedIndexes()
        view = indexes[0].data(IssueRole.VIEW) if indexes else None
        return view if isinstance(view, IssueView) else None

    def _on_selection(self) -> None:
        view = self.selected()
        offered = set(view.actions) if view else set()
        for action, button in self.buttons.items():
            button.setVisible(action in offered)
        self.detail_label.setText(
            str(self.model.data(self.list_view.currentIndex(), IssueRole.DETAIL) or "")
            if view
            else ""
        )

    def _on_action(self, action: IssueAction) -> None:
        view = self.selected()
        if view is not None:
            self.jobs.start(self.act(view, action))

    async def act(self, view: IssueView, action: IssueAction) -> None:
        """Do what the user chose about an issue, through the host."""
        subject = view.issue.subject
        match action:
            case IssueAction.DISMISS:
                await self.host.dismiss_issue(view.issue.id)
                self.report.emit("Dismissed.")
            case IssueAction.ABANDON:
                await self.host.abandon(subject)
                self.report.emit("Abandoned.")
            case IssueAction.RETRY:

                async def ask(warning: str) -> bool:
                    return await confirm(
                        self, "Retry call", warning, "Retry anyway", self.dialog_opened.emit
                    )

                new = await self.host.retry(subject, confirm=ask)
                if new is not None:
                    self.report.emit(f"Retried as {new.id[:8]}.")
                    self.show_task.emit(new.id)
            case IssueAction.SHOW_TASK:
                self.show_task.emit(subject)
            case IssueAction.CHECK_SERVER:
                self.show_server.emit(subject)
            case IssueAction.SIGN_IN:
                self.sign_in_requested.emit(subject)
        await self.load()

    async def stop(self) -> None:
        """Stop listening and end the work this panel started."""
        self.close_panel()
        if self._reload is not None:
            self._reload.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reload
        await self.jobs.cancel_all()

    def close_panel(self) -> None:
        """Stop listening to the host."""
        self._unsubscribe()
        self._unsubscribe = lambda: None
