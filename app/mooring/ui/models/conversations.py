"""The chat's list models: conversations (newest first) and one conversation's transcript.

Thin projections of what the chat service stored: the models hold values and map them to named
roles; nothing here decides anything. A message's text is the model's or a server's, so it is
hostile: it is neutralised and rendered as Markdown with HTML turned off (``MarkdownNoHTML``)
or as plain text, never as HTML, and the renderer never loads a resource (no image, no file).
``Qt.AccessibleTextRole`` returns the role and the text exactly as the delegate paints it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractListModel, QByteArray, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QTextDocument

from mooring.core.conversation import Conversation, Message, MessageStatus, Role
from mooring.ui.text import neutralise, plain_tooltip

_Index = QModelIndex | QPersistentModelIndex

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


class ConversationListModel(QAbstractListModel):
    """Conversations, most recently active first (the service's order)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[ConversationRow] = []

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008  # Qt API
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        title = neutralise(row.conversation.title, limit=120)
        snippet = neutralise(row.snippet, limit=200) if row.snippet else ""
        match role:
            case Qt.ItemDataRole.DisplayRole:
                return f"{title}\n{snippet}" if snippet else title
            case Qt.ItemDataRole.AccessibleTextRole:
                return f"{title}: {snippet}" if snippet else title
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

    @staticmethod
    def of(message: Message) -> TranscriptRow:
        """The row for a stored message."""
        return TranscriptRow(
            id=message.id,
            role=message.role,
            content=message.content,
            status=message.status.value,
            error=message.error,
            followup=message.followup,
            calls=tuple(call.name for call in message.tool_calls),
        )


def speaker(row: TranscriptRow) -> str:
    """Who said a message, in words."""
    match row.role:
        case Role.USER:
            return "You"
        case Role.ASSISTANT:
            return "Assistant"
        case Role.TOOL:
            return "Task result" if row.followup else "Tool result"
    return "System"


def body(row: TranscriptRow) -> str:
    """A message's text to render (neutralised), with a note on how it ended."""
    text = neutralise(row.content, multiline=True, limit=MAX_MESSAGE_CHARS)
    notes: list[str] = []
    if row.calls:
        names = ", ".join(neutralise(name, limit=80) for name in row.calls)
        notes.append(f"(asked to run: {names})")
    if row.status == MessageStatus.INTERRUPTED.value:
        notes.append("(interrupted — you stopped this reply)")
    elif row.status == MessageStatus.ERROR.value:
        notes.append(f"(error: {neutralise(row.error or 'the reply failed', limit=500)})")
    elif row.status == STREAMING:
        notes.append("(writing…)")
    return "\n\n".join([text, *notes] if text else notes)


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
    else:
        document.setPlainText(text)
    return document


def accessible_text(row: TranscriptRow) -> str:
    """What a screen reader reads: the speaker and exactly the text the delegate paints."""
    painted = render(body(row), markdown=row.role is Role.ASSISTANT).toPlainText()
    return f"{speaker(row)}: {painted}"


class MessageListModel(QAbstractListModel):
    """One conversation's messages in order, with the reply being written as it streams."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[TranscriptRow] = []
        self.conversation_id: str | None = None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008  # Qt API
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        match role:
            case Qt.ItemDataRole.DisplayRole:
                return f"{speaker(row)}: {body(row)}"
            case Qt.ItemDataRole.AccessibleTextRole:
                return accessible_text(row)
            case MessageRole.ID:
                return row.id
            case MessageRole.SPEAKER:
                return speaker(row)
            case MessageRole.BODY:
                return body(row)
            case MessageRole.MARKDOWN:
                return row.role is Role.ASSISTANT
            case MessageRole.STATUS:
                return row.status
        return None

    def roleNames(self) -> dict[int, QByteArray]:  # Qt API
        names = dict(super().roleNames())
        names.update(
            {
                MessageRole.ID.value: QByteArray(b"messageId"),
                MessageRole.SPEAKER.value: QByteArray(b"speaker"),
                MessageRole.BODY.value: QByteArray(b"body"),
                MessageRole.MARKDOWN.value: QByteArray(b"markdown"),
                MessageRole.STATUS.value: QByteArray(b"status"),
            }
        )
        return names

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def show(self, conversation_id: str | None, messages: list[Message]) -> None:
        """Show a conversation's stored messages (``None``: no conversation)."""
        self.beginResetModel()
        self.conversation_id = conversation_id
        self._rows = [TranscriptRow.of(m) for m in messages]
        self.endResetModel()

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
            self._replace(row, TranscriptRow.of(message))
            return
        self._insert(TranscriptRow.of(message))

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

    def text_of(self, message_id: str) -> str | None:
        """The raw text of a shown message."""
        row = self.row_of(message_id)
        return self._rows[row].content if row >= 0 else None

    def _insert(self, row: TranscriptRow) -> None:
        at = len(self._rows)
        self.beginInsertRows(QModelIndex(), at, at)
        self._rows.append(row)
        self.endInsertRows()

    def _replace(self, number: int, row: TranscriptRow) -> None:
        self._rows[number] = row
        index = self.index(number, 0)
        self.dataChanged.emit(index, index, [])
