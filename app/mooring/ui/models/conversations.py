"""The chat's list models: conversations (newest first) and one conversation's transcript.

Thin projections of what the chat service stored: the models hold values and map them to named
roles; nothing here decides anything. A message's text is the model's or a server's, so it is
hostile: it is neutralised and rendered as Markdown with HTML turned off (``MarkdownNoHTML``)
or as plain text, never as HTML, and the renderer never loads a resource (no image, no file).
``Qt.AccessibleTextRole`` returns the role and the text exactly as the delegate paints it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QGuiApplication, QImage, QTextDocument

from mooring.core.conversation import (
    Conversation,
    ConversationRound,
    Message,
    MessageStatus,
    Role,
    VersionPoint,
)
from mooring.core.files import FileAttachment, FileKind, size_words
from mooring.core.tasks.record import TaskRecord
from mooring.ui.highlight import highlight
from mooring.ui.models.tool_rounds import MAX_RESULT_CHARS, RoundCard, card_text, round_card
from mooring.ui.palette_theme import is_dark
from mooring.ui.text import inert, plain_tooltip

_Index = QModelIndex | QPersistentModelIndex

_BREAKS = "\t\n\r\u2028\u2029"
_LINE_BREAKS = re.compile(f"[ {_BREAKS}]*[{_BREAKS}][ {_BREAKS}]*")
"""Line breaks and tabs in a search excerpt, with the spaces around them: one space, as an
excerpt is shown on one line."""

MAX_MESSAGE_CHARS = 200_000
"""A message longer than this is cut for display (the stored message is whole)."""


class ConversationRole(IntEnum):
    """The conversation model's named roles."""

    ID = Qt.ItemDataRole.UserRole + 1
    CONVERSATION = Qt.ItemDataRole.UserRole + 2
    SNIPPET = Qt.ItemDataRole.UserRole + 3


@dataclass(frozen=True, slots=True)
class ConversationRow:
    """One listed conversation, with the matching excerpt when it was found by a search."""

    conversation: Conversation
    snippet: str | None = None


def activity(when: datetime, now: datetime) -> str:
    """When a conversation was last active, as a list says it ("5 min ago", "Dec 04")."""
    seconds = (now - when).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86_400:
        return f"{int(seconds // 3600)} h ago"
    local = when.astimezone()
    if local.year != now.astimezone().year:
        return local.strftime("%b %d %Y")
    return local.strftime("%b %d")


class ConversationListModel(QAbstractListModel):
    """Conversations, most recently active first (the service's order), each with its model,
    its last activity and how many of its tasks still run."""

    def __init__(self, parent: Any = None, *, now: Callable[[], datetime] | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ConversationRow] = []
        self._running: dict[str, set[str]] = {}
        self._assistants: dict[str, str] = {}
        self.now = now or (lambda: datetime.now(UTC))
        """The clock the relative times are told by (a test's own)."""

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008  # Qt API
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        title = inert(row.conversation.title, limit=120)
        one_line = _LINE_BREAKS.sub(" ", row.snippet) if row.snippet else ""
        snippet = inert(one_line, limit=200)
        about = self.about(row.conversation)
        match role:
            case Qt.ItemDataRole.DisplayRole:
                return f"{title}\n{about}" + (f"\n{snippet}" if snippet else "")
            case Qt.ItemDataRole.AccessibleTextRole:
                return f"{title} ({about})" + (f": {snippet}" if snippet else "")
            case Qt.ItemDataRole.ToolTipRole:
                return plain_tooltip(title)
            case ConversationRole.ID:
                return row.conversation.id
            case ConversationRole.CONVERSATION:
                return row.conversation
            case ConversationRole.SNIPPET:
                return snippet
        return None

    def roleNames(self) -> dict[int, QByteArray]:  # Qt API
        names = dict(super().roleNames())
        names.update(
            {
                ConversationRole.ID.value: QByteArray(b"conversationId"),
                ConversationRole.CONVERSATION.value: QByteArray(b"conversation"),
                ConversationRole.SNIPPET.value: QByteArray(b"snippet"),
            }
        )
        return names

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def about(self, conversation: Conversation) -> str:
        """The assistant it came from (if any), its model, its last activity, and its running
        tasks (when it has any)."""
        model = inert(conversation.model, limit=40) if conversation.model else "default model"
        words = f"{model} · {activity(conversation.updated_at, self.now())}"
        assistant = self._assistants.get(conversation.assistant_id or "")
        if assistant is not None:
            words = f"{inert(assistant, limit=40)} · {words}"
        running = len(self._running.get(conversation.id, ()))
        return words + (f" · {running} task{'s' if running > 1 else ''} running" if running else "")

    def tick(self) -> None:
        """Time passed: the rows' relative times ("5 min ago") are drawn again, from what is
        held (nothing is read)."""
        if self._rows:
            self.dataChanged.emit(
                self.index(0, 0),
                self.index(len(self._rows) - 1, 0),
                [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole],
            )

    def set_assistants(self, names: Mapping[str, str]) -> None:
        """The assistants' names by id (a conversation started from one names it)."""
        if dict(names) == self._assistants:
            return
        self._assistants = dict(names)
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, 0))

    def set_running(self, tasks: Iterable[tuple[str, str]]) -> None:
        """The unfinished tasks, as ``(conversation id, record id)`` pairs."""
        self._running = {}
        for conversation_id, record_id in tasks:
            self._running.setdefault(conversation_id, set()).add(record_id)
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, 0))

    def task_changed(self, record: TaskRecord) -> None:
        """A task changed: its conversation's count of running tasks follows."""
        if record.conversation_id is None:
            return
        ids = self._running.setdefault(record.conversation_id, set())
        before = len(ids)
        if record.is_terminal:
            ids.discard(record.id)
        else:
            ids.add(record.id)
        row = self.row_of(record.conversation_id)
        if len(ids) != before and row >= 0:
            self.dataChanged.emit(self.index(row, 0), self.index(row, 0))

    def set_rows(self, rows: list[ConversationRow]) -> None:
        """Show exactly ``rows``, in this order."""
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def row_of(self, conversation_id: str) -> int:
        """The row of a conversation, or -1."""
        for number, row in enumerate(self._rows):
            if row.conversation.id == conversation_id:
                return number
        return -1

    def conversation(self, row: int) -> Conversation | None:
        """The conversation on a row."""
        return self._rows[row].conversation if 0 <= row < len(self._rows) else None


