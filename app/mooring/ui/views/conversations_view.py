"""The Conversations view: the conversation list, the transcript and the composer.

A thin view over the chat service (``HostApi.chat``): every button hands a coroutine to the
view's :class:`Jobs`; the transcript follows the service's events (``MessageDidAppend``,
``ReplyDidStream``, ``TurnDidEnd``, and ``TaskDidChange`` for the tool round cards). Nothing
here decides what is stored or sent. Long transcripts load a page at a time (the newest first,
older ones as the reader scrolls up); a deleted conversation can be brought back with *Undo*
for a few seconds before it is deleted for real.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFont, QGuiApplication, QKeyEvent, QKeySequence, QPainter, QShortcut
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
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from mooring.core.chat import ProviderConfig, failure_remedy
from mooring.core.conversation import Conversation, Role
from mooring.core.errors import KnownError, Remedy
from mooring.core.events import (
    MessageDidAppend,
    ReplyDidStream,
    TaskDidChange,
    TurnDidEnd,
    TurnDidStart,
)
from mooring.ui.models.conversations import (
    ConversationListModel,
    ConversationRow,
    MessageListModel,
    MessageRole,
    render,
)
from mooring.ui.qt_async import Jobs, confirm, error_text, wait_dialog
from mooring.ui.remedies import remedy_action, remedy_words
from mooring.ui.text import inert
from mooring.ui.widgets.composer_picker import ComposerPicker

if TYPE_CHECKING:
    from mooring.core.chat import TurnResult
    from mooring.core.host_api import ChatApi, HostApi

_Index = QModelIndex | QPersistentModelIndex

PADDING = 8
SEARCH_DELAY_MS = 250
PAGE_SIZE = 200
"""Messages read at a time: the newest page when a conversation opens, then older ones."""
UNDO_MS = 10_000
"""How long a deleted conversation can be brought back (then it is deleted for real)."""
NO_CHAT = (
    "Chat is not available here: this window has no conversation storage. "
    "Tools still run from the palette (Ctrl+K)."
)
EXPORT_FILTERS = ["Markdown (*.md)", "JSON (*.json)"]
"""The export's formats, as the CLI's ``conversations export`` writes them."""


def _file_name(title: str) -> str:
    """A file name suggested for a conversation titled ``title`` (hostile text: only letters,
    digits, spaces, dots, dashes and underscores are kept)."""
    name = re.sub(r"[^\w .-]+", "", title, flags=re.ASCII).strip(" .")[:60]
    return name or "conversation"


class MessageDelegate(QStyledItemDelegate):
    """Paints a message: who speaks, then the text (Markdown without HTML, or plain), wrapped
    to the transcript's width.

    A laid-out message is kept (by its text and width) for the next size query and paint: a
    streamed reply re-lays out every row of the page, and rendering them all again for each
    piece that arrives would stall the window."""

    CACHED = 600
    """Laid-out messages kept (more than a page, so a relayout finds every row)."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view
        self._documents: OrderedDict[tuple[str, bool, int], Any] = OrderedDict()

    def _document(self, index: _Index, width: int) -> Any:
        body = str(index.data(MessageRole.BODY) or "")
        markdown = bool(index.data(MessageRole.MARKDOWN))
        key = (body, markdown, max(width - 2 * PADDING, 40))
        document = self._documents.get(key)
        if document is not None:
            self._documents.move_to_end(key)
            return document
        document = render(body, markdown=markdown)
        document.setTextWidth(key[2])
        self._documents[key] = document
        if len(self._documents) > self.CACHED:
            self._documents.popitem(last=False)
        return document

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # Qt API
        width = self._view.viewport().width() or option.rect.width() or 600
        document = self._document(index, width)
        header = option.fontMetrics.height()
        return QSize(width, int(document.size().height()) + header + 2 * PADDING)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        rect = option.rect
        painter.save()
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(rect, option.palette.alternateBase())
        if index.data(MessageRole.CARD) is not None:
            painter.setPen(option.palette.mid().color())
            painter.drawRoundedRect(rect.adjusted(2, 2, -3, -3), 4, 4)
            painter.setPen(option.palette.text().color())
        font = QFont(option.font)
        font.setBold(True)
        painter.setFont(font)
        header = option.fontMetrics.height()
        painter.drawText(
            rect.adjusted(PADDING, PADDING, -PADDING, 0),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
            str(index.data(MessageRole.SPEAKER) or ""),
        )
        document = self._document(index, rect.width())
        painter.translate(rect.left() + PADDING, rect.top() + PADDING + header)
        document.drawContents(painter)
        painter.restore()


