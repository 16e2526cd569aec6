"""The main window's menus and their actions (File, Edit, View, Help).

Built with the shell, before the host exists: the commands that need the host stay disabled
until it is attached (:meth:`WindowActions.enable_host`), and the shortcuts are bound after
the first paint (:meth:`WindowActions.bind_shortcuts`). Each action calls the window; nothing
here decides what a command does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

if TYPE_CHECKING:
    from mooring.ui.main_window import MainWindow

__all__ = ["WindowActions"]


class WindowActions:
    """The window's menu bar: its actions, their shortcuts, and the list of shortcuts (F1).

    ``views`` are the View menu's entries: ``(what it shows, shortcut)``; ``show_view`` is
    called with the entry's position."""

    def __init__(
        self,
        window: MainWindow,
        views: Sequence[tuple[str, str]],
        show_view: Callable[[int], None],
    ) -> None:
        self._window = window
        bar = window.menuBar()
        file_menu = bar.addMenu("&File")
        self.new_conversation = self._action("&New conversation", window.new_conversation)
        self.new_conversation.setObjectName("new-conversation")
        self.new_conversation.setToolTip("Start a new conversation")
        self.new_conversation.setStatusTip("Start a new conversation")
        file_menu.addAction(self.new_conversation)
        self.assistants = self._action(
            "A&ssistants…", lambda: window.conversations.starter.manage()
        )
        self.assistants.setObjectName("assistants")
        self.assistants.setToolTip("Saved presets for new conversations")
        file_menu.addAction(self.assistants)
        self.palette = self._action("&Run a tool…", window.open_palette)
        file_menu.addAction(self.palette)
        self.add_server = self._action(
            "&Add server…", lambda: window.jobs.start(window.servers.add_interactively())
        )
        file_menu.addAction(self.add_server)
        self.import_servers = self._action(
            "&Import servers…", lambda: window.jobs.start(window.import_servers())
        )
        file_menu.addAction(self.import_servers)
        self.export_conversation = self._action(
            "Export &conversation…", self.export_shown_conversation
        )
        self.export_conversation.setObjectName("export-conversation")
        self.export_conversation.setStatusTip("Save the shown conversation as Markdown or JSON")
        file_menu.addAction(self.export_conversation)
        self.export_traces = self._action("&Export traces…", window.ask_export_traces)
        file_menu.addAction(self.export_traces)
        self.copy_reply = self._action("&Copy last reply", window.copy_last_reply)
        self.copy_reply.setObjectName("copy-last-reply")
        self.find = self._action("&Find in conversation", self.find_in_conversation)
        self.find.setObjectName("find-in-conversation")
        self.search = self._action("&Search conversations", window.find_conversations)
        self.search.setObjectName("search-conversations")
        self.attach = self._action("&Attach files…", self.attach_files)
        self.attach.setObjectName("attach-files")
        self.attach.setToolTip("Attach text files or images to the next message")
        for needs_host in self._host_actions():
            needs_host.setEnabled(False)  # until the host is attached
        file_menu.addSeparator()
        quit_action = self._action("&Quit", window.quit)
        file_menu.addAction(quit_action)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.copy_reply)
        edit_menu.addAction(self.find)
        edit_menu.addAction(self.search)
        edit_menu.addAction(self.attach)
        view_menu = bar.addMenu("&View")
        self._shortcuts: list[tuple[QAction, QKeySequence | QKeySequence.StandardKey]] = [
            (self.new_conversation, QKeySequence.StandardKey.New),
            (self.palette, QKeySequence("Ctrl+K")),
            (quit_action, QKeySequence.StandardKey.Quit),
            (self.copy_reply, QKeySequence("Ctrl+Shift+C")),
            (self.find, QKeySequence.StandardKey.Find),
            (self.search, QKeySequence("Ctrl+Shift+F")),
            (self.export_conversation, QKeySequence("Ctrl+Shift+E")),
            (self.attach, QKeySequence("Ctrl+Shift+A")),
        ]
        for number, (words, shortcut) in enumerate(views):
            action = self._action(words, partial(show_view, number))
            view_menu.addAction(action)
            self._shortcuts.append((action, QKeySequence(shortcut)))
        help_menu = bar.addMenu("&Help")
        self.shortcuts = self._action("&Keyboard shortcuts", self.show_shortcuts)
        self.shortcuts.setObjectName("keyboard-shortcuts")
        help_menu.addAction(self.shortcuts)
        self._shortcuts.append((self.shortcuts, QKeySequence("F1")))

    def _action(self, words: str, then: Callable[[], object]) -> QAction:
        action = QAction(words, self._window)
        action.triggered.connect(lambda _checked=False: then())
        return action

    def _host_actions(self) -> tuple[QAction, ...]:
        return (
            self.new_conversation,
            self.assistants,
            self.palette,
            self.add_server,
            self.import_servers,
            self.export_conversation,
            self.export_traces,
            self.copy_reply,
            self.find,
            self.search,
            self.attach,
        )

    def attach_files(self) -> None:
        """Pick files to attach to the next message (Ctrl+Shift+A): the Conversations view is
        shown and its file dialog opened."""
        window = self._window
        window.show_view(window.conversations)
        window.jobs.start(window.conversations.files.pick())

    def find_in_conversation(self) -> None:
        """Find words in the shown conversation: its find bar opened (Ctrl+F)."""
        window = self._window
        window.show_view(window.conversations)
        window.conversations.find_bar.open_bar()

    def export_shown_conversation(self) -> None:
        """Save the shown conversation where the user chooses (Ctrl+Shift+E)."""
        window = self._window
        window.show_view(window.conversations)
        window.conversations.jobs.start(window.conversations.export_interactively())

    def bind_shortcuts(self) -> None:
        """Give the actions their shortcuts (once; later calls do nothing).

        After the first paint (or with the host): binding the first shortcut loads Qt's whole
        namespace of enums, which costs as much as a bare window's paint. Keys pressed before
        are held until the event loop runs, by then they are bound."""
        for action, shortcut in self._shortcuts:
            action.setShortcut(shortcut)
        self._shortcuts.clear()

    def enable_host(self, *, traces: bool) -> None:
        """The host is attached: its commands can be chosen (traces: when they can be
        exported)."""
        for needs_host in self._host_actions():
            needs_host.setEnabled(True)
        self.export_traces.setEnabled(traces)

    def shortcut_rows(self) -> list[tuple[str, str]]:
        """Every menu command with a shortcut: ``(keys as shown on this system, what it
        does)``, in menu order, then the keys of the Conversations view."""
        rows = []
        for menu_action in self._window.menuBar().actions():
            menu = menu_action.menu()
            if not isinstance(menu, QMenu):
                continue
            for action in menu.actions():
                keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                if keys:
                    rows.append((keys, action.text().replace("&", "")))
        from mooring.ui.views.transcript import BRANCH_KEYS

        rows.append(("Esc", "Stop the reply being written"))
        rows.append(("Ctrl+C", "Copy the chosen message (in the transcript)"))
        branch_keys = QKeySequence(BRANCH_KEYS).toString(QKeySequence.SequenceFormat.NativeText)
        rows.append((branch_keys, "Branch from the chosen message (in the transcript)"))
        return rows

    def show_shortcuts(self) -> None:
        """The keyboard shortcuts, in a dialog of their own (F1)."""
        from mooring.ui.dialogs.shortcuts import ShortcutsDialog

        dialog = ShortcutsDialog(self.shortcut_rows(), self._window)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        self._dialog = dialog