class MessageRole(IntEnum):
    """The transcript model's named roles."""

    ID = Qt.ItemDataRole.UserRole + 1
    SPEAKER = Qt.ItemDataRole.UserRole + 2
    """Who speaks, in words ("You", "Assistant", "Tool result"…)."""
    BODY = Qt.ItemDataRole.UserRole + 3
    """The neutralised text with its status note (what the delegate renders)."""
    MARKDOWN = Qt.ItemDataRole.UserRole + 4
    """Whether the body is rendered as Markdown (the assistant's) or as plain text."""
    STATUS = Qt.ItemDataRole.UserRole + 5
    """``complete``, ``interrupted``, ``error`` or ``streaming``."""
    CARD = Qt.ItemDataRole.UserRole + 6
    """For a tool round's result: its :class:`RoundCard` (else ``None``)."""
    EXPANDED = Qt.ItemDataRole.UserRole + 7
    """Whether a tool round card shows its arguments."""
    TEXT = Qt.ItemDataRole.UserRole + 8
    """The message's text exactly as stored (what *Copy* puts on the clipboard)."""
    VERSION = Qt.ItemDataRole.UserRole + 9
    """For the first message of a version shown: its :class:`VersionPoint` (else ``None``)."""
    ROLE = Qt.ItemDataRole.UserRole + 10
    """Who wrote it (:class:`Role`; a task result is a tool message)."""
    THUMBNAILS = Qt.ItemDataRole.UserRole + 11
    """The images attached to a user's message, as small :class:`QImage` thumbnails decoded
    from their stored bytes (a tuple; empty when none)."""


STREAMING = "streaming"


@dataclass(frozen=True, slots=True)
class TranscriptRow:
    """One message as the transcript shows it."""

    id: str
    role: Role
    content: str
    status: str
    error: str | None = None
    followup: bool = False
    calls: tuple[str, ...] = ()
    message: Message | None = None
    card: RoundCard | None = None
    expanded: bool = False

    @staticmethod
    def of(message: Message, item: ConversationRound | None = None) -> TranscriptRow:
        """The row for a stored message (a tool round's result shows as its card)."""
        return TranscriptRow(
            id=message.id,
            role=message.role,
            content=message.content,
            status=message.status.value,
            error=message.error,
            followup=message.followup,
            calls=tuple(call.name for call in message.tool_calls),
            message=message,
            card=round_card(item, message) if item is not None else None,
        )


def has_card(message: Message) -> bool:
    """Whether a message is shown as a tool round card (the result Mooring gave the model)."""
    return message.role is Role.TOOL and not message.followup and bool(message.tool_round_id)


