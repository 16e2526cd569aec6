"""The conversation's transcript: the messages, their tool round cards and the card bar.

:class:`TranscriptPane` shows a :class:`~mooring.ui.models.conversations.MessageListModel`
(painted by :class:`MessageDelegate`, kept at the newest message by :class:`StickToBottom`),
follows the streamed replies and task changes of the conversation it shows, keeps the
reader's place when an older page arrives, and offers the chosen card's arguments and task
(buttons, Space, Left/Right, Enter) and copying (Ctrl+C). What is read is the presenter's.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QFont, QGuiApplication, QKeyEvent, QKeySequence, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from mooring.core.conversation import Role, VersionPoint
from mooring.core.events import ReplyDidStream, TaskDidChange
from mooring.ui.highlight import CodeBlock, code_blocks
from mooring.ui.models.conversations import STREAMING, MessageListModel, MessageRole, render

if TYPE_CHECKING:
    from mooring.core.events import EventBus
    from mooring.ui.presenters.conversations import Page

__all__ = ["BRANCH_KEYS", "PADDING", "MessageDelegate", "StickToBottom", "TranscriptPane"]

_Index = QModelIndex | QPersistentModelIndex

BRANCH_KEYS = "Ctrl+Shift+B"
"""Start a new conversation from the chosen message (in the transcript)."""
PADDING = 8
"""Space around a message's text, in pixels (its top-left is where a row's text starts)."""


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
        images = index.data(MessageRole.THUMBNAILS) or ()
        below = max((image.height() for image in images), default=-PADDING) + PADDING
        return QSize(width, int(document.size().height()) + header + 2 * PADDING + below)

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
        left, top = rect.left() + PADDING, rect.top() + PADDING + header
        painter.translate(left, top)
        # Only what the viewport shows of it: a message of many screens (a long reply, a
        # tool's result before its card is read) costs what one screen costs to paint.
        shown = QRectF(self._view.viewport().rect()).translated(-left, -top)
        document.drawContents(painter, shown)
        x, y = 0, int(document.size().height()) + PADDING
        for image in index.data(MessageRole.THUMBNAILS) or ():
            painter.drawImage(x, y, image)
            x += image.width() + PADDING
        painter.restore()


class StickToBottom(QObject):
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


class TranscriptPane(QWidget):
    """The transcript of the shown conversation and, under it, the bar of the chosen message
    or tool round card (copy, show its arguments, open its task)."""

    report = Signal(str)
    show_task = Signal(str)
    """The user asked to see a task's card (its record id)."""
    edit_wanted = Signal(str, str)
    """(message id, its text): the user wants to send other words in place of their message."""
    regenerate_wanted = Signal(str)
    """(message id): answer the user's message at or before it again."""
    version_wanted = Signal(str, int)
    """(the id of the message the versions follow, ``""`` for the start; which version)."""
    branch_wanted = Signal(str)
    """(message id): start a new conversation holding the messages up to this one."""
    menu_opened = Signal(object)
    """The chosen message's context menu opened (the :class:`QMenu`)."""

    def __init__(self, messages: MessageListModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.messages = messages
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        self.transcript = QListView(self)
        self.transcript.setObjectName("transcript")
        self.transcript.setAccessibleName("Transcript")
        self.transcript.setModel(messages)
        self.delegate = MessageDelegate(self.transcript)
        self.transcript.setItemDelegate(self.delegate)
        self.transcript.setWordWrap(True)
        self.transcript.setResizeMode(QListView.ResizeMode.Adjust)
        self.transcript.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        # A page at a time (PAGE_SIZE messages), so one layout pass stays short; a single pass
        # also keeps row positions exact when an older page is inserted above the reader.
        self.transcript.setLayoutMode(QListView.LayoutMode.SinglePass)
        self.transcript.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.stick = StickToBottom(self.transcript)
        self.transcript.installEventFilter(self)
        column.addWidget(self.transcript, stretch=1)
        message_row = QHBoxLayout()
        self.copy_button = self._button("Copy message", message_row)
        self.copy_button.setToolTip(
            "Copy the chosen message's text (Ctrl+C in the transcript; Ctrl+Shift+C copies "
            "the last reply)"
        )
        self.copy_code_button = self._button("Copy code", message_row)
        self.copy_code_button.setToolTip("Copy a code block of the chosen message")
        self.code_menu = QMenu(self.copy_code_button)
        self.code_menu.setAccessibleName("Code blocks")
        self.edit_button = self._button("Edit…", message_row)
        self.edit_button.setAccessibleName("Edit message")
        self.edit_button.setToolTip(
            "Send other words in place of your chosen message (the first words are kept)"
        )
        self.regenerate_button = self._button("Regenerate", message_row)
        self.regenerate_button.setAccessibleName("Regenerate reply")
        self.regenerate_button.setToolTip(
            "Answer the chosen message again (the reply it replaces is kept as a version)"
        )
        message_row.addStretch(1)
        self.previous_version_button = self._button("◀", message_row)
        self.previous_version_button.setAccessibleName("Previous version")
        self.previous_version_button.setToolTip("Show the previous version here (Alt+Left)")
        self.version_label = QLabel(self)
        self.version_label.setAccessibleName("Version")
        message_row.addWidget(self.version_label)
        self.next_version_button = self._button("▶", message_row)
        self.next_version_button.setAccessibleName("Next version")
        self.next_version_button.setToolTip("Show the next version here (Alt+Right)")
        column.addLayout(message_row)
        card_row = QHBoxLayout()
        self.card_label = QLabel(self)
        self.card_label.setAccessibleName("Tool round")
        self.card_label.setTextFormat(Qt.TextFormat.PlainText)
        # Long words never widen the window: the label is cut, its tooltip-free text stays.
        self.card_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        card_row.addWidget(self.card_label, stretch=1)
        self.arguments_button = self._button("Show arguments", card_row)
        self.arguments_button.setToolTip("Show or hide the call's arguments (Space)")
        self.open_task_button = self._button("Open task", card_row)
        self.open_task_button.setToolTip("Show this call's task card in the Tasks view")
        column.addLayout(card_row)

        self.branch_action = QAction("Branch from here", self.transcript)
        self.branch_action.setObjectName("branch-from-here")
        self.branch_action.setToolTip(
            f"Start a new conversation with the messages up to the chosen one ({BRANCH_KEYS})"
        )
        self.branch_action.setShortcut(QKeySequence(BRANCH_KEYS))
        self.branch_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.branch_action.triggered.connect(lambda _checked=False: self._branch_chosen())
        self.transcript.addAction(self.branch_action)
        self.transcript.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.transcript.customContextMenuRequested.connect(self._show_message_menu)
        self._menu: QMenu | None = None

        self.copy_button.clicked.connect(self.copy_message)
        self.copy_code_button.clicked.connect(self._copy_only_code_block)
        self.edit_button.clicked.connect(self._edit_chosen)
        self.regenerate_button.clicked.connect(self._regenerate_chosen)
        self.previous_version_button.clicked.connect(lambda: self.step_version(-1))
        self.next_version_button.clicked.connect(lambda: self.step_version(+1))
        self.arguments_button.clicked.connect(self.toggle_arguments)
        self.open_task_button.clicked.connect(self._on_open_task)
        self.transcript.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.transcript.selectionModel().currentChanged.connect(
            lambda _c, _p: self._update_card_bar()
        )
        messages.dataChanged.connect(lambda _t, _b, _r: self._update_card_bar())
        messages.modelReset.connect(self._update_card_bar)
        messages.rowsInserted.connect(lambda _p, _f, _l: self._update_card_bar())
        messages.dataChanged.connect(lambda top, _b, _r: self.delegate.sizeHintChanged.emit(top))
        self._update_card_bar()

    def _button(self, words: str, row: QHBoxLayout) -> QPushButton:
        button = QPushButton(words, self)
        button.setAccessibleName(words)
        row.addWidget(button)
        return button

    def follow(self, events: EventBus) -> list[Callable[[], None]]:
        """Follow the shown conversation's streamed replies and its tasks' changes; returns
        the unsubscribers."""

        def streamed(event: ReplyDidStream) -> None:
            if event.conversation_id == self.messages.conversation_id:
                self.messages.stream(event.message_id, event.delta)

        def task_changed(event: TaskDidChange) -> None:
            if event.record.conversation_id == self.messages.conversation_id:
                self.messages.update_record(event.record)

        return [events.on(ReplyDidStream, streamed), events.on(TaskDidChange, task_changed)]

    def show_page(self, conversation_id: str | None, page: Page | None) -> None:
        """Show a conversation's newest page (``None``: nothing), the reader at its end."""
        self.stick.at_bottom = True
        if page is None:
            self.messages.show(conversation_id, [])
            return
        self.messages.show(conversation_id, page.messages, page.rounds, has_older=page.has_older)
        self.messages.set_versions(page.versions)
        self.transcript.scrollToBottom()

    def prepend(self, conversation_id: str, page: Page) -> None:
        """Put an older page above, the message at the top of the view staying where it is."""
        view = self.transcript
        bar = view.verticalScrollBar()
        anchor = QPersistentModelIndex(view.indexAt(QPoint(PADDING, PADDING)))
        offset = view.visualRect(anchor).top() if anchor.isValid() else 0
        self.messages.prepend(conversation_id, page.messages, page.rounds, has_older=page.has_older)
        view.doItemsLayout()
        if anchor.isValid():
            bar.setValue(bar.value() + view.visualRect(anchor).top() - offset)

    def _on_scrolled(self, value: int) -> None:
        bar = self.transcript.verticalScrollBar()
        self.messages.reader_at_top = value <= bar.minimum() and bar.maximum() > bar.minimum()
        root = QModelIndex()
        if self.messages.canFetchMore(root):
            self.messages.fetchMore(root)

    # -- the chosen message or card ------------------------------------------------------------

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
        """Ctrl+C copies the chosen message; on a card, Space toggles its arguments, Right
        shows them, Left hides them, Enter opens its task."""
        if watched is self.transcript and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.matches(QKeySequence.StandardKey.Copy):
                self.copy_message()
                return True
            if event.modifiers() == Qt.KeyboardModifier.AltModifier and event.key() in (
                Qt.Key.Key_Left,
                Qt.Key.Key_Right,
            ):
                self.step_version(-1 if event.key() == Qt.Key.Key_Left else +1)
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
        card = self.messages.card(self._current_card_row())
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

    # -- versions, edits, code ----------------------------------------------------------------

    def _chosen(self) -> tuple[str, str, Role, VersionPoint | None] | None:
        """The chosen message: id, text, author, and its place among versions."""
        index = self.transcript.currentIndex()
        if not index.isValid():
            return None
        return (
            str(index.data(MessageRole.ID)),
            str(index.data(MessageRole.TEXT) or ""),
            Role(index.data(MessageRole.ROLE)),  # Qt hands the enum back as its value
            index.data(MessageRole.VERSION),
        )

    def step_version(self, step: int) -> bool:
        """Show the previous (-1) or next (+1) version of the chosen message's place; whether
        there is one."""
        chosen = self._chosen()
        point = chosen[3] if chosen is not None else None
        if point is None or not 1 <= point.shown + step <= point.count:
            return False
        self.version_wanted.emit(point.after_message_id or "", point.shown + step)
        return True

    def _edit_chosen(self) -> None:
        chosen = self._chosen()
        if chosen is not None and chosen[2] is Role.USER:
            self.edit_wanted.emit(chosen[0], chosen[1])

    def _regenerate_chosen(self) -> None:
        chosen = self._chosen()
        if chosen is not None:
            self.regenerate_wanted.emit(chosen[0])

    def _branch_chosen(self) -> None:
        if self.branch_action.isEnabled():
            chosen = self._chosen()
            if chosen is not None:
                self.branch_wanted.emit(chosen[0])

    def message_menu(self) -> QMenu | None:
        """The chosen message's context menu: copy, edit, regenerate, branch (``None``: no
        message is chosen)."""
        if self._chosen() is None:
            return None
        menu = QMenu(self.transcript)
        menu.setAccessibleName("Message actions")
        for words, button in (
            ("Copy message", self.copy_button),
            ("Edit…", self.edit_button),
            ("Regenerate", self.regenerate_button),
        ):
            action = menu.addAction(words)
            action.setEnabled(button.isEnabled())
            action.triggered.connect(lambda _c=False, b=button: b.click())
        menu.addSeparator()
        menu.addAction(self.branch_action)
        return menu

    def _show_message_menu(self, at: QPoint) -> None:
        """A right click (or the menu key) on a message: its actions."""
        index = self.transcript.indexAt(at)
        if index.isValid():
            self.transcript.setCurrentIndex(index)
        else:  # the menu key: by the chosen message
            at = self.transcript.visualRect(self.transcript.currentIndex()).center()
        menu = self.message_menu()
        if menu is None:
            return
        if self._menu is not None:
            self._menu.deleteLater()
        self._menu = menu
        menu.popup(self.transcript.viewport().mapToGlobal(at))
        self.menu_opened.emit(menu)

    def _code_blocks(self) -> list[CodeBlock]:
        chosen = self._chosen()
        if chosen is None or chosen[2] is not Role.ASSISTANT:
            return []
        return code_blocks(render(chosen[1], markdown=True))

    def _copy_only_code_block(self) -> None:
        blocks = self._code_blocks()
        if len(blocks) == 1:
            self.copy_code(blocks[0])

    def copy_code(self, block: CodeBlock) -> None:
        """Put one code block's text on the clipboard, exactly as written in the message."""
        QGuiApplication.clipboard().setText(block.text)
        self.report.emit("Code copied.")

    def _update_message_bar(self) -> None:
        chosen = self._chosen()
        role = chosen[2] if chosen is not None else None
        self.edit_button.setEnabled(role is Role.USER)
        self.regenerate_button.setEnabled(role in (Role.USER, Role.ASSISTANT))
        index = self.transcript.currentIndex()
        stored = index.isValid() and index.data(MessageRole.STATUS) != STREAMING
        self.branch_action.setEnabled(chosen is not None and stored)
        blocks = self._code_blocks()
        self.copy_code_button.setEnabled(bool(blocks))
        self.code_menu.clear()
        for number, block in enumerate(blocks, start=1):
            first = block.text.strip().splitlines()[0][:40] if block.text.strip() else ""
            words = f"Block {number}" + (f" ({block.language})" if block.language else "")
            action = self.code_menu.addAction(f"{words}: {first}")
            action.triggered.connect(lambda _c=False, b=block: self.copy_code(b))
        # Several blocks: the button opens their menu (Space or a click); one: it copies it.
        self.copy_code_button.setMenu(self.code_menu if len(blocks) > 1 else None)  # type: ignore[arg-type]  # None detaches it
        point = chosen[3] if chosen is not None else None
        self.version_label.setText(f"{point.shown} of {point.count}" if point else "")
        for widget in (self.previous_version_button, self.version_label, self.next_version_button):
            widget.setVisible(point is not None)
        self.previous_version_button.setEnabled(point is not None and point.shown > 1)
        self.next_version_button.setEnabled(point is not None and point.shown < point.count)

    def _update_card_bar(self) -> None:
        self._update_message_bar()
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
