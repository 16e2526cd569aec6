"""The approval question as a dialog: everything the user needs to decide, nothing hidden.

:class:`ApprovalDialog` shows one :class:`ApprovalRequest` (server, tool, the arguments in full
as pretty JSON, why the policy asked, what the call would touch) with one real button per
decision. :class:`DialogAsker` is the window's ``ask`` for the approval broker: it opens the
dialog with ``open()`` and awaits a future, never ``exec()``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome, ApprovalRequest
from mooring.core.approval.rules import Scope
from mooring.ui.text import inert

TITLE = "Approve tool call"


def plain_label(text: str, parent: QWidget, *, wrap: bool = True) -> QLabel:
    """A label that never interprets its text as rich text (server text is hostile)."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def pretty_arguments(arguments: object) -> str:
    """The arguments as indented JSON, every string neutralised (bidi, controls visible)."""
    text = json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    return inert(text, multiline=True)


class ApprovalDialog(QDialog):
    """One approval question; emits :attr:`decided` once with the user's answer."""

    decided = Signal(object)
    """The :class:`ApprovalAnswer` (closing the dialog counts as dismissing the question)."""

    def __init__(self, request: ApprovalRequest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request = request
        self._answered = False
        self.setWindowTitle(TITLE)
        self.setObjectName("approval-dialog")
        self.setAccessibleName(TITLE)
        self.setModal(True)
        self.resize(620, 520)
        layout = QVBoxLayout(self)

        server = inert(request.server_alias, limit=200)
        tool = inert(request.tool, limit=200)
        heading = plain_label(f"{server} wants to run {tool}", self)
        font = heading.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        heading.setFont(font)
        layout.addWidget(heading)

        form = QFormLayout()
        self.server_label = plain_label(server, self)
        self.tool_label = plain_label(tool, self)
        self.reason_label = plain_label(inert(request.reason, limit=1000), self)
        form.addRow("Server:", self.server_label)
        form.addRow("Tool:", self.tool_label)
        form.addRow("Why you are asked:", self.reason_label)
        if request.destructive:
            warning = plain_label("The server says this tool may delete or overwrite data.", self)
            warning.setObjectName("destructive-warning")
            form.addRow("Warning:", warning)
        if request.preview:
            touches = "\n".join(inert(line, limit=500) for line in request.preview)
            self.preview_label = plain_label(touches, self)
            form.addRow("Touches:", self.preview_label)
        layout.addLayout(form)

        layout.addWidget(plain_label("Arguments (in full):", self))
        self.arguments_view = QPlainTextEdit(self)
        self.arguments_view.setObjectName("approval-arguments")
        self.arguments_view.setAccessibleName("Arguments")
        self.arguments_view.setReadOnly(True)
        self.arguments_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.arguments_view.setPlainText(pretty_arguments(request.arguments))
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.arguments_view.setFont(mono)
        layout.addWidget(self.arguments_view, stretch=1)

        allow_row = QHBoxLayout()
        deny_row = QHBoxLayout()
        self.buttons: dict[str, QPushButton] = {}
        choices: list[tuple[str, ApprovalAnswer, QHBoxLayout]] = [
            ("Allow once", ApprovalAnswer(ApprovalOutcome.APPROVED), allow_row),
        ]
        if request.conversation_id is not None:
            choices.append(
                (
                    "Allow in this conversation",
                    ApprovalAnswer(ApprovalOutcome.APPROVED, Scope.CONVERSATION),
                    allow_row,
                )
            )
        choices += [
            (
                "Always allow this tool",
                ApprovalAnswer(ApprovalOutcome.APPROVED, Scope.ALWAYS),
                allow_row,
            ),
            ("Deny", ApprovalAnswer(ApprovalOutcome.DENIED), deny_row),
            (
                "Always deny this tool",
                ApprovalAnswer(ApprovalOutcome.DENIED, Scope.ALWAYS),
                deny_row,
            ),
        ]
        for text, answer, row in choices:
            button = QPushButton(text, self)
            button.setAccessibleName(text)
            button.setAutoDefault(False)
            button.clicked.connect(lambda _=False, a=answer: self._answer(a))
            row.addWidget(button)
            self.buttons[text] = button
        allow_row.addStretch(1)
        deny_row.addStretch(1)
        layout.addLayout(allow_row)
        layout.addLayout(deny_row)
        # Nothing is pre-selected for Enter: an approval is always a deliberate press.
        self.buttons["Deny"].setFocus()

    def _answer(self, answer: ApprovalAnswer) -> None:
        if self._answered:
            return
        self._answered = True
        self.decided.emit(answer)
        self.accept()

    def reject(self) -> None:
        """Esc or closing the window dismisses the question (the call is not sent)."""
        if not self._answered:
            self._answered = True
            self.decided.emit(ApprovalAnswer(ApprovalOutcome.CANCELLED))
        super().reject()


class DialogAsker:
    """The window's ``ask`` for the approval broker: one dialog per question, awaited."""

    def __init__(self, parent: Callable[[], QWidget | None] = lambda: None) -> None:
        self._parent = parent
        self.open_dialogs: list[ApprovalDialog] = []
        self.on_open: list[Callable[[ApprovalDialog], None]] = []
        """Called with each dialog once it is shown (tests and probes watch this)."""

    def set_parent(self, parent: Callable[[], QWidget | None]) -> None:
        """Open later dialogs over this widget (the main window, once it exists)."""
        self._parent = parent

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        future: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
        dialog = ApprovalDialog(request, self._parent())

        def decided(answer: object) -> None:
            if not future.done() and isinstance(answer, ApprovalAnswer):
                future.set_result(answer)

        dialog.decided.connect(decided)
        dialog.open()
        dialog.raise_()
        dialog.activateWindow()
        self.open_dialogs.append(dialog)
        for callback in list(self.on_open):
            callback(dialog)
        try:
            return await future
        finally:
            # Withdrawn (window closing, Ctrl-C) or answered: the dialog goes either way.
            self.open_dialogs.remove(dialog)
            if not future.done():
                dialog.decided.disconnect(decided)
            if dialog.isVisible():
                dialog._answered = True
                dialog.done(QDialog.DialogCode.Rejected)
            dialog.deleteLater()