class Composer(QPlainTextEdit):
    """The message box: Enter sends, Shift+Enter starts a new line."""

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # Qt API
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submitted.emit()
            return
        super().keyPressEvent(event)


class _StickToBottom(QObject):
    """Keeps the transcript at the newest message while the reader is there; a reader who
    scrolled up keeps their place while the reply streams."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._bar = view.verticalScrollBar()
        self.at_bottom = True
        self._bar.valueChanged.connect(self._on_value)
        self._bar.rangeChanged.connect(self._on_range)

    def _on_value(self, value: int) -> None:
        self.at_bottom = value >= self._bar.maximum() - 4

    def _on_range(self, _low: int, high: int) -> None:
        if self.at_bottom:
            self._bar.setValue(high)


class ConversationsView(QWidget):
    """The "Conversations" view."""

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

    def __init__(self, host: HostApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.chat: ChatApi | None = host.chat
        self.setObjectName("conversations-view")
        self.setAccessibleName("Conversations")
        self.jobs = Jobs(self.report.emit)
        self.current_id: str | None = None
        self._busy: set[str] = set()
        """Conversations whose turn runs (told by the host's events: this window's turns and
        any other face's alike)."""
        self._reload: asyncio.Future[None] | None = None
        self._search_generation = 0
        self._stale = False
        self.undo_ms = UNDO_MS
        self._pending_deletes: dict[str, tuple[Conversation, QTimer]] = {}
        self._choosing = False
        self._shown: Conversation | None = None

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
        undo_row = QHBoxLayout()
        self.undo_label = QLabel(side)
        self.undo_label.setAccessibleName("Deleted conversation")
        self.undo_label.setTextFormat(Qt.TextFormat.PlainText)
        self.undo_label.setWordWrap(True)
        undo_row.addWidget(self.undo_label, stretch=1)
        self.undo_button = self._button("Undo", side, undo_row)
        self.undo_button.setToolTip("Bring the deleted conversation back")
        side_layout.addLayout(undo_row)
        self._set_undo_visible(False)

        main = QWidget(self.splitter)
        main_layout = QVBoxLayout(main)
        main_layout.setContentsMargins(0, 0, 0, 0)
        self.notice = QLabel(main)
        self.notice.setObjectName("chat-notice")
        self.notice.setAccessibleName("Chat notice")
        self.notice.setTextFormat(Qt.TextFormat.PlainText)
        self.notice.setWordWrap(True)
        self.notice.setVisible(False)
        self.notice_button = QPushButton(main)
        self.notice_button.setObjectName("chat-notice-action")
        self.notice_button.setVisible(False)
        self.notice_button.clicked.connect(self._on_notice_action)
        self._notice_remedy: tuple[Remedy, tuple[str, ...]] | None = None
        notice_row = QHBoxLayout()
        notice_row.addWidget(self.notice, stretch=1)
        notice_row.addWidget(self.notice_button)
        main_layout.addLayout(notice_row)
        self.transcript = QListView(main)
        self.transcript.setObjectName("transcript")
        self.transcript.setAccessibleName("Transcript")
        self.transcript.setModel(self.messages)
        self.delegate = MessageDelegate(self.transcript)
        self.transcript.setItemDelegate(self.delegate)
        self.transcript.setWordWrap(True)
        self.transcript.setResizeMode(QListView.ResizeMode.Adjust)
        self.transcript.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        # A page at a time (PAGE_SIZE messages), so one layout pass stays short; a single pass
        # also keeps row positions exact when an older page is inserted above the reader.
        self.transcript.setLayoutMode(QListView.LayoutMode.SinglePass)
        self.transcript.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.stick = _StickToBottom(self.transcript)
        self.transcript.installEventFilter(self)
        main_layout.addWidget(self.transcript, stretch=1)
        card_row = QHBoxLayout()
        self.copy_button = self._button("Copy message", main, card_row)
        self.copy_button.setToolTip(
            "Copy the chosen message's text (Ctrl+C in the transcript; Ctrl+Shift+C copies "
            "the last reply)"
        )
        self.card_label = QLabel(main)
        self.card_label.setAccessibleName("Tool round")
        self.card_label.setTextFormat(Qt.TextFormat.PlainText)
        # Long words never widen the window: the label is cut, its tooltip-free text stays.
        self.card_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        card_row.addWidget(self.card_label, stretch=1)
        self.arguments_button = self._button("Show arguments", main, card_row)
        self.arguments_button.setToolTip("Show or hide the call's arguments (Space)")
        self.open_task_button = self._button("Open task", main, card_row)
        self.open_task_button.setToolTip("Show this call's task card in the Tasks view")
        main_layout.addLayout(card_row)
        self.composer = Composer(main)
        self.composer.setObjectName("composer")
        self.composer.setAccessibleName("Message")
        self.composer.setPlaceholderText("Message (Enter sends, Shift+Enter for a new line)")
        self.composer.setTabChangesFocus(True)
        self.composer.setMaximumHeight(120)
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
        choice_row.addStretch(1)
        main_layout.addLayout(choice_row)
        main_layout.addWidget(self.picker.row)
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

        self.new_button.clicked.connect(lambda: self.jobs.start(self.new_conversation()))
        self.rename_button.clicked.connect(lambda: self.jobs.start(self.rename_interactively()))
        self.delete_button.clicked.connect(lambda: self.jobs.start(self.delete_interactively()))
        self.export_button.clicked.connect(lambda: self.jobs.start(self.export_interactively()))
        self.copy_button.clicked.connect(self.copy_message)
        self.send_button.clicked.connect(self._on_send)
        self.composer.submitted.connect(self._on_send)
        self.stop_button.clicked.connect(self.stop_reply)
        self.continue_button.clicked.connect(lambda: self.jobs.start(self.continue_with_result()))
        self.undo_button.clicked.connect(self.undo_delete)
        self.arguments_button.clicked.connect(self.toggle_arguments)
        self.open_task_button.clicked.connect(self._on_open_task)
        self.provider_box.activated.connect(lambda _i: self.jobs.start(self._provider_chosen()))
        self.model_box.activated.connect(lambda _i: self.jobs.start(self._model_chosen()))
        model_line = self.model_box.lineEdit()
        assert model_line is not None  # an editable combo box has one
        model_line.editingFinished.connect(lambda: self.jobs.start(self._model_chosen()))
        self.messages.older_wanted.connect(
            lambda conversation_id, before: self.jobs.start(
                self._load_older(conversation_id, before)
            )
        )
        self.transcript.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.transcript.selectionModel().currentChanged.connect(
            lambda _c, _p: self._update_card_bar()
        )
        self.messages.dataChanged.connect(lambda _t, _b, _r: self._update_card_bar())
        self.messages.modelReset.connect(self._update_card_bar)
        self.messages.rowsInserted.connect(lambda _p, _f, _l: self._update_card_bar())
        stop_key = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        stop_key.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        stop_key.activated.connect(self.stop_reply)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.schedule_reload)
        self.search_field.textChanged.connect(lambda _t: self._search_timer.start())
        self.list_view.selectionModel().currentChanged.connect(self._on_current)
        self.messages.dataChanged.connect(
            lambda top, _b, _r: self.delegate.sizeHintChanged.emit(top)
        )

        events = host.events
        self._unsubscribers = [
            events.on(MessageDidAppend, self._on_appended),
            events.on(ReplyDidStream, self._on_streamed),
            events.on(TurnDidStart, self._on_turn_started),
            events.on(TurnDidEnd, self._on_turn_ended),
            events.on(TaskDidChange, self._on_task_changed),
        ]
        if self.chat is None:
            self.show_notice(NO_CHAT)
        self._update_buttons()
        self._update_card_bar()

    @staticmethod
    def _button(words: str, parent: QWidget, row: QHBoxLayout) -> QPushButton:
        button = QPushButton(words, parent)
        button.setAccessibleName(words)
        row.addWidget(button)
        return button

    # -- reading -------------------------------------------------------------------------------

    async def load(self) -> None:
        """Read the conversations (or the search's matches), keeping the chosen one chosen."""
        if self.chat is None:
            self.loaded.emit()
            return
        self._search_generation += 1
        generation = self._search_generation
        words = self.search_field.text().strip()
        if words:
            hits = await self.chat.search(words)
            rows = [ConversationRow(h.conversation, h.snippet) for h in hits]
        else:
            rows = [ConversationRow(c) for c in await self.chat.list_conversations()]
        rows = [r for r in rows if r.conversation.id not in self._pending_deletes]
        if generation != self._search_generation:
            return  # a newer search is on its way
        chosen = self.current_id
        self.conversations.set_rows(rows)
        if chosen is not None and (row := self.conversations.row_of(chosen)) >= 0:
            self._select_row(row)
        self._update_buttons()
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

    def _select_row(self, row: int) -> None:
        selection = self.list_view.selectionModel()
        blocked = selection.blockSignals(True)
        self.list_view.setCurrentIndex(self.conversations.index(row, 0))
        selection.blockSignals(blocked)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        conversation = self.conversations.conversation(current.row())
        if conversation is not None and conversation.id != self.current_id:
            self.jobs.start(self.open_conversation(conversation.id))

    def select(self, conversation_id: str) -> bool:
        """Choose a listed conversation (``False`` if it is not listed)."""
        row = self.conversations.row_of(conversation_id)
        if row < 0:
            return False
        self.list_view.setCurrentIndex(self.conversations.index(row, 0))
        return True

    async def open_conversation(self, conversation_id: str) -> None:
        """Show a conversation's transcript."""
        if self.chat is None:
            return
        self.current_id = conversation_id
        self._update_buttons()
        page, rounds, conversation = await asyncio.gather(
            self.chat.messages_before(conversation_id, None, limit=PAGE_SIZE),
            self.chat.rounds(conversation_id),
            self.chat.get(conversation_id),
        )
        if self.current_id != conversation_id:
            return  # the user chose another one meanwhile
        self.stick.at_bottom = True
        self.messages.show(conversation_id, page, rounds, has_older=len(page) >= PAGE_SIZE)
        self.transcript.scrollToBottom()
        self._update_buttons()
        self.transcript_loaded.emit(conversation_id)
        await self._show_choices(conversation)

    # -- older pages ---------------------------------------------------------------------------

    def _on_scrolled(self, value: int) -> None:
        bar = self.transcript.verticalScrollBar()
        self.messages.reader_at_top = value <= bar.minimum() and bar.maximum() > bar.minimum()
        root = QModelIndex()
        if self.messages.canFetchMore(root):
            self.messages.fetchMore(root)

    async def _load_older(self, conversation_id: str, before_id: str) -> None:
        if self.chat is None:
            return
        try:
            page = await self.chat.messages_before(conversation_id, before_id, limit=PAGE_SIZE)
            rounds = await self.chat.rounds(conversation_id) if page else []
        except BaseException:
            self.messages.fetch_failed()
            raise
        view = self.transcript
        bar = view.verticalScrollBar()
        # Keep the reader's place: the message at the top of the view stays where it is.
        anchor = QPersistentModelIndex(view.indexAt(QPoint(PADDING, PADDING)))
        offset = view.visualRect(anchor).top() if anchor.isValid() else 0
        wanted = {m.tool_round_id for m in page if m.tool_round_id}
        self.messages.prepend(
            conversation_id,
            page,
            [r for r in rounds if r.round.id in wanted],
            has_older=len(page) >= PAGE_SIZE,
        )
        view.doItemsLayout()
        if anchor.isValid():
            bar.setValue(bar.value() + view.visualRect(anchor).top() - offset)
        self.older_loaded.emit(len(page))

    # -- provider and model --------------------------------------------------------------------

    async def _show_choices(self, conversation: Conversation) -> None:
        """Put the providers (the conversation's chosen) and its model in the composer."""
        if self.chat is None:
            return
        self._shown = conversation
        providers = await self.chat.provider_choices()
        if self.current_id != conversation.id:
            return
        self._choosing = True
        try:
            self.provider_box.clear()
            for choice in providers:
                self.provider_box.addItem(inert(choice.name, limit=60), choice.id)
            chosen = self.provider_box.findData(conversation.provider_id)
            if chosen < 0 and conversation.provider_id is None and providers:
                chosen = 0
            self.provider_box.setCurrentIndex(chosen)
            config: ProviderConfig | None = providers[chosen] if chosen >= 0 else None
            self.model_box.clear()
            if config is not None:
                self.model_box.addItem(inert(config.model, limit=80))
                line = self.model_box.lineEdit()
                if line is not None:  # an editable box shows its line's placeholder
                    line.setPlaceholderText(f"default: {inert(config.model, limit=60)}")
            self.model_box.setEditText(inert(conversation.model or "", limit=80))
        finally:
            self._choosing = False
        self._update_buttons()
        self.choices_loaded.emit()
        if config is not None:
            self.jobs.start(self._list_models(conversation.id, config.id))

    async def _list_models(self, conversation_id: str, provider_id: str) -> None:
        """Offer the models the provider lists (a provider without a list: type one)."""
        if self.chat is None:
            return
        try:
            models = await self.chat.models_of(provider_id)
        except KnownError:
            return  # the box stays editable; sending says what is wrong
        if self.current_id != conversation_id or self.provider_box.currentData() != provider_id:
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
        if self._choosing or self.chat is None or self.current_id is None:
            return
        provider_id = self.provider_box.currentData()
        if not isinstance(provider_id, str):
            return
        # A new provider starts from its own default model.
        saved = await self.chat.configure(self.current_id, provider=provider_id, model=None)
        self.report.emit(f"This conversation now uses {self.provider_box.currentText()}.")
        await self._show_choices(saved)

    async def _model_chosen(self) -> None:
        if self._choosing or self.chat is None or self._shown is None:
            return
        if self._shown.id != self.current_id:
            return
        model = " ".join(self.model_box.currentText().split()) or None
        if model == self._shown.model:
            return
        if model is not None:
            saved = await self.chat.configure(self._shown.id, model=model)
        else:  # the provider's default (configure() keeps a model it is not given)
            provider = self._shown.provider_id or self.provider_box.currentData()
            saved = await self.chat.configure(self._shown.id, provider=provider, model=None)
        self._shown = saved
        self.report.emit(
            f"This conversation now asks {inert(model, limit=60)}."
            if model
            else "This conversation now asks the provider's default model."
        )

    # -- conversations -------------------------------------------------------------------------

    async def new_conversation(self) -> str | None:
        """Start a conversation with the default provider and show it; its id."""
        if self.chat is None:
            return None
        try:
            conversation = await self.chat.create()
        except KnownError as exc:
            self.show_notice(error_text(exc), (exc.remedy, exc.subject))
            return None
        self.show_notice(None)
        self.search_field.clear()
        self.current_id = conversation.id
        self.messages.show(conversation.id, [])
        await self.load()
        self.composer.setFocus()
        self.transcript_loaded.emit(conversation.id)
        await self._show_choices(conversation)
        return conversation.id

    async def rename_interactively(self) -> None:
        """Ask for a new title for the chosen conversation."""
        if self.chat is None or self.current_id is None:
            return
        conversation_id = self.current_id
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
        if self.chat is None:
            return
        renamed = await self.chat.rename(conversation_id, title)
        self.report.emit(f"Renamed to {inert(renamed.title, limit=80)}.")
        await self.load()

    async def delete_interactively(self) -> None:
        """Delete the chosen conversation after a confirmation."""
        if self.chat is None or self.current_id is None:
            return
        conversation_id = self.current_id
        current = self.conversations.conversation(self.conversations.row_of(conversation_id))
        title = inert(current.title if current else conversation_id, limit=80)
        question = f"Delete “{title}” and its messages? Tasks it started stay in the Tasks list."
        if not await confirm(
            self, "Delete conversation", question, "Delete", self.dialog_opened.emit
        ):
            return
        await self.delete(conversation_id)

    async def delete(self, conversation_id: str) -> None:
        """Delete a conversation (not while a reply is being written in it), with *Undo*:
        it leaves the list at once and is deleted for real when the undo time runs out (or
        the window closes) — until then nothing is lost."""
        if self.chat is None:
            return
        conversation = await self.chat.get(conversation_id)
        if conversation.id in self._busy:
            raise KnownError(
                "A reply is being written in this conversation; stop it first.", code="busy"
            )
        # Only one deletion waits for its undo at a time: an earlier one is done now.
        for earlier in list(self._pending_deletes):
            await self._delete_for_real(earlier)
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(self.undo_ms)
        timer.timeout.connect(lambda: self.jobs.start(self._delete_for_real(conversation.id)))
        self._pending_deletes[conversation.id] = (conversation, timer)
        timer.start()
        if self.current_id == conversation_id:
            self.current_id = None
            self._shown = None
            self.messages.show(None, [])
        title = inert(conversation.title, limit=80)
        self.undo_label.setText(f"Deleted “{title}”.")
        self._set_undo_visible(True)
        self.report.emit(f"Deleted {title}. Undo brings it back.")
        await self.load()

    def undo_delete(self) -> None:
        """Bring back the conversation deleted last (while its undo time runs)."""
        if not self._pending_deletes:
            return
        conversation_id = next(reversed(self._pending_deletes))
        conversation, timer = self._pending_deletes.pop(conversation_id)
        timer.stop()
        timer.deleteLater()
        self._set_undo_visible(False)
        self.report.emit(f"Brought back {inert(conversation.title, limit=80)}.")
        self.jobs.start(self._reopen(conversation_id))

    async def _reopen(self, conversation_id: str) -> None:
        await self.load()
        self.select(conversation_id)

    async def show_conversation(self, conversation_id: str) -> None:
        """Choose a conversation (the search is cleared when it hides it)."""
        if self.conversations.row_of(conversation_id) < 0:
            self.search_field.clear()
            await self.load()
        if not self.select(conversation_id):
            raise KnownError("That conversation was deleted.", code="not_found")

    async def _delete_for_real(self, conversation_id: str) -> None:
        pending = self._pending_deletes.pop(conversation_id, None)
        if pending is None or self.chat is None:
            return  # brought back meanwhile
        conversation, timer = pending
        timer.stop()
        timer.deleteLater()
        if not self._pending_deletes:
            self._set_undo_visible(False)
        try:
            await self.chat.delete(conversation.id)
        except KnownError:
            # It came alive again (a reply is running in it): keep it, and show it again.
            self.schedule_reload()
            raise
        self.deletion_done.emit(conversation.id)

    async def commit_deletes(self) -> None:
        """Delete for real what is waiting for its undo time (the window is closing)."""
        for conversation_id in list(self._pending_deletes):
            await self._delete_for_real(conversation_id)

    def _set_undo_visible(self, visible: bool) -> None:
        self.undo_label.setVisible(visible)
        self.undo_button.setVisible(visible)
        self.undo_button.setEnabled(visible)

    # -- tool round cards and background results ------------------------------------------------

    def _current_card_row(self) -> int:
        index = self.transcript.currentIndex()
        if not index.isValid() or self.messages.card(index.row()) is None:
            return -1
        return index.row()

    def toggle_arguments(self) -> None:
        """Show or hide the arguments of the chosen tool round card."""
        row = self._current_card_row()
        if row >= 0:
            expanded = bool(self.messages.index(row, 0).data(MessageRole.EXPANDED))
            self.messages.set_expanded(row, not expanded)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt API
        """Space toggles the chosen card's arguments; Right shows them, Left hides them."""
        if watched is self.transcript and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.matches(QKeySequence.StandardKey.Copy):
                self.copy_message()
                return True
            row = self._current_card_row()
            if row >= 0 and not event.modifiers():
                if event.key() == Qt.Key.Key_Space:
                    self.toggle_arguments()
                    return True
                if event.key() in (Qt.Key.Key_Right, Qt.Key.Key_Left):
                    self.messages.set_expanded(row, event.key() == Qt.Key.Key_Right)
                    return True
                if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                    self._on_open_task()
                    return True
        return super().eventFilter(watched, event)

    def _on_open_task(self) -> None:
        row = self._current_card_row()
        card = self.messages.card(row)
        if card is not None and card.record_id is not None:
            self.show_task.emit(card.record_id)

    def copy_message(self) -> bool:
        """Put the chosen message's text, exactly as stored, on the clipboard; whether there
        was one."""
        index = self.transcript.currentIndex()
        text = index.data(MessageRole.TEXT) if index.isValid() else None
        if not text:
            return False
        QGuiApplication.clipboard().setText(text)
        self.report.emit("Message copied.")
        return True

    def copy_last_reply(self) -> bool:
        """Put the last reply's text on the clipboard; whether there was one."""
        text = self.messages.last_reply()
        if text is None:
            self.report.emit("No reply to copy yet.")
            return False
        QGuiApplication.clipboard().setText(text)
        self.report.emit("Last reply copied.")
        return True

    async def export_interactively(self) -> None:
        """Ask where to save the shown conversation, then save it (Markdown or JSON, by the
        name's suffix or the chosen filter)."""
        if self.chat is None or self.current_id is None:
            return
        conversation_id = self.current_id
        listed = self.conversations.conversation(self.conversations.row_of(conversation_id))
        shown = listed or self._shown
        title = shown.title if shown is not None else "conversation"
        dialog = QFileDialog(self, "Export conversation")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters(EXPORT_FILTERS)
        dialog.setDefaultSuffix("md")
        dialog.selectFile(_file_name(title) + ".md")
        dialog.setAccessibleName("Export conversation")
        if await wait_dialog(dialog, self.dialog_opened.emit) != QDialog.DialogCode.Accepted:
            return
        [chosen] = dialog.selectedFiles()
        fmt = "json" if chosen.lower().endswith(".json") else "md"
        await self.export(conversation_id, Path(chosen), fmt)

    async def export(self, conversation_id: str, path: Path, fmt: str) -> None:
        """Save a conversation's record to ``path`` (``md`` or ``json``, as the CLI's
        ``conversations export`` writes it)."""
        if self.chat is None:
            return
        text = await self.chat.export(conversation_id, fmt)
        try:
            await asyncio.to_thread(path.write_text, text, encoding="utf-8")
        except OSError as exc:
            raise KnownError(
                f"Could not save {path.name}: {exc.strerror or exc}.",
                hint="Choose another folder or name.",
            ) from exc
        self.report.emit(f"Conversation saved to {path}.")

    def _update_card_bar(self) -> None:
        index = self.transcript.currentIndex()
        self.copy_button.setEnabled(index.isValid() and bool(index.data(MessageRole.TEXT)))
        row = self._current_card_row()
        card = self.messages.card(row)
        # The card buttons only where there are cards (Space and Enter work on them anyway).
        any_cards = card is not None or bool(self.messages.round_ids())
        for widget in (self.card_label, self.arguments_button, self.open_task_button):
            widget.setVisible(any_cards)
        self.card_label.setText(
            f"Tool round: {card.server} · {card.tool} — {card.outcome}"[:200]
            if card is not None
            else "Choose a tool round in the transcript to see its arguments or its task."
        )
        expanded = row >= 0 and bool(self.messages.index(row, 0).data(MessageRole.EXPANDED))
        words = "Hide arguments" if expanded else "Show arguments"
        self.arguments_button.setText(words)
        self.arguments_button.setAccessibleName(words)
        self.arguments_button.setEnabled(card is not None)
        self.open_task_button.setEnabled(card is not None and card.record_id is not None)
        self._update_continue()

    def _update_continue(self) -> None:
        busy = self.chat is not None and self.current_id in self._busy
        can = self.chat is not None and not busy and self.messages.continuable()
        self.continue_button.setEnabled(can)
        self.continue_changed.emit(can)

    async def continue_with_result(self, conversation_id: str | None = None) -> None:
        """Give the background results stored since the model last spoke to the model, and
        let the conversation go on (the shown one, or ``conversation_id``, which is shown)."""
        if self.chat is None:
            return
        if conversation_id is not None and conversation_id != self.current_id:
            await self.show_conversation(conversation_id)
        conversation_id = conversation_id or self.current_id
        if conversation_id is None:
            return
        self.stick.at_bottom = True
        self._update_buttons(sending=True)
        try:
            result = await self.chat.continue_with_result(conversation_id)
        finally:
            self._update_buttons()
        if result.error:
            self._show_failure(result)

    async def _refresh_rounds(self, conversation_id: str) -> None:
        if self.chat is None:
            return
        rounds = await self.chat.rounds(conversation_id)
        if conversation_id == self.messages.conversation_id:
            self.messages.set_rounds(rounds)
            self.rounds_loaded.emit()

    # -- the composer --------------------------------------------------------------------------

    def _on_send(self) -> None:
        if self.composer.toPlainText().strip():
            self.jobs.start(self.send())

    async def send(self) -> None:
        """Send what is in the message box to the shown conversation (a new one if none)."""
        text = self.composer.toPlainText()
        if self.chat is None or not text.strip():
            return
        conversation_id = self.current_id or await self.new_conversation()
        if conversation_id is None:
            return  # no provider: the notice says so, the text stays in the box
        self.composer.clear()
        self.stick.at_bottom = True
        self._update_buttons(sending=True)
        attached = self.picker.take_attachments()
        try:
            result = await self.chat.send(conversation_id, text, attachments=attached)
        except KnownError as exc:
            if not self.composer.toPlainText():
                self.composer.setPlainText(text)  # nothing was stored: nothing is lost
                self.picker.attach(*attached)
            self.show_notice(error_text(exc), (exc.remedy, exc.subject))
            return
        finally:
            self._update_buttons()
        self.show_notice(None)
        if result.error:
            self._show_failure(result)

    def stop_reply(self) -> None:
        """Stop the reply being written in the shown conversation (its text is kept)."""
        if self.chat is not None and self.current_id is not None:
            self.jobs.start(self._stop_reply(self.current_id))

    async def _stop_reply(self, conversation_id: str) -> None:
        if self.chat is not None and await self.chat.stop(conversation_id):
            self.report.emit("Stopped.")

    def show_notice(
        self, text: str | None, remedy: tuple[Remedy | None, tuple[str, ...]] | None = None
    ) -> None:
        """A message above the transcript (``None`` hides it), with a button that does what
        ``remedy`` (and its subject) says, where the window has one."""
        self.notice.setText(text or "")
        self.notice.setVisible(bool(text))
        action = remedy_action(remedy[0]) if text and remedy is not None else None
        if action is not None and remedy is not None and remedy[0] is not None:
            self._notice_remedy = (remedy[0], remedy[1])
            self.notice_button.setText(action)
            self.notice_button.setAccessibleName(action.rstrip("…"))
        else:
            self._notice_remedy = None
        self.notice_button.setVisible(action is not None)
        self.notice_changed.emit(text or "")

    def _on_notice_action(self) -> None:
        if self._notice_remedy is not None:
            remedy, subject = self._notice_remedy
            self.remedy_requested.emit(remedy.value, subject[0] if subject else "")

    def _show_failure(self, result: TurnResult) -> None:
        """Say why a turn failed, with what to do in the window (never a command line)."""
        assert result.error is not None
        remedy = failure_remedy(result.error_kind)
        subject = (result.provider,) if result.provider else ()
        words = inert(result.error, limit=300)
        advice = remedy_words(remedy, subject)
        self.report.emit(words)
        if advice:
            self.show_notice(f"{words} {advice}", (remedy, subject))

    def _update_buttons(self, *, sending: bool = False) -> None:
        has_chat = self.chat is not None
        chosen = self.current_id is not None
        busy = sending or (self.chat is not None and self.current_id in self._busy)
        self.new_button.setEnabled(has_chat)
        self.rename_button.setEnabled(has_chat and chosen)
        self.export_button.setEnabled(has_chat and chosen)
        self.delete_button.setEnabled(has_chat and chosen and not busy)
        self.send_button.setEnabled(has_chat)
        self.composer.setEnabled(has_chat)
        self.stop_button.setEnabled(bool(busy))
        choosing = has_chat and chosen and self.provider_box.count() > 0
        for box in (self.provider_box, self.model_box):
            box.setEnabled(choosing)
            box.setVisible(choosing)  # no empty boxes before there is anything to choose
        can_continue = has_chat and not busy and self.messages.continuable()
        self.continue_button.setEnabled(can_continue)
        self.continue_changed.emit(can_continue)

    # -- the host's events ---------------------------------------------------------------------

    def _on_appended(self, event: MessageDidAppend) -> None:
        if event.conversation_id == self.messages.conversation_id:
            self.messages.append(event.message)
            if event.message.role is Role.TOOL and event.message.tool_round_id:
                self.jobs.start(self._refresh_rounds(event.conversation_id))
            self._update_continue()
        if event.message.role is Role.USER or event.conversation_id != self.current_id:
            self.schedule_reload()  # a new title, a new order

    def _on_streamed(self, event: ReplyDidStream) -> None:
        if event.conversation_id == self.messages.conversation_id:
            self.messages.stream(event.message_id, event.delta)

    def _on_task_changed(self, event: TaskDidChange) -> None:
        if event.record.conversation_id == self.messages.conversation_id:
            self.messages.update_record(event.record)

    def _on_turn_started(self, event: TurnDidStart) -> None:
        self._busy.add(event.conversation_id)
        self._update_buttons()

    def _on_turn_ended(self, event: TurnDidEnd) -> None:
        self._busy.discard(event.conversation_id)
        self._update_buttons()
        if event.conversation_id == self.current_id:
            self.turn_ended.emit(event.conversation_id)

    # -- closing -------------------------------------------------------------------------------

    def close_view(self) -> None:
        """Stop listening to the host."""
        for unsubscribe in self._unsubscribers:
            unsubscribe()
        self._unsubscribers = []

    async def stop(self) -> None:
        """Stop listening and end the work this view started (a deletion waiting for its
        undo time is done now)."""
        self.close_view()
        with contextlib.suppress(KnownError):
            await self.commit_deletes()
        await self.jobs.cancel_all()
        if self._reload is not None:
            with contextlib.suppress(BaseException):
                await self._reload