def speaker(row: TranscriptRow) -> str:
    """Who said a message, in words."""
    match row.role:
        case Role.USER:
            return "You"
        case Role.ASSISTANT:
            return "Assistant"
        case Role.TOOL:
            if row.card is not None:
                return "Tool round"
            return "Task result" if row.followup else "Tool result"
    return "System"


def body(row: TranscriptRow) -> str:
    """A message's text to render (neutralised), with a note on how it ended."""
    if row.card is not None:
        return card_text(row.card, expanded=row.expanded)
    # A tool round's result whose card is still being read shows no more than its card will.
    awaiting_card = row.message is not None and has_card(row.message)
    limit = MAX_RESULT_CHARS if awaiting_card else MAX_MESSAGE_CHARS
    text = inert(row.content, multiline=True, limit=limit)
    notes: list[str] = []
    if row.calls:
        names = ", ".join(inert(name, limit=80) for name in row.calls)
        notes.append(f"(asked to run: {names})")
    if row.status == MessageStatus.INTERRUPTED.value:
        notes.append("(interrupted — you stopped this reply)")
    elif row.status == MessageStatus.ERROR.value:
        notes.append(f"(error: {inert(row.error or 'the reply failed', limit=500)})")
    elif row.status == STREAMING:
        notes.append("(writing…)")
    if row.message is not None and row.message.files:
        notes.append("\n".join(file_words(f) for f in row.message.files))
    return "\n\n".join([text, *notes] if text else notes)


def file_words(file: FileAttachment) -> str:
    """An attached file as the transcript names it (inert): name, type and size."""
    what = "image" if file.kind is FileKind.IMAGE else "file"
    return f"Attached {what} {inert(file.name, limit=120)} ({file.mime}, {size_words(file.size)})"


THUMBNAIL_SIZE = 96
"""The longest side of an attached image's thumbnail in the transcript, in pixels."""


def thumbnail(file: FileAttachment) -> QImage | None:
    """A small image of an attached image, decoded from its stored bytes (never fetched);
    ``None`` when they do not decode."""
    image = QImage()
    if not image.loadFromData(file.data) or image.isNull():
        return None
    return image.scaled(
        THUMBNAIL_SIZE,
        THUMBNAIL_SIZE,
        Qt.AspectRatioMode.KeepAspectRatio,
        Qt.TransformationMode.SmoothTransformation,
    )


class _InertDocument(QTextDocument):
    """A document that never loads a resource (no image, no file, no network)."""

    def loadResource(self, kind: int, name: Any) -> Any:  # Qt API
        return None


def render(text: str, *, markdown: bool) -> QTextDocument:
    """A document showing ``text`` (already neutralised): Markdown without HTML, or plain."""
    document = _InertDocument()
    if markdown:
        document.setMarkdown(
            text,
            QTextDocument.MarkdownFeature.MarkdownDialectGitHub
            | QTextDocument.MarkdownFeature.MarkdownNoHTML,
        )
        highlight(document, dark=is_dark(QGuiApplication.palette()))
    else:
        document.setPlainText(text)
    return document


def version_words(point: VersionPoint) -> str:
    """What the header of a version's first message adds (◀ 1/2 ▶ in words)."""
    return f"  ◀ {point.shown}/{point.count} ▶"


def accessible_text(row: TranscriptRow, *, version: VersionPoint | None = None) -> str:
    """What a screen reader reads: the speaker and exactly the text the delegate paints."""
    painted = render(body(row), markdown=row.role is Role.ASSISTANT).toPlainText()
    where = f" (version {version.shown} of {version.count})" if version is not None else ""
    return f"{speaker(row)}{where}: {painted}"


