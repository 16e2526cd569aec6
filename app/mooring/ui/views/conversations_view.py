"""The Conversations view: the conversation list, the transcript and the composer.

A thin view over the chat service (``Host.chat``): every button hands a coroutine to the
view's :class:`Jobs`; the transcript follows the service's events (``MessageDidAppend``,
``ReplyDidStream``, ``TurnDidEnd``). Nothing here decides what is stored or sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFont, QKeyEvent, QKeySequence, QPainter, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from mooring.core.conversation import Role
from mooring.core.errors import KnownError
from mooring.core.events import MessageDidAppend, ReplyDidStream, TurnDidEnd
from mooring.services.chat import ChatService
from mooring.services.host import Host
from mooring.ui.models.conversations import (
    ConversationListModel,
    ConversationRow,
    MessageListModel,
    MessageRole,
    render,
)
from mooring.ui.qt_async import Jobs, confirm, error_text, wait_dialog
from mooring.ui.text import neutralise

_Index = QModelIndex | QPersistentModelIndex

PADDING = 8
SEARCH_DELAY_MS = 250
NO_CHAT = (
    "Chat is not available here: this window has no conversation storage. "
    "Tools still run from the palette (Ctrl+K)."
)


class MessageDelegate(QStyledItemDelegate):
    """Paints a message: who speaks, then the text (Markdown without HTML, or plain), wrapped
    to the transcript's width."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view

    def _document(self, index: _Index, width: int) -> Any:
        document = render(
            str(index.data(MessageRole.BODY) or ""),
            markdown=bool(index.data(MessageRole.MARKDOWN)),
        )
        document.setTextWidth(max(width - 2 * PADDING, 40))
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

    def __init__(self, host: Host, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.chat: ChatService | None = host.chat
        self.setObjectName("conversations-view")
        self.setAccessibleName("Conversations")
        self.jobs = Jobs(self.report.emit)
        self.current_id: str | None = None
        self._reload: asyncio.Future[None] | None = None
        self._search_generation = 0
        self._stale = False

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
        self.rename_button = self._button("Rename", side, buttons)
        self.delete_button = self._button("Delete", side, buttons)
        side_layout.addLayout(buttons)

        main = QWidget(self.splitter)
        main_layout = QVBoxLayout(main)
        main_layout.setContentsMargins(0, 0, 0, 0)
        self.notice = QLabel(main)
        self.notice.setObjectName("chat-notice")
        self.notice.setAccessibleName("Chat notice")
        self.notice.setTextFormat(Qt.TextFormat.PlainText)
        self.notice.setWordWrap(True)
        self.notice.setVisible(False)
        main_layout.addWidget(self.notice)
        self.transcript = QListView(main)
        self.transcript.setObjectName("transcript")
        self.transcript.setAccessibleName("Transcript")
        self.transcript.setModel(self.messages)
        self.delegate = MessageDelegate(self.transcript)
        self.transcript.setItemDelegate(self.delegate)
        self.transcript.setWordWrap(True)
        self.transcript.setResizeMode(QListView.ResizeMode.Adjust)
        self.transcript.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.transcript.setLayoutMode(QListView.LayoutMode.Batched)
        self.transcript.setBatchSize(100)
        self.transcript.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.stick = _StickToBottom(self.transcript)
        main_layout.addWidget(self.transcript, stretch=1)
        self.composer = Composer(main)
        self.composer.setObjectName("composer")
        self.composer.setAccessibleName("Message")
        self.composer.setPlaceholderText("Message (Enter sends, Shift+Enter for a new line)")
        self.composer.setTabChangesFocus(True)
        self.composer.setMaximumHeight(120)
        self.setFocusProxy(self.composer)
        main_layout.addWidget(self.composer)
        row = QHBoxLayout()
        row.addStretch(1)
        self.stop_button = self._button("Stop", main, row)
        self.stop_button.setToolTip("Stop the reply (Esc)")
        self.send_button = self._button("Send", main, row)
        main_layout.addLayout(row)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 3)

        self.new_button.clicked.connect(lambda: self.jobs.start(self.new_conversation()))
        self.rename_button.clicked.connect(lambda: self.jobs.start(self.rename_interactively()))
        self.delete_button.clicked.connect(lambda: self.jobs.start(self.delete_interactively()))
        self.send_button.clicked.connect(self._on_send)
        self.composer.submitted.connect(self._on_send)
        self.stop_button.clicked.connect(self.stop_reply)
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
            events.on(TurnDidEnd, self._on_turn_ended),
        ]
        if self.chat is None:
            self.show_notice(NO_CHAT)
        self._update_buttons()

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
        stored = await self.chat.messages(conversation_id)
        if self.current_id != conversation_id:
            return  # the user chose another one meanwhile
        self.stick.at_bottom = True
        self.messages.show(conversation_id, stored)
        self.transcript.scrollToBottom()
        self._update_buttons()
        self.transcript_loaded.emit(conversation_id)

    # -- conversations -------------------------------------------------------------------------

    async def new_conversation(self) -> str | None:
        """Start a conversation with the default provider and show it; its id."""
        if self.chat is None:
            return None
        try:
            conversation = await self.chat.create()
        except KnownError as exc:
            self.show_notice(error_text(exc))
            return None
        self.show_notice(None)
        self.search_field.clear()
        self.current_id = conversation.id
        self.messages.show(conversation.id, [])
        await self.load()
        self.composer.setFocus()
        self.transcript_loaded.emit(conversation.id)
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
        self.report.emit(f"Renamed to {neutralise(renamed.title, limit=80)}.")
        await self.load()

    async def delete_interactively(self) -> None:
        """Delete the chosen conversation after a confirmation."""
        if self.chat is None or self.current_id is None:
            return
        conversation_id = self.current_id
        current = self.conversations.conversation(self.conversations.row_of(conversation_id))
        title = neutralise(current.title if current else conversation_id, limit=80)
        question = f"Delete “{title}” and its messages? Tasks it started stay in the Tasks list."
        if not await confirm(
            self, "Delete conversation", question, "Delete", self.dialog_opened.emit
        ):
            return
        await self.delete(conversation_id)

    async def delete(self, conversation_id: str) -> None:
        """Delete a conversation (not while a reply is being written in it)."""
        if self.chat is None:
            return
        deleted = await self.chat.delete(conversation_id)
        if self.current_id == conversation_id:
            self.current_id = None
            self.messages.show(None, [])
        self.report.emit(f"Deleted {neutralise(deleted.title, limit=80)}.")
        await self.load()

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
        try:
            result = await self.chat.send(conversation_id, text)
        except KnownError as exc:
            if not self.composer.toPlainText():
                self.composer.setPlainText(text)  # nothing was stored: nothing is lost
            self.show_notice(error_text(exc))
            return
        finally:
            self._update_buttons()
        self.show_notice(None)
        if result.error:
            self.report.emit(neutralise(result.error, limit=300))

    def stop_reply(self) -> None:
        """Stop the reply being written in the shown conversation (its text is kept)."""
        if (
            self.chat is not None
            and self.current_id is not None
            and self.chat.stop(self.current_id)
        ):
            self.report.emit("Stopped.")

    def show_notice(self, text: str | None) -> None:
        """A message above the transcript (``None`` hides it)."""
        self.notice.setText(text or "")
        self.notice.setVisible(bool(text))
        self.notice_changed.emit(text or "")

    def _update_buttons(self, *, sending: bool = False) -> None:
        has_chat = self.chat is not None
        chosen = self.current_id is not None
        busy = sending or (
            self.chat is not None
            and self.current_id is not None
            and self.chat.is_busy(self.current_id)
        )
        self.new_button.setEnabled(has_chat)
        self.rename_button.setEnabled(has_chat and chosen)
        self.delete_button.setEnabled(has_chat and chosen and not busy)
        self.send_button.setEnabled(has_chat)
        self.composer.setEnabled(has_chat)
        self.stop_button.setEnabled(bool(busy))

    # -- the host's events ---------------------------------------------------------------------

    def _on_appended(self, event: MessageDidAppend) -> None:
        if event.conversation_id == self.messages.conversation_id:
            self.messages.append(event.message)
        if event.message.role is Role.USER or event.conversation_id != self.current_id:
            self.schedule_reload()  # a new title, a new order

    def _on_streamed(self, event: ReplyDidStream) -> None:
        if event.conversation_id == self.messages.conversation_id:
            self.messages.stream(event.message_id, event.delta)

    def _on_turn_ended(self, event: TurnDidEnd) -> None:
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
        """Stop listening and end the work this view started."""
        self.close_view()
        await self.jobs.cancel_all()
        if self._reload is not None:
            with contextlib.suppress(BaseException):
                await self._reload
