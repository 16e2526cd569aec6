"""The composer's pickers: ``/`` at the start of an empty message chooses a server's prompt,
``@`` (at the start or after a space) attaches a server's resource.

A prompt with arguments asks for them in a form (:class:`~mooring.ui.widgets.schema_form.
SchemaForm` over the arguments as a JSON schema); its messages' text then fills the composer,
and the user sends it. An attached resource is read at once (its text, size-limited: see
:data:`~mooring.core.library.ATTACHMENT_LIMIT`) and goes with the next message. Every name and
description comes from a server: shown inert, never as rich text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from mooring.core.elicitation import InvalidAnswer, fields_of
from mooring.core.host_api import LibraryApi
from mooring.core.library import (
    ATTACHMENT_LIMIT,
    Attachment,
    PromptInfo,
    ResourceInfo,
    arguments_schema,
    expand_template,
    template_schema,
)
from mooring.ui.qt_async import Jobs, wait_dialog
from mooring.ui.text import inert, plain_tooltip
from mooring.ui.widgets.schema_form import SchemaForm

_MOVES = frozenset({Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown})


@dataclass(frozen=True, slots=True)
class Choice:
    """One row of a picker: what it shows and what choosing it gives."""

    label: str
    description: str
    value: Any


class PickerDialog(QDialog):
    """A filterable list: type to narrow it, Up and Down to move, Enter to choose, Esc to
    leave."""

    def __init__(self, title: str, choices: Sequence[Choice], parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("composer-picker")
        self.resize(560, 360)
        self.choices = tuple(choices)
        layout = QVBoxLayout(self)
        self.heading = QLabel(f"{title}: type to narrow, Enter chooses, Esc leaves.", self)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.heading)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setAccessibleName("Find")
        self.filter_edit.setPlaceholderText("Type to find")
        layout.addWidget(self.filter_edit)
        self.list = QListWidget(self)
        self.list.setObjectName("picker-list")
        self.list.setAccessibleName(title)
        # A row is the name, and under it what the server says of it: wrapped, never scrolled
        # sideways.
        self.list.setWordWrap(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setAlternatingRowColors(True)
        for index, choice in enumerate(self.choices):
            shown = inert(choice.label, limit=120)
            if choice.description:
                shown += "\n" + inert(choice.description, limit=160)
            item = QListWidgetItem(shown, self.list)
            item.setData(Qt.ItemDataRole.UserRole, index)
            if choice.description:
                item.setToolTip(plain_tooltip(inert(choice.description, limit=2000)))
        layout.addWidget(self.list, stretch=1)
        self.empty_label = QLabel("Nothing to choose from.", self)
        self.empty_label.setTextFormat(Qt.TextFormat.PlainText)
        self.empty_label.setVisible(not self.choices)
        layout.addWidget(self.empty_label)
        if self.choices:
            self.list.setCurrentRow(0)
        self.filter_edit.textChanged.connect(self._filter)
        self.filter_edit.returnPressed.connect(self._choose)
        self.filter_edit.installEventFilter(self)
        self.list.itemActivated.connect(lambda _item: self._choose())
        self.filter_edit.setFocus()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt API
        if (
            watched is self.filter_edit
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in _MOVES
        ):
            self.list.keyPressEvent(event)  # the list moves; the typing stays in the filter
            return True
        return super().eventFilter(watched, event)

    def _filter(self, text: str) -> None:
        needle = text.strip().lower()
        first = -1
        for row in range(self.list.count()):
            item = self.list.item(row)
            hidden = needle not in item.text().lower()
            item.setHidden(hidden)
            if not hidden and first < 0:
                first = row
        current = self.list.currentItem()
        if current is None or current.isHidden():
            self.list.setCurrentRow(first)

    def chosen(self) -> Any:
        """The value of the chosen row (``None``: none)."""
        item = self.list.currentItem()
        if item is None or item.isHidden():
            return None
        return self.choices[int(item.data(Qt.ItemDataRole.UserRole))].value

    def _choose(self) -> None:
        if self.chosen() is not None:
            self.accept()


class ValuesDialog(QDialog):
    """A prompt's arguments, or a resource template's variables, as a form; OK only once the
    required ones are filled in."""

    def __init__(
        self, title: str, about_text: str, schema: dict[str, Any], parent: QWidget | None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(inert(title, limit=100))
        self.setObjectName("picker-values")
        layout = QVBoxLayout(self)
        about = QLabel(inert(about_text, limit=600, multiline=True), self)
        about.setTextFormat(Qt.TextFormat.PlainText)
        about.setWordWrap(True)
        layout.addWidget(about)
        self.form = SchemaForm(fields_of(schema), self)
        layout.addWidget(self.form)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self._on_ok)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.values: dict[str, str] = {}
        first = next(iter(self.form.inputs.values()), None)
        if first is not None:
            first.setFocus()

    def _on_ok(self) -> None:
        try:
            content = self.form.checked_content()
        except InvalidAnswer:
            return  # the form shows what to fix
        self.values = {name: str(value) for name, value in content.items()}
        self.accept()


class ComposerPicker(QObject):
    """Watches a composer for ``/`` and ``@``; keeps the resources attached to the next
    message (:meth:`take_attachments`)."""

    dialog_opened = Signal(object)
    """A picker or a prompt's form opened (the dialog)."""
    prompt_filled = Signal(str)
    """A prompt's text was put in the composer (the prompt's ``server/name``)."""
    attachments_changed = Signal()

    def __init__(
        self,
        composer: QPlainTextEdit,
        library: Callable[[], LibraryApi],
        report: Callable[[str], None],
    ) -> None:
        super().__init__(composer)
        self.composer = composer
        self._library = library
        self._report = report
        self.jobs = Jobs(report)
        self.attachments: list[Attachment] = []
        self.row = QWidget(composer.parentWidget())
        """The attached resources, shown above the composer (hidden while there are none)."""
        row = QHBoxLayout(self.row)
        row.setContentsMargins(0, 0, 0, 0)
        self.attached_label = QLabel(self.row)
        self.attached_label.setAccessibleName("Attached resources")
        self.attached_label.setTextFormat(Qt.TextFormat.PlainText)
        self.attached_label.setWordWrap(True)
        row.addWidget(self.attached_label, stretch=1)
        self.clear_button = QPushButton("Remove attachments", self.row)
        self.clear_button.setAccessibleName("Remove attachments")
        self.clear_button.setToolTip("Send the next message without the attached resources")
        self.clear_button.clicked.connect(self.clear_attachments)
        row.addWidget(self.clear_button)
        self.row.hide()
        composer.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt API
        if (
            watched is self.composer
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
        ):
            text = event.text()
            if text == "/" and not self.composer.toPlainText():
                if not self.jobs:  # one picker at a time
                    self.jobs.start(self.choose_prompt())
                return True
            if text == "@" and self._at_word_start():
                if not self.jobs:
                    self.jobs.start(self.choose_resource())
                return True
        return super().eventFilter(watched, event)

    def _at_word_start(self) -> bool:
        cursor = self.composer.textCursor()
        before = self.composer.toPlainText()[: cursor.position()]
        return not before or before[-1].isspace()

    # -- prompts -------------------------------------------------------------------------------

    async def choose_prompt(self) -> None:
        """List every reachable server's prompts; the chosen one (its arguments asked for)
        fills the composer. Left without choosing, the ``/`` is typed after all."""
        prompts = await self._library().prompts()
        choices = [Choice(p.label, p.description or p.title, p) for p in prompts]
        picker = PickerDialog("Prompts", choices, self.composer.window())
        chosen = picker.chosen() if await wait_dialog(picker, self.dialog_opened.emit) else None
        picker.deleteLater()
        if not isinstance(chosen, PromptInfo):
            self.composer.insertPlainText("/")
            return
        arguments: dict[str, str] = {}
        if chosen.arguments:
            about = chosen.description or chosen.title
            schema = arguments_schema(chosen)
            form = ValuesDialog(f"Prompt {chosen.label}", about, schema, self.composer.window())
            accepted = await wait_dialog(form, self.dialog_opened.emit)
            arguments = form.values
            form.deleteLater()
            if not accepted:
                return
        text = await self._library().get_prompt(chosen.server_alias, chosen.name, arguments)
        # The server's words, shown and then sent: control and bidi characters made visible.
        self.composer.setPlainText(inert(text.text, multiline=True))
        self.composer.moveCursor(QTextCursor.MoveOperation.End)
        self.composer.setFocus()
        self.prompt_filled.emit(chosen.label)

    # -- resources -----------------------------------------------------------------------------

    async def choose_resource(self) -> None:
        """List every reachable server's resources and resource templates (a template's
        variables are asked for in a form); the chosen one is read and attached to the next
        message."""
        choices = [
            Choice(
                r.label + (" (template)" if r.template else ""),
                r.description or r.title or r.name,
                r,
            )
            for r in await self._library().resources()
        ]
        picker = PickerDialog("Resources", choices, self.composer.window())
        chosen = picker.chosen() if await wait_dialog(picker, self.dialog_opened.emit) else None
        picker.deleteLater()
        if not isinstance(chosen, ResourceInfo):
            self.composer.insertPlainText("@")
            return
        uri = chosen.uri
        if chosen.template:
            about = chosen.description or chosen.title or chosen.name
            schema = template_schema(chosen)
            form = ValuesDialog(chosen.label, about, schema, self.composer.window())
            accepted = await wait_dialog(form, self.dialog_opened.emit)
            values = form.values
            form.deleteLater()
            if not accepted:
                return
            uri = expand_template(uri, values)
        attachment = await self._library().attach(chosen.server_alias, uri)
        self.attach(attachment)
        if attachment.truncated:
            self._report(
                f"{inert(chosen.label, limit=120)} is longer than {ATTACHMENT_LIMIT:,} "
                "characters: only its beginning goes with the message."
            )

    def attach(self, *attachments: Attachment) -> None:
        """Attach read resources to the next message."""
        self.attachments.extend(attachments)
        self._show_attachments()

    def take_attachments(self) -> tuple[Attachment, ...]:
        """The resources for the message being sent (no longer shown as attached)."""
        taken = tuple(self.attachments)
        self.clear_attachments()
        return taken

    def clear_attachments(self) -> None:
        """Attach nothing to the next message."""
        self.attachments.clear()
        self._show_attachments()

    def _show_attachments(self) -> None:
        names = ", ".join(inert(f"{a.server_alias}:{a.uri}", limit=120) for a in self.attachments)
        self.attached_label.setText(f"Attached: {names}" if names else "")
        self.row.setVisible(bool(self.attachments))
        self.attachments_changed.emit()
