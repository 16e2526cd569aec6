"""Starting a conversation from an assistant, and the "Assistants…" dialog, for the
Conversations view: a "From assistant" button whose menu lists the assistants (Ctrl+N stays a
plain new conversation) and manages them.

A part of its own so the view stays small: it reads the assistants, keeps their names for the
conversation list (which shows the assistant a conversation came from) and opens the dialog.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from mooring.ui.text import inert

if TYPE_CHECKING:
    from mooring.core.assistants import AssistantView
    from mooring.core.conversation import Conversation
    from mooring.core.host_api import HostApi
    from mooring.ui.dialogs.assistants import AssistantsDialog
    from mooring.ui.qt_async import Jobs


class AssistantStarter(QObject):
    """The assistants' button and menu; the dialog that manages them."""

    changed = Signal()
    """The assistants were read again (the menu and :attr:`names` follow)."""
    dialog_opened = Signal(object)
    """The "Assistants" dialog opened (it is the argument)."""

    def __init__(
        self,
        host: HostApi,
        parent: QWidget,
        jobs: Jobs,
        start_from: Callable[[str], Coroutine[Any, Any, Any]],
    ) -> None:
        super().__init__(parent)
        self._host = host
        self._parent = parent
        self._jobs = jobs
        self._start_from = start_from
        self.views: list[AssistantView] = []
        self.names: dict[str, str] = {}
        """Assistant id → name (for the conversation list)."""
        self.dialog: AssistantsDialog | None = None
        self.button = QToolButton(parent)
        self.button.setText("From assistant")
        self.button.setAccessibleName("New conversation from an assistant")
        self.button.setToolTip("Start a conversation from a saved assistant, or manage them")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self.button)
        self.menu.setAccessibleName("Assistants")
        self.button.setMenu(self.menu)
        self.button.setVisible(host.assistants is not None)
        self._fill()

    async def refresh(self) -> dict[str, str]:
        """Read the assistants again; their names by id."""
        desk = self._host.assistants
        self.views = await desk.assistants() if desk is not None else []
        self.names = {v.assistant.id: v.name for v in self.views}
        self._fill()
        self.changed.emit()
        return self.names

    def _fill(self) -> None:
        self.menu.clear()
        for view in self.views:
            action = self.menu.addAction(inert(view.name, limit=60))
            action.setToolTip(f"A new conversation from {inert(view.name, limit=60)}")
            action.triggered.connect(partial(self._start, view.name))
        if not self.views:
            empty = self.menu.addAction("No assistants yet")
            empty.setEnabled(False)
        self.menu.addSeparator()
        manage = self.menu.addAction("Manage assistants…")
        manage.setObjectName("manage-assistants")
        manage.triggered.connect(lambda _checked=False: self.manage())

    async def start(self, name: str) -> Conversation | None:
        """A new conversation from the assistant called ``name`` (a ``KnownError`` when it
        cannot start: the assistant or its provider is gone)."""
        desk = self._host.assistants
        return await desk.start(name) if desk is not None else None

    def _start(self, name: str, _checked: bool = False) -> None:
        self._jobs.start(self._start_from(name))

    def actions_by_name(self) -> dict[str, Any]:
        """The menu's actions that start a conversation, by the assistant's name."""
        return {
            view.name: action for view, action in zip(self.views, self.menu.actions(), strict=False)
        }

    def manage(self) -> AssistantsDialog:
        """Open the "Assistants" dialog (one at a time); the menu follows what it saves."""
        from mooring.ui.dialogs.assistants import AssistantsDialog

        if self.dialog is not None:
            self.dialog.raise_()
            self.dialog.activateWindow()
            return self.dialog
        dialog = AssistantsDialog(self._host, self._jobs.start, self._parent.window())
        self.dialog = dialog
        dialog.saved.connect(lambda _name: self._jobs.start(self.refresh()))
        dialog.deleted.connect(lambda _name: self._jobs.start(self.refresh()))
        dialog.finished.connect(lambda _result: self._closed(dialog))
        dialog.open()
        self._jobs.start(dialog.load())
        self.dialog_opened.emit(dialog)
        return dialog

    def _closed(self, dialog: AssistantsDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()
