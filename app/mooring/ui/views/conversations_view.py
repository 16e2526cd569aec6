"""The Conversations view: the conversation list, the transcript and the composer.

A thin view over :class:`~mooring.ui.presenters.conversations.ConversationPresenter`, which
owns the use cases (what is read, which conversation is shown, deleting with *Undo*, sending,
exporting): every button hands a coroutine to the view's :class:`Jobs`; the widgets render what
the presenter returns and what the host's events tell (``MessageDidAppend``; the transcript
pane follows ``ReplyDidStream`` and ``TaskDidChange`` for the tool round cards). Long
transcripts load a page at a time (the newest first, older ones as the reader scrolls up).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from mooring.core.conversation import Conversation, Role
from mooring.core.errors import KnownError
from mooring.core.events import MessageDidAppend, TaskDidChange, VersionsDidChange
from mooring.ui.models.conversations import ConversationListModel, ConversationRow, MessageListModel
from mooring.ui.presenters.conversations import PAGE_SIZE, ConversationPresenter, file_name
from mooring.ui.qt_async import Jobs, confirm, error_text, wait_dialog
from mooring.ui.text import inert
from mooring.ui.views.assistant_starter import AssistantStarter
from mooring.ui.views.chat_notice import ChatNotice
from mooring.ui.views.composer import Composer
from mooring.ui.views.rewrites import Rewrites
from mooring.ui.views.sample_chip import SampleChip
from mooring.ui.views.transcript import PADDING, MessageDelegate, TranscriptPane
from mooring.ui.widgets.composer_picker import ComposerPicker
from mooring.ui.widgets.file_tray import FileTray
from mooring.ui.widgets.find_bar import FindBar

if TYPE_CHECKING:
    from mooring.core.host_api import HostApi

__all__ = ["PADDING", "PAGE_SIZE", "ConversationsView", "MessageDelegate"]
"""``PADDING``, ``PAGE_SIZE`` and ``MessageDelegate`` live in ``views.transcript`` and
``presenters.conversations`` now; named here too for code written against this module."""

SEARCH_DELAY_MS = 250
ACTIVITY_TICK_MS = 60_000
"""How often the list's relative times ("5 min ago") are drawn again (no read)."""
NO_CHAT = (
    "Chat is not available here: this window has no conversation storage. "
    "Tools still run from the palette (Ctrl+K)."
)
EXPORT_FILTERS = ["Markdown (*.md)", "JSON (*.json)"]
"""The export's formats, as the CLI's ``conversations export`` writes them."""


