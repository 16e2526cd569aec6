"""The Tasks panel: every recent task with live state words, and a card for the chosen one.

The list is a :class:`TaskListModel` fed by :class:`TaskFeed` from the host's events; the card
shows the chosen task's state words, the server's status message, elapsed time, last check,
the time to live left, and the buttons that fit its state. Every action goes through the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
    SignalInstance,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from mooring.core.clock import SystemClock
from mooring.core.events import AnswerDidSettle, TaskDidChange, ToolRoundDidFinish
from mooring.core.results import SHOWN_RESULT_CHARS
from mooring.core.tasks.inputs import is_form
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState, TaskFlag
from mooring.core.tasks.words import Tone
from mooring.core.views import TaskView
from mooring.ui.dialogs.input_form import InputFormDialog
from mooring.ui.models.tasks import TaskListModel, TaskRole, state_line, title_of
from mooring.ui.qt_async import Jobs, confirm
from mooring.ui.text import inert

if TYPE_CHECKING:
    from mooring.core.host_api import HostApi

log = logging.getLogger("mooring.ui.tasks")

_Index = QModelIndex | QPersistentModelIndex

TONE_COLOURS = {
    Tone.BUSY.value: "#2874a6",
    Tone.ATTENTION.value: "#b9770e",
    Tone.DONE.value: "#1e8449",
    Tone.PROBLEM.value: "#c0392b",
    Tone.QUIET.value: "#7f8c8d",
}


TONE_COLOURS_DARK = {
    Tone.BUSY.value: "#7fb3e0",
    Tone.ATTENTION.value: "#f0b45a",
    Tone.DONE.value: "#6fcf8f",
    Tone.PROBLEM.value: "#ff8a80",
    Tone.QUIET.value: "#a9b0b6",
}


def tone_colour(tone: str, palette: QPalette) -> str:
    """The colour of a state's words, readable on the palette's background."""
    dark = palette.color(QPalette.ColorRole.Window).lightness() < 128
    return (TONE_COLOURS_DARK if dark else TONE_COLOURS)[tone]


class TaskFeed:
    """Keeps a :class:`TaskListModel` in step with the host: last known state at once, then
    every change the host tells.

    Changes are coalesced: every task changed while a read is under way is read in the next
    one, all together (one database round, off the GUI thread), and shown in one model update;
    a task changed many times meanwhile is read once, as it is then.
    """

    BATCH = 50
    """The most tasks one read and one model update take (bounds the GUI thread's turn)."""
    SPACING_S = 0.05
    """The least time between two model updates for progress alone: such news arriving one
    task at a time (a listen stream, a launch's polls) is shown together, at most 20 times a
    second, so the list is not laid out and painted again for every task. A new task, a new
    state, a cancel request, a question or an answer is shown at once."""

    def __init__(self, host: HostApi, model: TaskListModel) -> None:
        self.host = host
        self.model = model
        self._pending: dict[str, TaskRecord] = {}
        self._draining: asyncio.Task[None] | None = None
        self._updated_at = float("-inf")
        self._hurry = asyncio.Event()
        self._unsubscribe = [
            host.events.on(
                TaskDidChange, lambda e: self.refresh(e.record, urgent=bool(e.new_inputs))
            ),
            host.events.on(ToolRoundDidFinish, lambda e: self.refresh(e.record, urgent=True)),
            host.events.on(AnswerDidSettle, lambda e: self.refresh_id(e.record_id)),
        ]
        self.updated: list[Callable[[TaskView], None]] = []

    async def load(self, limit: int = 200) -> None:
        """Show what the ledger knows now (no server is asked)."""
        self.model.reset_views(await self.host.tasks(limit=limit, result_limit=SHOWN_RESULT_CHARS))

    def refresh(self, record: TaskRecord, *, urgent: bool = False) -> None:
        """Show ``record`` soon (its inputs and tool round are read off the GUI thread): at
        once when it is ``urgent`` or more than progress changed (see :attr:`SPACING_S`)."""
        self._pending[record.id] = record
        if urgent or self._changes_more_than_progress(record):
            self._hurry.set()
        if self._draining is None or self._draining.done():
            self._draining = asyncio.ensure_future(self._drain())

    def refresh_many(self, records: Iterable[TaskRecord]) -> None:
        """Show each of ``records`` soon (read together)."""
        for record in records:
            self._pending[record.id] = record
        if self._pending and (self._draining is None or self._draining.done()):
            self._draining = asyncio.ensure_future(self._drain())

    def refresh_id(self, record_id: str) -> None:
        """Read a task again (an answer settled)."""
        view = self.model.view(record_id)
        if view is not None:
            self.refresh(view.record, urgent=True)

    def _changes_more_than_progress(self, record: TaskRecord) -> bool:
        """Whether ``record`` is a task not shown yet, or changes what its words say (its
        state, flags or cancel request), not only its progress or status message."""
        shown = self.model.view(record.id)
        if shown is None:
            return True
        before = shown.record
        return (before.state, before.flags, before.cancel_requested) != (
            record.state,
            record.flags,
            record.cancel_requested,
        )

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            wait = self._updated_at + self.SPACING_S - loop.time()
            if wait > 0 and not self._hurry.is_set():
                with contextlib.suppress(TimeoutError):  # more news gathers meanwhile
                    await asyncio.wait_for(self._hurry.wait(), wait)
            self._hurry.clear()
            batch = list(itertools.islice(self._pending.values(), self.BATCH))
            for record in batch:
                del self._pending[record.id]
            try:
                views = await self.host.task_views(
                    batch, fresh=True, result_limit=SHOWN_RESULT_CHARS
                )
            except Exception:
                log.exception("could not read %d task(s)", len(batch))
                continue
            self.model.upsert_many(views)
            self._updated_at = loop.time()
            for view in views:
                for callback in list(self.updated):
                    callback(view)

    def close(self) -> None:
        """Stop listening to the host."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        if self._draining is not None:
            self._draining.cancel()

    async def stop(self) -> None:
        """Stop listening and wait for the view being read."""
        self.close()
        if self._draining is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._draining


class TaskDelegate(QStyledItemDelegate):
    """Paints a task as two lines: the title, then its state words in the state's colour.

    The text it paints is the model's ``AccessibleTextRole`` (title, then state line).
    """

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        view = index.data(TaskRole.VIEW)
        if not isinstance(view, TaskView):
            super().paint(painter, option, index)
            return
        painter.save()
        style = option.widget.style() if option.widget else None
        if style is not None:
            style.drawPrimitive(
                QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, option.widget
            )
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        text_colour = palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        rect = option.rect.adjusted(8, 4, -8, -4)
        title_font = QFont(option.font)
        title_font.setBold(True)
        painter.setFont(title_font)
        painter.setPen(text_colour)
        metrics = QFontMetrics(title_font)
        title = metrics.elidedText(title_of(view), Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(
            QRect(rect.left(), rect.top(), rect.width(), metrics.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            title,
        )
        painter.setFont(option.font)
        body = QFontMetrics(option.font)
        colour = text_colour if selected else QColor(tone_colour(view.words.tone.value, palette))
        painter.setPen(colour)
        line = body.elidedText(state_line(view), Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(
            QRect(rect.left(), rect.top() + metrics.height() + 2, rect.width(), body.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            line,
        )
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        metrics = QFontMetrics(option.font)
        return QSize(240, metrics.height() * 2 + 14)


def _span(delta: timedelta) -> str:
    seconds = max(int(delta.total_seconds()), 0)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min"
    return f"{hours // 24} days"


def times_of(record: TaskRecord, now: datetime) -> tuple[str, str, str]:
    """Elapsed, last checked and time-to-live-left, in words."""
    end = record.updated_at if record.is_terminal else now
    elapsed = _span(end - record.created_at)
    if record.last_checked_at is None:
        checked = "not yet"
    else:
        checked = f"{_span(now - record.last_checked_at)} ago"
    if record.ttl_ms is None:
        ttl = "no limit given"
    elif record.is_terminal:
        ttl = "—"
    else:
        start = record.server_created_at or record.created_at
        left = start + timedelta(milliseconds=record.ttl_ms) - now
        ttl = _span(left) if left.total_seconds() > 0 else "passed"
    return elapsed, checked, ttl


class TaskCard(QWidget):
    """The chosen task: its words, times and the actions that fit its state.

    The words are in a scroll area (:attr:`scroll_area`, "Task details") and the buttons below
    it: a long result or server message scrolls inside the pane, so the card never asks the
    window for more room than the screen has, and the buttons stay in view.
    """

    cancel_pressed = Signal(str)
    answer_pressed = Signal(str)
    retry_pressed = Signal(str)
    abandon_pressed = Signal(str)
    sign_in_pressed = Signal(str)
    open_conversation_pressed = Signal(str)
    continue_pressed = Signal(str)
    """"Continue with result": the task's conversation goes on with its result (record id)."""
    changed = Signal()
    """The card shows another task, or the same one in a new state."""

    def __init__(self, parent: QWidget | None = None, *, now: Callable[[], datetime]) -> None:
        super().__init__(parent)
        self._now = now
        self.view: TaskView | None = None
        self.setObjectName("task-card")
        self.setAccessibleName("Task card")
        layout = QVBoxLayout(self)
        # Wrapped labels ask for the height of all their lines, and the window's minimum size
        # is the sum of what its parts ask for: the words go in a scroll area, whose own
        # minimum is a few lines, and a long text scrolls (Tab reaches it, the arrow and page
        # keys scroll it).
        self.scroll_area = QScrollArea(self)
        self.scroll_area.setObjectName("task-details")
        self.scroll_area.setAccessibleName("Task details")
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.body = QWidget(self.scroll_area)
        self.body.setObjectName("task-details-body")
        column = QVBoxLayout(self.body)
        column.setContentsMargins(0, 0, 0, 0)
        self.title_label = self._label()
        font = self.title_label.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.title_label.setFont(font)
        self.state_label = self._label()
        self.state_label.setObjectName("task-state")
        state_font = self.state_label.font()
        state_font.setPointSizeF(state_font.pointSizeF() * 1.1)
        self.state_label.setFont(state_font)
        self.detail_label = self._label()
        self.message_label = self._label()
        self.elapsed_label = self._label()
        self.checked_label = self._label()
        self.ttl_label = self._label()
        self.id_label = self._label()
        self.result_label = self._label()
        column.addWidget(self.title_label)
        column.addWidget(self.state_label)
        column.addWidget(self.detail_label)
        self.details = QWidget(self.body)
        form = QFormLayout(self.details)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Server says:", self.message_label)
        form.addRow("Elapsed:", self.elapsed_label)
        form.addRow("Last checked:", self.checked_label)
        form.addRow("Time to live left:", self.ttl_label)
        form.addRow("Operation:", self.id_label)
        form.addRow("Result:", self.result_label)
        column.addWidget(self.details)
        column.addStretch(1)
        self.scroll_area.setWidget(self.body)
        layout.addWidget(self.scroll_area, stretch=1)
        row = QHBoxLayout()
        self.buttons: dict[str, QPushButton] = {}
        for text, signal in (
            ("Answer", self.answer_pressed),
            ("Cancel", self.cancel_pressed),
            ("Retry", self.retry_pressed),
            ("Abandon", self.abandon_pressed),
            ("Sign in", self.sign_in_pressed),
            ("Continue with result", self.continue_pressed),
            ("Open conversation", self.open_conversation_pressed),
        ):
            button = QPushButton(text, self)
            button.setAccessibleName(text)
            button.clicked.connect(
                lambda _=False, s=signal: s.emit(self.view.id) if self.view else None
            )
            row.addWidget(button)
            self.buttons[text] = button
        row.addStretch(1)
        layout.addLayout(row)
        self.empty_label = self._label()
        self.empty_label.setText(
            "No task chosen. Run a tool with Ctrl+K (File → Run a tool…); "
            "every call you start shows up on the left."
        )
        column.insertWidget(0, self.empty_label)
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)
        self.show_view(None)

    def _label(self) -> QLabel:
        label = QLabel(self.body)
        # Server and model text is shown as it is, never as HTML.
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        # Long server text wraps at the pane's width; a Preferred width keeps Qt's
        # height-for-width, so a wrapped line is never cut off. A word longer than the pane
        # (a long unbroken line) cannot wrap: it widens the scroll area's contents, not the
        # card, and is reached by scrolling sideways.
        label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.MinimumExpanding)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def visible_buttons(self) -> list[str]:
        """The names of the buttons the card offers now."""
        return [name for name, b in self.buttons.items() if not b.isHidden()]

    def show_view(self, view: TaskView | None) -> None:
        """Show ``view`` (or the empty card)."""
        self.view = view
        self.empty_label.setVisible(view is None)
        for widget in (self.title_label, self.state_label, self.detail_label, self.details):
            widget.setVisible(view is not None)
        if view is None:
            for button in self.buttons.values():
                button.hide()
            for label in (
                self.message_label,
                self.elapsed_label,
                self.checked_label,
                self.ttl_label,
                self.id_label,
                self.result_label,
            ):
                label.setText("")
            self._timer.stop()
            self.changed.emit()
            return
        record = view.record
        self.title_label.setText(title_of(view))
        self.state_label.setText(view.words.label)
        self.state_label.setStyleSheet(
            f"color: {tone_colour(view.words.tone.value, self.palette())};"
        )
        detail = inert(view.words.detail, limit=1000)
        said = inert(record.status_message or "", limit=1000)
        self.detail_label.setText(detail)
        # The server's message has its own row; the detail line is for what it adds.
        self.detail_label.setVisible(bool(detail) and detail != said)
        self.message_label.setText(inert(record.status_message or "—", limit=1000))
        self.id_label.setText(view.short_id)
        self.result_label.setText(self._result_text(view))
        # New text may wrap to more lines: the form must measure its rows again, or a wrapped
        # line is drawn in the height of the old one (cut off).
        form = self.details.layout()
        if form is not None:
            form.invalidate()
        self.details.updateGeometry()
        flags = record.flags
        live = not record.is_terminal
        wants = {
            "Answer": record.state is LocalState.INPUT_REQUIRED
            and any(is_form(q) for q in view.open_questions),
            "Cancel": live
            and not record.cancel_requested
            and record.state in (LocalState.WORKING, LocalState.INPUT_REQUIRED),
            "Retry": record.state is LocalState.UNKNOWN_OUTCOME,
            "Abandon": record.state is LocalState.UNKNOWN_OUTCOME,
            "Sign in": live and TaskFlag.AUTH_REQUIRED in flags,
            # A task a conversation started: its result can go back to the model there.
            "Continue with result": record.is_terminal
            and record.conversation_id is not None
            and record.tool_round_id is not None,
            "Open conversation": record.conversation_id is not None,
        }
        for name, button in self.buttons.items():
            button.setVisible(wants[name])
        self._tick()
        if live:
            self._timer.start()
        else:
            self._timer.stop()
        self.changed.emit()

    @staticmethod
    def _result_text(view: TaskView) -> str:
        result = view.result
        if not result:
            error = view.error
            if error:
                return inert(error.get("message") or error, limit=1000)
            return "—"
        texts = [
            str(block.get("text", ""))
            for block in result.get("content") or []
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        return inert(
            " ".join(texts) or result.get("structuredContent") or "—", limit=2000, multiline=True
        )

    def _tick(self) -> None:
        if self.view is None:
            return
        elapsed, checked, ttl = times_of(self.view.record, self._now())
        self.elapsed_label.setText(elapsed)
        self.checked_label.setText(checked)
        self.ttl_label.setText(ttl)


class TasksPanel(QWidget):
    """The "Tasks" panel: the list and the card, with the actions wired to the host."""

    report = Signal(str)
    """A message for the status bar (an action's outcome or failure)."""
    dialog_opened = Signal(object)
    """A dialog of this panel opened (a confirmation)."""
    sign_in_requested = Signal(str)
    """A card's "Sign in" was pressed (the record id; the window signs its account in)."""
    open_conversation = Signal(str)
    """The user asked to see the conversation that started a task (its id)."""
    continue_conversation = Signal(str)
    """The user asked a task's conversation to go on with its result (the conversation id)."""

    def __init__(self, host: HostApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.setObjectName("tasks-panel")
        self.setAccessibleName("Tasks")
        self.jobs = Jobs(self.report.emit)
        self.model = TaskListModel(self)
        self.feed = TaskFeed(host, self.model)
        self.forms: dict[str, InputFormDialog] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("tasks-splitter")
        self.list_view = QListView(self.splitter)
        self.list_view.setObjectName("tasks-list")
        self.list_view.setAccessibleName("Task list")
        self.list_view.setModel(self.model)
        self.list_view.setItemDelegate(TaskDelegate(self.list_view))
        self.list_view.setUniformItemSizes(True)
        self.list_view.setSelectionMode(QListView.SelectionMode.SingleSelection)
        self.card = TaskCard(self.splitter, now=SystemClock().now)
        self.splitter.addWidget(self.list_view)
        self.splitter.addWidget(self.card)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        layout.addWidget(self.splitter)
        self.list_view.selectionModel().selectionChanged.connect(self._on_selection)
        self.model.modelReset.connect(self._on_reset)
        self.model.dataChanged.connect(self._on_data_changed)
        self.model.rowsInserted.connect(self._on_rows_inserted)
        self.card.cancel_pressed.connect(lambda i: self.jobs.start(self.cancel(i)))
        self.card.answer_pressed.connect(self.open_answer)
        self.card.retry_pressed.connect(lambda i: self.jobs.start(self.retry(i)))
        self.card.abandon_pressed.connect(lambda i: self.jobs.start(self.abandon(i)))
        self.card.sign_in_pressed.connect(self._sign_in)
        self.card.open_conversation_pressed.connect(
            lambda i: self._to_conversation(i, self.open_conversation)
        )
        self.card.continue_pressed.connect(
            lambda i: self._to_conversation(i, self.continue_conversation)
        )

    def _to_conversation(self, record_id: str, signal: SignalInstance) -> None:
        shown = self.card.view
        if shown is not None and shown.id == record_id and shown.record.conversation_id:
            signal.emit(shown.record.conversation_id)

    # -- selection -----------------------------------------------------------------------------

    def select(self, record_id: str) -> bool:
        """Choose a task (by record id); ``False`` when it is not listed."""
        row = self.model.row_of(record_id)
        if row < 0:
            return False
        self.list_view.setCurrentIndex(self.model.index(row, 0))
        self._on_selection()
        return True

    def _on_reset(self) -> None:
        # The last known state: the newest task's card at once, before anything is asked.
        if self.model.rowCount() and not self.list_view.selectionModel().hasSelection():
            self.list_view.setCurrentIndex(self.model.index(0, 0))
        self._on_selection()

    def _on_selection(self, *_args: object) -> None:
        indexes = self.list_view.selectionModel().selectedIndexes()
        view = indexes[0].data(TaskRole.VIEW) if indexes else None
        self._show(view if isinstance(view, TaskView) else None)

    def _on_data_changed(
        self, top_left: QModelIndex, bottom_right: QModelIndex, *_: object
    ) -> None:
        shown = self.card.view
        if shown is None:
            return
        row = self.model.row_of(shown.id)
        if top_left.row() <= row <= bottom_right.row():
            self._show(self.model.view(shown.id))

    def _show(self, view: TaskView | None) -> None:
        # Qt reports rows inserted above the chosen one as a new selection (the same task,
        # moved down), and one batch's change spans every row between its first and last: the
        # card is drawn again only when it is to show another task or news of its own.
        if view != self.card.view:
            self.card.show_view(view)

    def _on_rows_inserted(self, _parent: QModelIndex, first: int, _last: int) -> None:
        if not self.list_view.selectionModel().hasSelection():
            self.list_view.setCurrentIndex(self.model.index(first, 0))
            self._on_selection()

    # -- actions -------------------------------------------------------------------------------

    async def cancel(self, record_id: str) -> None:
        """Ask the server to cancel (the card shows "cancel requested" until it answers)."""
        done = await self.host.cancel(record_id)
        self.feed.refresh(done.record)
        self.report.emit(
            "Cancel requested; the server decides the outcome."
            if done.result.value == "requested"
            else "That task had already ended."
        )

    async def abandon(self, record_id: str) -> None:
        """Give up on a call whose outcome is unknown."""
        if not await confirm(
            self,
            "Abandon call",
            "Mooring will stop waiting for this call's outcome. Nothing is sent to the server.",
            "Abandon",
        ):
            return
        record = await self.host.abandon(record_id)
        self.feed.refresh(record)
        self.report.emit("Abandoned.")

    async def retry(self, record_id: str) -> None:
        """Send the call again, after a warning when it may run twice."""

        async def ask(warning: str) -> bool:
            return await confirm(
                self, "Retry call", warning, "Retry anyway", self.dialog_opened.emit
            )

        new = await self.host.retry(record_id, confirm=ask)
        if new is not None:
            self.feed.refresh(new)
            self.report.emit(f"Retried as {new.id[:8]}.")

    def _sign_in(self, record_id: str) -> None:
        self.sign_in_requested.emit(record_id)

    def open_answer(self, record_id: str) -> InputFormDialog | None:
        """Open the input form for the task's first open question (one form per task)."""
        if record_id in self.forms:
            self.forms[record_id].raise_()
            self.forms[record_id].activateWindow()
            return self.forms[record_id]
        view = self.model.view(record_id)
        if view is None:
            return None
        questions = [q for q in view.open_questions if is_form(q)]
        if not questions:
            return None
        question = questions[0]

        async def submit(reply: object) -> object:
            assert isinstance(reply, dict)
            return await self.host.answer(record_id, question.key, reply)

        dialog = InputFormDialog(
            server=view.server_label,
            tool=view.record.tool,
            question=question,
            submit=submit,
            parent=self.window(),
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda _r: self.forms.pop(record_id, None))
        dialog.answered.connect(lambda: self.report.emit("Answer saved and sent."))
        self.forms[record_id] = dialog
        dialog.open()
        return dialog
