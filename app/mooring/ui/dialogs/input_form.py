"""The form for a task that needs input: the server's question, generated from its schema.

It says which server and tool ask and what for, checks the answer with
:func:`mooring.core.elicitation.validate` before anything happens, and hands the reply to a
``submit`` coroutine (the host's :meth:`~mooring.core.host_api.HostApi.answer`, which saves the
answer before sending it). A server's message and field texts are shown as plain text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from mooring.core.elicitation import (
    InvalidAnswer,
    SchemaError,
    accept,
    decline,
    fields_of,
)
from mooring.core.tasks.inputs import TaskInput
from mooring.ui.qt_async import Jobs, error_text
from mooring.ui.text import inert
from mooring.ui.widgets.schema_form import SchemaForm

Submit = Callable[[Mapping[str, Any]], Awaitable[object]]


def form_title(server: str) -> str:
    """The dialog's title: whose question it is."""
    return f"{inert(server, limit=80)} asks for your input"


class InputFormDialog(QDialog):
    """Answer one input request; :attr:`answered` fires once the host took the answer."""

    answered = Signal()

    def __init__(
        self,
        *,
        server: str,
        tool: str,
        question: TaskInput,
        submit: Submit,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.question = question
        self._submit = submit
        self._jobs = Jobs(self._show_error)
        self.setWindowTitle(form_title(server))
        self.setObjectName("input-form")
        self.resize(520, 420)
        layout = QVBoxLayout(self)

        who = QLabel(self)
        who.setTextFormat(Qt.TextFormat.PlainText)
        who.setWordWrap(True)
        who.setText(
            f"{inert(server, limit=80)} is running {inert(tool, limit=120)} "
            "and needs an answer to go on:"
        )
        layout.addWidget(who)
        message = question.params.get("message")
        self.message_label = QLabel(self)
        self.message_label.setObjectName("question-message")
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        self.message_label.setWordWrap(True)
        self.message_label.setText(
            inert(message or "(no question text)", limit=4000, multiline=True)
        )
        layout.addWidget(self.message_label)

        schema = question.params.get("requestedSchema")
        try:
            fields = fields_of(schema if isinstance(schema, Mapping) else None)
            self.form: SchemaForm | None = SchemaForm(fields, self)
        except SchemaError as exc:
            self.form = None
            layout.addWidget(
                self._plain(
                    f"This question cannot be shown as a form ({exc}). "
                    "You can decline it, or cancel the task."
                )
            )
        if self.form is not None:
            scroll = QScrollArea(self)
            scroll.setWidgetResizable(True)
            scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            scroll.setWidget(self.form)
            layout.addWidget(scroll, stretch=1)

        self.error_label = self._plain("")
        self.error_label.setObjectName("form-error")
        self.error_label.setStyleSheet("color: #c0392b;")
        self.error_label.hide()
        layout.addWidget(self.error_label)

        row = QHBoxLayout()
        self.send_button = QPushButton("Send answer", self)
        self.send_button.setAccessibleName("Send answer")
        self.send_button.setDefault(True)
        self.send_button.setEnabled(self.form is not None)
        self.decline_button = QPushButton("Decline", self)
        self.decline_button.setAccessibleName("Decline")
        self.later_button = QPushButton("Answer later", self)
        self.later_button.setAccessibleName("Answer later")
        row.addStretch(1)
        row.addWidget(self.later_button)
        row.addWidget(self.decline_button)
        row.addWidget(self.send_button)
        layout.addLayout(row)
        self.send_button.clicked.connect(self._on_send)
        self.decline_button.clicked.connect(lambda: self._send(decline()))
        self.later_button.clicked.connect(self.reject)

    def _plain(self, text: str) -> QLabel:
        label = QLabel(self)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setText(text)
        return label

    def _show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.show()
        self._busy(False)

    def _busy(self, busy: bool) -> None:
        for button in (self.send_button, self.decline_button):
            button.setEnabled(not busy)
        if self.form is None:
            self.send_button.setEnabled(False)

    def _on_send(self) -> None:
        if self.form is None:
            return
        try:
            content = self.form.checked_content()
        except InvalidAnswer:
            self._show_error("Some answers need fixing; nothing was sent.")
            return
        self._send(accept(content))

    def _send(self, reply: Mapping[str, Any]) -> None:
        self.error_label.hide()
        self._busy(True)
        self._jobs.start(self._deliver(reply))

    async def _deliver(self, reply: Mapping[str, Any]) -> None:
        try:
            await self._submit(reply)
        except Exception as exc:  # noqa: BLE001  # shown in the form; nothing is lost
            self._show_error(error_text(exc))
            return
        self.answered.emit()
        self.accept()