class ConversationsView(QWidget):
    """The "Conversations" view (the :class:`ConversationScreen` of its presenter)."""

    report = Signal(str)
    dialog_opened = Signal(object)
    """A dialog of this view opened (a confirmation, the rename box)."""
    loaded = Signal()
    """The conversation list was (re)read."""
    transcript_loaded = Signal(str)
    """A conversation's messages are shown (its id)."""
    turn_ended = Signal(str)
    """A turn ended in the shown conversation (its id)."""
    notice_changed = Signal(str)
    remedy_requested = Signal(str, str)
    """The notice's action was chosen: the :class:`Remedy` value, the name it is about."""
    show_task = Signal(str)
    """The user asked to see a task's card (its record id)."""
    older_loaded = Signal(int)
    """An older page of the transcript was shown (how many messages it added)."""
    rounds_loaded = Signal()
    """The shown conversation's tool round cards were read (again)."""
    choices_loaded = Signal()
    """The provider and model choices for the shown conversation are in the composer."""
    continue_changed = Signal(bool)
    """Whether "Continue with result" can be pressed changed (or was checked again)."""
    deletion_done = Signal(str)
    """A deleted conversation (its id) is gone for good (the undo time ran out)."""
    menu_opened = Signal(object)
    """The conversation list's context menu opened (the :class:`QMenu`)."""
    exported = Signal(str)
    """A conversation was saved (the path), or could not be (``""``: the notice says why)."""

    def __init__(
        self,
        host: HostApi,
        parent: QWidget | None = None,
        *,
        default_system_prompt: Callable[[], str] = lambda: "",
    ) -> None:
        super().__init__(parent)
        self.setObjectName("conversations-view")
        self.setAccessibleName("Conversations")
        self.jobs = Jobs(self.report.emit)
        self.presenter = ConversationPresenter(host.chat, host.events, self, self.jobs.start)
        self._active_tasks = host.tasks
        self._running_read = False
        self._reload: asyncio.Future[None] | None = None
        self._stale = False
        self._choosing = False

        self.conversations = ConversationListModel(self)
        self.messages = MessageListModel(self)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        layout.addWidget(self.splitter)

        side = QWidget(self.splitter)
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        self.search_field = QLineEdit(side)
        self.search_field.setPlaceholderText("Search conversations")
        self.search_field.setAccessibleName("Search conversations")
        self.search_field.setClearButtonEnabled(True)
        side_layout.addWidget(self.search_field)
        self.list_view = QListView(side)
        self.list_view.setObjectName("conversation-list")
        self.list_view.setAccessibleName("Conversation list")
        self.list_view.setModel(self.conversations)
        self.list_view.setWordWrap(True)
        self.list_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        side_layout.addWidget(self.list_view, stretch=1)
        buttons = QHBoxLayout()
        self.new_button = self._button("New", side, buttons)
        self.new_button.setToolTip("Start a new conversation (Ctrl+N)")
        self.rename_button = self._button("Rename", side, buttons)
        self.delete_button = self._button("Delete", side, buttons)
        self.export_button = self._button("Export…", side, buttons)
        self.export_button.setToolTip("Save this conversation as Markdown or JSON")
        side_layout.addLayout(buttons)
        # On a row of its own: the side column keeps its width (the window's layout with it).
        self.starter = AssistantStarter(
            host, side, self.jobs, lambda name: self.new_conversation(assistant=name)
        )
        starter_row = QHBoxLayout()
        starter_row.addWidget(self.starter.button)
        starter_row.addStretch(1)
        side_layout.addLayout(starter_row)
        undo_row = QHBoxLayout()
        self.undo_label = QLabel(side)
        self.undo_label.setAccessibleName("Deleted conversation")
        self.undo_label.setTextFormat(Qt.TextFormat.PlainText)
        self.undo_label.setWordWrap(True)
        undo_row.addWidget(self.undo_label, stretch=1)
        self.undo_button = self._button("Undo", side, undo_row)
        self.undo_button.setToolTip("Bring the deleted conversation back")
        side_layout.addLayout(undo_row)
        self.show_undo(None)

        main = QWidget(self.splitter)
        main_layout = QVBoxLayout(main)
        main_layout.setContentsMargins(0, 0, 0, 0)
        self.notice_bar = ChatNotice(main)
        self.notice = self.notice_bar.label
        self.notice_button = self.notice_bar.button
        main_layout.addWidget(self.notice_bar)
        self.pane = TranscriptPane(self.messages, main)
        self.find_bar = FindBar(self.pane.transcript, main)
        main_layout.addWidget(self.find_bar)
        self.transcript = self.pane.transcript
        self.copy_button = self.pane.copy_button
        self.arguments_button = self.pane.arguments_button
        main_layout.addWidget(self.pane, stretch=1)
        self.composer = Composer(main)
        self.setFocusProxy(self.composer)
        self.picker = ComposerPicker(self.composer, lambda: host.library, self.report.emit)
        choice_row = QHBoxLayout()
        self.provider_box = QComboBox(main)
        self.provider_box.setAccessibleName("Provider")
        self.provider_box.setMinimumContentsLength(8)
        self.provider_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.provider_box.setToolTip("The model provider this conversation talks to")
        choice_row.addWidget(self.provider_box)
        self.model_box = QComboBox(main)
        self.model_box.setEditable(True)
        self.model_box.setAccessibleName("Model")
        self.model_box.setToolTip("The model to ask (empty: the provider's default)")
        self.model_box.setMinimumContentsLength(12)
        self.model_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        choice_row.addWidget(self.model_box)
        self.system_button = QPushButton("System prompt…", main)
        self.system_button.setAccessibleName("System prompt")
        self.system_button.setToolTip("Your instructions to the model in this conversation")
        choice_row.addWidget(self.system_button)
        choice_row.addStretch(1)
        main_layout.addLayout(choice_row)
        main_layout.addWidget(self.picker.row)
        self.files = FileTray(
            self.jobs,
            lambda exc: self.notice_bar.show_text(error_text(exc)),
            main,
            self.dialog_opened.emit,
        )
        self.composer.files_dropped.connect(self.files.add_paths)
        main_layout.addWidget(self.files)
        self.sample_chip = SampleChip(self.composer, host.bundled_server, main)
        main_layout.addWidget(self.sample_chip)
        main_layout.addWidget(self.composer)
        row = QHBoxLayout()
        row.addStretch(1)
        self.continue_button = self._button("Continue with result", main, row)
        self.continue_button.setToolTip(
            "Give the background task's result to the model and let it go on"
        )
        self.stop_button = self._button("Stop", main, row)
        self.stop_button.setToolTip("Stop the reply (Esc)")
        self.send_button = self._button("Send", main, row)
        main_layout.addLayout(row)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 3)

        jobs = self.jobs
        self.new_button.clicked.connect(lambda: jobs.start(self.new_conversation()))
        self.rename_button.clicked.connect(lambda: jobs.start(self.rename_interactively()))
        self.delete_button.clicked.connect(lambda: jobs.start(self.delete_interactively()))
        self.export_button.clicked.connect(lambda: jobs.start(self.export_interactively()))
        self.send_button.clicked.connect(lambda: jobs.start(self.send()))
        self.composer.submitted.connect(lambda: jobs.start(self.send()))
        self.stop_button.clicked.connect(self.stop_reply)
        self.continue_button.clicked.connect(lambda: jobs.start(self.continue_with_result()))
        self.undo_button.clicked.connect(self.undo_delete)
        self.notice_bar.changed.connect(self.notice_changed)
        self.notice_bar.remedy_requested.connect(self.remedy_requested)
        self.pane.report.connect(self.report)
        self.pane.show_task.connect(self.show_task)
        self.rewrites = Rewrites(self, default_system_prompt, host.branches)
        self.system_button.clicked.connect(
            lambda: jobs.start(self.rewrites.system_prompt_interactively())
        )
        self.provider_box.activated.connect(lambda _i: jobs.start(self._provider_chosen()))
        self.model_box.activated.connect(lambda _i: jobs.start(self._model_chosen()))
        model_line = self.model_box.lineEdit()
        assert model_line is not None  # an editable combo box has one
        model_line.editingFinished.connect(lambda: jobs.start(self._model_chosen()))
        self.messages.older_wanted.connect(
            lambda conversation_id, before: jobs.start(self._load_older(conversation_id, before))
        )
        self.messages.dataChanged.connect(lambda _t, _b, _r: self.busy_changed())
        self.messages.modelReset.connect(self.busy_changed)
        self.messages.rowsInserted.connect(lambda _p, _f, _l: self.busy_changed())
        self.messages.rowsInserted.connect(lambda _p, _f, _l: self.sample_chip.hide())
        stop_key = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        stop_key.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        stop_key.activated.connect(self.stop_reply)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.schedule_reload)
        self.search_field.textChanged.connect(lambda _t: self._search_timer.start())
        self.list_view.selectionModel().currentChanged.connect(self._on_current)
        self.list_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list_view.customContextMenuRequested.connect(self._show_list_menu)
        self._list_menu: QMenu | None = None
        self.activity_timer = QTimer(self)
        self.activity_timer.setInterval(ACTIVITY_TICK_MS)
        self.activity_timer.timeout.connect(self.conversations.tick)
        self.activity_timer.start()

        self._unsubscribers = [
            host.events.on(MessageDidAppend, self._on_appended),
            host.events.on(TaskDidChange, lambda e: self.conversations.task_changed(e.record)),
            host.events.on(VersionsDidChange, self.rewrites.on_versions),
            *self.pane.follow(host.events),
        ]
        if self.presenter.chat is None:
            self.notice_bar.show_text(NO_CHAT)
        self.busy_changed()

    @staticmethod
    def _button(words: str, parent: QWidget, row: QHBoxLayout) -> QPushButton:
        button = QPushButton(words, parent)
        button.setAccessibleName(words)
        row.addWidget(button)
        return button

    @property
    def current_id(self) -> str | None:
        """The conversation shown (``None``: none)."""
        return self.presenter.current_id

    # -- reading -------------------------------------------------------------------------------

    async def load(self) -> None:
        """Read the conversations (or the search's matches), keeping the chosen one chosen."""
        listed = await self.presenter.listing(self.search_field.text().strip())
        if listed is None:
            return  # a newer search is on its way
        chosen = self.current_id
        if not self._running_read:
            self._running_read = True  # then TaskDidChange keeps the counts
            active = await self._active_tasks(active=True)
            self.conversations.set_running(
                (v.record.conversation_id, v.id) for v in active if v.record.conversation_id
            )
        self.conversations.set_assistants(await self.starter.refresh())
        self.conversations.set_rows([ConversationRow(r.conversation, r.snippet) for r in listed])
        if chosen is not None:
            self.select(chosen, quietly=True)
        self.busy_changed()
        self.loaded.emit()

    def open_latest(self) -> None:
        """Show the most recently active conversation, when none is chosen yet."""
        if self.current_id is None and self.conversations.rowCount():
            self.list_view.setCurrentIndex(self.conversations.index(0, 0))

    def schedule_reload(self) -> None:
        """Read the list again soon (one read at a time; a change during a read reads again)."""
        if self._reload is None or self._reload.done():
            self._reload = self.jobs.start(self._reload_until_settled())
        else:
            self._stale = True

    async def _reload_until_settled(self) -> None:
        self._stale = True
        while self._stale:
            self._stale = False
            await self.load()

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        conversation = self.conversations.conversation(current.row())
        if conversation is not None and conversation.id != self.current_id:
            self.jobs.start(self.open_conversation(conversation.id))

    def select(self, conversation_id: str, *, quietly: bool = False) -> bool:
        """Choose a listed conversation (``False`` if it is not listed); ``quietly`` only
        marks it (it is shown already)."""
        row = self.conversations.row_of(conversation_id)
        if row < 0:
            return False
        selection = self.list_view.selectionModel()
        blocked = selection.blockSignals(True) if quietly else False
        self.list_view.setCurrentIndex(self.conversations.index(row, 0))
        if quietly:
            selection.blockSignals(blocked)
        return True

    async def open_conversation(self, conversation_id: str) -> None:
        """Show a conversation's transcript."""
        if self.presenter.chat is None:
            return
        self.presenter.current_id = conversation_id  # chosen now: its buttons apply at once
        self.busy_changed()
        opened = await self.presenter.open(conversation_id)
        if opened is None:
            return  # the user chose another one meanwhile
        self.pane.show_page(conversation_id, opened.page)
        self.busy_changed()
        self.transcript_loaded.emit(conversation_id)
        await self._show_choices(opened.conversation)

    async def _load_older(self, conversation_id: str, before_id: str) -> None:
        try:
            page = await self.presenter.older(conversation_id, before_id)
        except BaseException:
            self.messages.fetch_failed()
            raise
        self.pane.prepend(conversation_id, page)
        self.older_loaded.emit(len(page.messages))

    # -- provider and model --------------------------------------------------------------------

    async def _show_choices(self, conversation: Conversation) -> None:
        """Put the providers (the conversation's chosen) and its model in the composer."""
        choices = await self.presenter.choices(conversation)
        if choices is None:
            return
        config = choices.config
        self._choosing = True
        try:
            self.provider_box.clear()
            for choice in choices.providers:
                self.provider_box.addItem(inert(choice.name, limit=60), choice.id)
            self.provider_box.setCurrentIndex(choices.chosen)
            self.model_box.clear()
            if config is not None:
                self.model_box.addItem(inert(config.model, limit=80))
                line = self.model_box.lineEdit()
                if line is not None:  # an editable box shows its line's placeholder
                    line.setPlaceholderText(f"default: {inert(config.model, limit=60)}")
            self.model_box.setEditText(inert(conversation.model or "", limit=80))
        finally:
            self._choosing = False
        self.busy_changed()
        self.jobs.start(self.sample_chip.consider(config, self.messages.rowCount() == 0))
        self.choices_loaded.emit()
        if config is not None:
            self.jobs.start(self._list_models(conversation.id, config.id))

    async def _list_models(self, conversation_id: str, provider_id: str) -> None:
        """Offer the models the provider lists (a provider without a list: type one)."""
        models = await self.presenter.models_of(conversation_id, provider_id)
        if models is None or self.provider_box.currentData() != provider_id:
            return
        self._choosing = True
        try:
            typed = self.model_box.currentText()
            known = {self.model_box.itemText(i) for i in range(self.model_box.count())}
            for model in models:
                shown = inert(model, limit=80)
                if shown not in known:
                    self.model_box.addItem(shown)
                    known.add(shown)
            self.model_box.setEditText(typed)
        finally:
            self._choosing = False
        self.choices_loaded.emit()

    async def _provider_chosen(self) -> None:
        provider_id = self.provider_box.currentData()
        if self._choosing or not isinstance(provider_id, str):
            return
        saved = await self.presenter.choose_provider(provider_id, self.provider_box.currentText())
        if saved is not None:
            await self._show_choices(saved)

    async def _model_chosen(self) -> None:
        if not self._choosing:
            provider = self.provider_box.currentData()
            await self.presenter.choose_model(
                self.model_box.currentText(), provider if isinstance(provider, str) else None
            )

    # -- conversations -------------------------------------------------------------------------

    async def new_conversation(self, assistant: str | None = None) -> str | None:
        """Start a conversation with the default provider (or from the ``assistant`` of that
        name: its prompt, provider, model and tools) and show it; its id."""
        try:
            if assistant is None:
                conversation = await self.presenter.create()
            else:
                conversation = await self.starter.start(assistant)
                if conversation is not None:
                    self.presenter.current_id = conversation.id
        except KnownError as exc:
            self.notice_bar.show_text(error_text(exc), (exc.remedy, exc.subject))
            return None
        if conversation is None:
            return None
        self.notice_bar.show_text(None)
        self.search_field.clear()
        self.pane.show_page(conversation.id, None)
        await self.load()
        self.composer.setFocus()
        self.transcript_loaded.emit(conversation.id)
        await self._show_choices(conversation)
        return conversation.id

    async def rename_interactively(self) -> None:
        """Ask for a new title for the chosen conversation."""
        conversation_id = self.current_id
        if self.presenter.chat is None or conversation_id is None:
            return
        current = self.conversations.conversation(self.conversations.row_of(conversation_id))
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Rename conversation")
        dialog.setLabelText("Title:")
        dialog.setTextValue(current.title if current is not None else "")
        if await wait_dialog(dialog, self.dialog_opened.emit) != QDialog.DialogCode.Accepted:
            return
        await self.rename(conversation_id, dialog.textValue())

    async def rename(self, conversation_id: str, title: str) -> None:
        """Give a conversation a new title."""
        await self.presenter.rename(conversation_id, title)
        await self.load()

    async def delete_interactively(self) -> None:
        """Delete the chosen conversation after a confirmation."""
        conversation_id = self.current_id
        if self.presenter.chat is None or conversation_id is None:
            return
        current = self.conversations.conversation(self.conversations.row_of(conversation_id))
        title = inert(current.title if current else conversation_id, limit=80)
        question = f"Delete “{title}” and its messages? Tasks it started stay in the Tasks list."
        if not await confirm(
            self, "Delete conversation", question, "Delete", self.dialog_opened.emit
        ):
            return
        await self.delete(conversation_id)

    async def delete(self, conversation_id: str) -> None:
        """Delete a conversation with *Undo* (see :meth:`ConversationPresenter.delete`)."""
        if await self.presenter.delete(conversation_id) is None:
            return
        if self.messages.conversation_id == conversation_id:
            self.pane.show_page(None, None)
        await self.load()

    def undo_delete(self) -> None:
        """Bring back the conversation deleted last (while its undo time runs)."""
        conversation = self.presenter.undo()
        if conversation is not None:
            self.jobs.start(self.show_conversation(conversation.id))

    def show_undo(self, conversation: Conversation | None) -> None:
        """Offer *Undo* for a deletion (``None``: hide it)."""
        if conversation is not None:
            self.undo_label.setText(f"Deleted “{inert(conversation.title, limit=80)}”.")
        for widget in (self.undo_label, self.undo_button):
            widget.setVisible(conversation is not None)
        self.undo_button.setEnabled(conversation is not None)

    def deleted_for_good(self, conversation_id: str) -> None:
        """A deleted conversation is gone (its undo time ran out)."""
        self.deletion_done.emit(conversation_id)

    async def show_conversation(self, conversation_id: str) -> None:
        """Choose a conversation (the search is cleared when it hides it)."""
        if self.conversations.row_of(conversation_id) < 0:
            self.search_field.clear()
            await self.load()
        if not self.select(conversation_id):
            raise KnownError("That conversation was deleted.", code="not_found")

    async def export_interactively(self) -> None:
        """Ask where to save the shown conversation, then save it (Markdown or JSON, by the
        name's suffix or the chosen filter)."""
        conversation_id = self.current_id
        if self.presenter.chat is None or conversation_id is None:
            return
        # The title as stored now (the list may not have read a title the first turn gave).
        try:
            shown: Conversation | None = await self.presenter.chat.get(conversation_id)
        except KnownError:
            shown = self.presenter.shown
        dialog = QFileDialog(self, "Export conversation")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters(EXPORT_FILTERS)
        dialog.setDefaultSuffix("md")
        dialog.filterSelected.connect(
            lambda chosen: dialog.setDefaultSuffix("json" if "json" in chosen else "md")
        )
        dialog.selectFile(file_name(shown.title if shown else "conversation") + ".md")
        dialog.setAccessibleName("Export conversation")
        if await wait_dialog(dialog, self.dialog_opened.emit) != QDialog.DialogCode.Accepted:
            return
        [chosen] = dialog.selectedFiles()
        await self.export_to(Path(chosen), conversation_id)

    async def export_to(self, path: Path, conversation_id: str | None = None) -> bool:
        """Save a conversation (the shown one) to ``path``, whole or not at all: JSON for a
        ``.json`` name, else Markdown. Says where; a failure is told above the transcript.
        Whether it was saved."""
        conversation_id = conversation_id or self.current_id
        if self.presenter.chat is None or conversation_id is None:
            return False
        fmt = "json" if path.suffix.lower() == ".json" else "md"
        try:
            await self.presenter.export(conversation_id, path, fmt)
        except KnownError as exc:
            self.notice_bar.show_text(error_text(exc))
            self.report.emit(error_text(exc))
            self.exported.emit("")
            return False
        self.notice_bar.show_text(None)
        self.exported.emit(str(path))
        return True

    def list_menu(self) -> QMenu | None:
        """The chosen conversation's context menu in the list: rename, export, delete."""
        if self.presenter.chat is None or self.current_id is None:
            return None
        menu = QMenu(self.list_view)
        menu.setAccessibleName("Conversation actions")
        for words, button in (
            ("Rename…", self.rename_button),
            ("Export conversation…", self.export_button),
            ("Delete…", self.delete_button),
        ):
            action = menu.addAction(words)
            action.setEnabled(button.isEnabled())
            action.triggered.connect(lambda _c=False, b=button: b.click())
        return menu

    def _show_list_menu(self, at: QPoint) -> None:
        index = self.list_view.indexAt(at)
        if index.isValid():
            self.list_view.setCurrentIndex(index)  # the conversation right-clicked is chosen
        else:
            at = self.list_view.visualRect(self.list_view.currentIndex()).center()
        menu = self.list_menu()
        if menu is None:
            return
        if self._list_menu is not None:
            self._list_menu.deleteLater()
        self._list_menu = menu
        menu.popup(self.list_view.viewport().mapToGlobal(at))
        self.menu_opened.emit(menu)

    # -- turns ---------------------------------------------------------------------------------

    async def send(self) -> None:
        """Send what is in the message box to the shown conversation (a new one if none)."""
        text = self.composer.toPlainText()
        if self.presenter.chat is None or not (text.strip() or self.files.files):
            return
        conversation_id = self.current_id or await self.new_conversation()
        if conversation_id is None:
            return  # no provider: the notice says so, the text stays in the box
        self.composer.clear()
        self.pane.stick.at_bottom = True
        attached = self.picker.take_attachments()
        files = self.files.take()
        try:
            result = await self.presenter.send(
                conversation_id, text, attachments=attached, files=files
            )
        except KnownError as exc:
            if not self.composer.toPlainText():
                self.composer.setPlainText(text)  # nothing was stored: nothing is lost
                self.picker.attach(*attached)
            if not self.files.files:
                self.files.add(files)
            self.notice_bar.show_text(error_text(exc), (exc.remedy, exc.subject))
            return
        self.notice_bar.show_text(None)
        if result is not None and result.error:
            self.notice_bar.show_failure(result, self.report.emit)

    async def continue_with_result(self, conversation_id: str | None = None) -> None:
        """Give the background results stored since the model last spoke to the model, and
        let the conversation go on (the shown one, or ``conversation_id``, which is shown)."""
        if self.presenter.chat is None:
            return
        if conversation_id is not None and conversation_id != self.current_id:
            await self.show_conversation(conversation_id)
        conversation_id = conversation_id or self.current_id
        if conversation_id is None:
            return
        self.pane.stick.at_bottom = True
        result = await self.presenter.continue_with_result(conversation_id)
        if result is not None and result.error:
            self.notice_bar.show_failure(result, self.report.emit)

    def stop_reply(self) -> None:
        """Stop the reply being written in the shown conversation (its text is kept)."""
        if self.current_id is not None:
            self.jobs.start(self.presenter.stop_reply(self.current_id))

    def copy_last_reply(self) -> bool:
        """Put the last reply's text on the clipboard; whether there was one."""
        return self.pane.copy_last_reply()

    # -- the presenter's and the host's news ---------------------------------------------------

    def say(self, text: str) -> None:
        """A short message for the status line."""
        self.report.emit(text)

    def busy_changed(self, ended: str | None = None) -> None:
        """Enable what can be pressed now; ``ended``: a conversation whose turn just ended."""
        has_chat = self.presenter.chat is not None
        chosen = self.current_id is not None
        busy = self.presenter.busy()
        self.new_button.setEnabled(has_chat)
        self.rename_button.setEnabled(has_chat and chosen)
        self.export_button.setEnabled(has_chat and chosen)
        self.delete_button.setEnabled(has_chat and chosen and not busy)
        self.send_button.setEnabled(has_chat)
        self.composer.setEnabled(has_chat)
        self.stop_button.setEnabled(busy)
        choosing = has_chat and chosen and self.provider_box.count() > 0
        for box in (self.provider_box, self.model_box):
            box.setEnabled(choosing)
            box.setVisible(choosing)  # no empty boxes before there is anything to choose
        can_continue = has_chat and not busy and self.messages.continuable()
        self.continue_button.setEnabled(can_continue)
        self.continue_changed.emit(can_continue)
        self.system_button.setEnabled(has_chat and chosen)
        if ended is not None and ended == self.current_id:
            self.jobs.start(self.rewrites.refresh_versions(ended))
            self.turn_ended.emit(ended)

    def _on_appended(self, event: MessageDidAppend) -> None:
        if event.conversation_id == self.messages.conversation_id:
            self.messages.append(event.message)
            if event.message.role is Role.TOOL and event.message.tool_round_id:
                self.jobs.start(self._refresh_rounds(event.conversation_id))
            self.busy_changed()
        if event.message.role is Role.USER or event.conversation_id != self.current_id:
            self.schedule_reload()  # a new title, a new order

    async def _refresh_rounds(self, conversation_id: str) -> None:
        rounds = await self.presenter.rounds(conversation_id)
        if conversation_id == self.messages.conversation_id:
            self.messages.set_rounds(rounds)
            self.rounds_loaded.emit()

    # -- closing -------------------------------------------------------------------------------

    def close_view(self) -> None:
        """Stop listening to the host."""
        self.presenter.close()
        for unsubscribe in self._unsubscribers:
            unsubscribe()
        self._unsubscribers = []

    async def stop(self) -> None:
        """Stop listening and end the work this view started (a deletion waiting for its
        undo time is done now)."""
        self.close_view()
        with contextlib.suppress(KnownError):
            await self.presenter.commit_deletes()
        await self.jobs.cancel_all()
        if self._reload is not None:
            with contextlib.suppress(BaseException):
                await self._reload