class MessageListModel(QAbstractListModel):
    """One conversation's messages in order, with the reply being written as it streams.

    Long transcripts arrive in pages: :meth:`show` gets the newest page, and while older
    messages remain, :meth:`canFetchMore` is true once the reader has reached the top
    (:attr:`reader_at_top`); :meth:`fetchMore` asks for the page before the oldest shown one
    (:attr:`older_wanted`), which the view reads and hands to :meth:`prepend`.
    """

    older_wanted = Signal(str, str)
    """(conversation id, id of the oldest message shown): read the page before it."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[TranscriptRow] = []
        self._rounds: dict[str, ConversationRound] = {}
        self.conversation_id: str | None = None
        self.has_older = False
        """Older messages are stored than are shown."""
        self.reader_at_top = False
        self._fetching = False
        self._versions: dict[str, VersionPoint] = {}
        self._thumbnails: dict[str, QImage | None] = {}

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008  # Qt API
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        match role:
            case Qt.ItemDataRole.DisplayRole:
                return f"{self._speaker(row)}: {body(row)}"
            case Qt.ItemDataRole.AccessibleTextRole:
                return accessible_text(row, version=self._versions.get(row.id))
            case MessageRole.ID:
                return row.id
            case MessageRole.SPEAKER:
                return self._speaker(row)
            case MessageRole.VERSION:
                return self._versions.get(row.id)
            case MessageRole.ROLE:
                return row.role
            case MessageRole.BODY:
                return body(row)
            case MessageRole.MARKDOWN:
                return row.role is Role.ASSISTANT
            case MessageRole.STATUS:
                return row.status
            case MessageRole.CARD:
                return row.card
            case MessageRole.EXPANDED:
                return row.expanded
            case MessageRole.TEXT:
                return row.content
            case MessageRole.THUMBNAILS:
                return self._thumbnails_of(row)
        return None

    def _thumbnails_of(self, row: TranscriptRow) -> tuple[QImage, ...]:
        if row.message is None:
            return ()
        images: list[QImage] = []
        for file in row.message.files:
            if file.kind is not FileKind.IMAGE:
                continue
            if file.id not in self._thumbnails:
                self._thumbnails[file.id] = thumbnail(file)
            shown = self._thumbnails[file.id]
            if shown is not None:
                images.append(shown)
        return tuple(images)

    def _speaker(self, row: TranscriptRow) -> str:
        point = self._versions.get(row.id)
        return speaker(row) + (version_words(point) if point is not None else "")

    def set_versions(self, points: Iterable[VersionPoint]) -> None:
        """Mark the first message of each version shown with its place among the versions."""
        before = set(self._versions)
        self._versions = {p.first_message_id: p for p in points}
        for message_id in before | set(self._versions):
            row = self.row_of(message_id)
            if row >= 0:
                index = self.index(row, 0)
                self.dataChanged.emit(index, index)

    def roleNames(self) -> dict[int, QByteArray]:  # Qt API
        names = dict(super().roleNames())
        names.update(
            {
                MessageRole.VERSION.value: QByteArray(b"version"),
                MessageRole.ROLE.value: QByteArray(b"role"),
                MessageRole.ID.value: QByteArray(b"messageId"),
                MessageRole.SPEAKER.value: QByteArray(b"speaker"),
                MessageRole.BODY.value: QByteArray(b"body"),
                MessageRole.MARKDOWN.value: QByteArray(b"markdown"),
                MessageRole.STATUS.value: QByteArray(b"status"),
                MessageRole.CARD.value: QByteArray(b"card"),
                MessageRole.EXPANDED.value: QByteArray(b"expanded"),
                MessageRole.TEXT.value: QByteArray(b"text"),
                MessageRole.THUMBNAILS.value: QByteArray(b"thumbnails"),
            }
        )
        return names

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # -- pages ---------------------------------------------------------------------------------

    def canFetchMore(self, parent: _Index) -> bool:  # Qt API
        return (
            not parent.isValid()
            and self.has_older
            and self.reader_at_top
            and not self._fetching
            and bool(self._rows)
        )

    def fetchMore(self, parent: _Index) -> None:  # Qt API
        if not self.canFetchMore(parent) or self.conversation_id is None:
            return
        self._fetching = True
        self.older_wanted.emit(self.conversation_id, self._rows[0].id)

    def show(
        self,
        conversation_id: str | None,
        messages: list[Message],
        rounds: Iterable[ConversationRound] = (),
        *,
        has_older: bool = False,
    ) -> None:
        """Show a conversation's stored messages (``None``: no conversation) — all of them,
        or its newest page when ``has_older``."""
        self.beginResetModel()
        self.conversation_id = conversation_id
        self._rounds = {item.round.id: item for item in rounds}
        self._rows = [self._row(m) for m in messages]
        self.has_older = has_older
        self.reader_at_top = False
        self._fetching = False
        self.endResetModel()

    def prepend(
        self,
        conversation_id: str,
        messages: list[Message],
        rounds: Iterable[ConversationRound] = (),
        *,
        has_older: bool,
    ) -> None:
        """An older page arrived: insert it above the oldest shown message."""
        self._fetching = False
        if conversation_id != self.conversation_id:
            return  # another conversation is shown now
        self._rounds.update({item.round.id: item for item in rounds})
        shown = {row.id for row in self._rows}
        fresh = [m for m in messages if m.id not in shown]
        self.has_older = has_older
        if not fresh:
            return
        self.beginInsertRows(QModelIndex(), 0, len(fresh) - 1)
        self._rows[0:0] = [self._row(m) for m in fresh]
        self.endInsertRows()

    def fetch_failed(self) -> None:
        """Reading an older page failed: a later scroll to the top asks again."""
        self._fetching = False

    # -- rows ----------------------------------------------------------------------------------

    def _row(self, message: Message) -> TranscriptRow:
        item = self._rounds.get(message.tool_round_id or "") if has_card(message) else None
        return TranscriptRow.of(message, item)

    def row_of(self, message_id: str) -> int:
        """The row of a message, or -1 (searched from the end: new messages are there)."""
        for number in range(len(self._rows) - 1, -1, -1):
            if self._rows[number].id == message_id:
                return number
        return -1

    def append(self, message: Message) -> None:
        """A message was stored: add it, or replace the streamed row it completes."""
        row = self.row_of(message.id)
        if row >= 0:
            self._replace(row, self._row(message))
            return
        self._insert(self._row(message))

    def stream(self, message_id: str, delta: str) -> None:
        """A piece of the reply ``message_id`` arrived."""
        row = self.row_of(message_id)
        if row < 0:
            self._insert(TranscriptRow(message_id, Role.ASSISTANT, delta, STREAMING))
            return
        shown = self._rows[row]
        if shown.status != STREAMING:
            return  # the whole reply is already stored; a late piece changes nothing
        self._replace(row, replace(shown, content=shown.content + delta))

    def drop_after(self, message_id: str | None) -> bool:
        """Drop the rows after message ``message_id`` (``None``: every row): that part of the
        conversation became a hidden version. ``False`` when that message is not shown (read
        the conversation again instead)."""
        row = -1 if message_id is None else self.row_of(message_id)
        if message_id is not None and row < 0:
            return False
        if row + 1 < len(self._rows):
            self.beginRemoveRows(QModelIndex(), row + 1, len(self._rows) - 1)
            del self._rows[row + 1 :]
            self.endRemoveRows()
        return True

    def text_of(self, message_id: str) -> str | None:
        """The raw text of a shown message."""
        row = self.row_of(message_id)
        return self._rows[row].content if row >= 0 else None

    # -- tool round cards ----------------------------------------------------------------------

    def set_rounds(self, rounds: Iterable[ConversationRound]) -> None:
        """Tool rounds were read (again): their cards show what is stored now."""
        for item in rounds:
            self._rounds[item.round.id] = item
            self._refresh_round(item.round.id)

    def update_record(self, record: TaskRecord) -> None:
        """A task's record changed: the card of its round follows (only that row changes)."""
        if record.tool_round_id is None or record.tool_round_id not in self._rounds:
            return
        item = self._rounds[record.tool_round_id]
        if item.record is not None and item.record.updated_at > record.updated_at:
            return  # a late event never rolls a card back
        self._rounds[record.tool_round_id] = replace(item, record=record)
        self._refresh_round(record.tool_round_id)

    def _refresh_round(self, round_id: str) -> None:
        for number, row in enumerate(self._rows):
            message = row.message
            if message is not None and message.tool_round_id == round_id and has_card(message):
                fresh = replace(self._row(message), expanded=row.expanded)
                if fresh != row:
                    self._replace(number, fresh)

    def card(self, number: int) -> RoundCard | None:
        """The tool round card on a row (``None``: not a card)."""
        return self._rows[number].card if 0 <= number < len(self._rows) else None

    def set_expanded(self, number: int, expanded: bool) -> bool:
        """Show or hide a card's arguments; whether the row is a card."""
        if self.card(number) is None:
            return False
        row = self._rows[number]
        if row.expanded != expanded:
            self._replace(number, replace(row, expanded=expanded))
        return True

    def round_ids(self) -> set[str]:
        """The tool rounds whose cards are shown."""
        return {row.card.round_id for row in self._rows if row.card is not None}

    def last_reply(self) -> str | None:
        """The text of the newest finished assistant reply shown (``None``: none yet)."""
        for row in reversed(self._rows):
            if row.role is Role.ASSISTANT and row.status != STREAMING and row.content:
                return row.content
        return None

    def continuable(self) -> bool:
        """A background task's result arrived after the model last spoke (the user can
        continue with it)."""
        for row in reversed(self._rows):
            if row.role is Role.ASSISTANT and row.status != STREAMING:
                return False
            if row.followup:
                return True
        return False

    def _insert(self, row: TranscriptRow) -> None:
        at = len(self._rows)
        self.beginInsertRows(QModelIndex(), at, at)
        self._rows.append(row)
        self.endInsertRows()

    def _replace(self, number: int, row: TranscriptRow) -> None:
        self._rows[number] = row
        index = self.index(number, 0)
        self.dataChanged.emit(index, index, [])
