"""A form built from :func:`mooring.core.elicitation.fields_of`: one input per field.

Used by the input form (a server's question) and the tool palette (a tool's input schema). The
form only collects values; checking them is :func:`mooring.core.elicitation.validate`'s job,
and the problems it finds are shown beside their fields. Titles and descriptions come from a
server: they are shown as plain, neutralised text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from mooring.core.elicitation import Field, FieldKind, InvalidAnswer, Problem, parse_text, validate
from mooring.ui.text import inert, plain_tooltip


def _plain(text: str, parent: QWidget) -> QLabel:
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    label.setWordWrap(True)
    return label


class SchemaForm(QWidget):
    """Inputs for ``fields``; :meth:`checked_content` returns what to send or raises."""

    def __init__(self, fields: Sequence[Field], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fields = tuple(fields)
        self.inputs: dict[str, QWidget] = {}
        self.errors: dict[str, QLabel] = {}
        self._touched: set[str] = set()
        layout = QFormLayout(self)
        layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for item in self.fields:
            title = inert(item.title, limit=120) + (" *" if item.required else "")
            editor = self._editor(item)
            editor.setObjectName(f"field-{item.name}")
            editor.setAccessibleName(inert(item.title, limit=120))
            if item.description:
                editor.setAccessibleDescription(inert(item.description, limit=500))
                editor.setToolTip(plain_tooltip(inert(item.description, limit=500)))
            box = QWidget(self)
            column = QVBoxLayout(box)
            column.setContentsMargins(0, 0, 0, 0)
            column.addWidget(editor)
            if item.description:
                hint = _plain(inert(item.description, limit=500, multiline=True), box)
                hint.setEnabled(False)
                column.addWidget(hint)
            error = _plain("", box)
            error.setObjectName(f"error-{item.name}")
            error.setStyleSheet("color: #c0392b;")
            error.hide()
            column.addWidget(error)
            label = QLabel(title + ":", self)
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setBuddy(editor)
            layout.addRow(label, box)
            self.inputs[item.name] = editor
            self.errors[item.name] = error

    def _editor(self, item: Field) -> QWidget:
        default = item.default
        match item.kind:
            case FieldKind.BOOLEAN:
                check = QCheckBox(inert(item.title, limit=120), self)
                check.setChecked(bool(default))
                check.toggled.connect(lambda _=False, n=item.name: self._touched.add(n))
                return check
            case FieldKind.CHOICE:
                combo = QComboBox(self)
                if not item.required or default is None:
                    combo.addItem("— choose —", None)
                for option in item.options:
                    combo.addItem(inert(option.label, limit=120), option.value)
                if default is not None:
                    found = combo.findData(str(default))
                    if found >= 0:
                        combo.setCurrentIndex(found)
                return combo
            case FieldKind.CHOICES:
                listing = QListWidget(self)
                chosen = {str(v) for v in default} if isinstance(default, list) else set()
                for option in item.options:
                    entry = QListWidgetItem(inert(option.label, limit=120), listing)
                    entry.setData(Qt.ItemDataRole.UserRole, option.value)
                    entry.setFlags(entry.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    entry.setCheckState(
                        Qt.CheckState.Checked if option.value in chosen else Qt.CheckState.Unchecked
                    )
                listing.setMaximumHeight(24 * min(len(item.options), 6) + 8)
                return listing
            case _:
                line = QLineEdit(self)
                if default is not None:
                    line.setText(str(default))
                line.setPlaceholderText(inert(item.hint, limit=120))
                return line

    def raw_content(self) -> tuple[dict[str, Any], list[Problem]]:
        """What the user entered, as values of the schema's types, and unparseable entries."""
        content: dict[str, Any] = {}
        problems: list[Problem] = []
        for item in self.fields:
            editor = self.inputs[item.name]
            if isinstance(editor, QCheckBox):
                if item.required or item.default is not None or item.name in self._touched:
                    content[item.name] = editor.isChecked()
            elif isinstance(editor, QComboBox):
                value = editor.currentData()
                if value is not None:
                    content[item.name] = value
            elif isinstance(editor, QListWidget):
                picked = [
                    str(editor.item(i).data(Qt.ItemDataRole.UserRole))
                    for i in range(editor.count())
                    if editor.item(i).checkState() == Qt.CheckState.Checked
                ]
                if picked or item.required:
                    content[item.name] = picked
            elif isinstance(editor, QLineEdit):
                text = editor.text()
                if not text.strip() and item.kind is not FieldKind.TEXT:
                    continue
                if not text and item.kind is FieldKind.TEXT:
                    continue
                try:
                    content[item.name] = parse_text(item, text)
                except InvalidAnswer as exc:
                    problems.extend(exc.problems)
        return content, problems

    def checked_content(self) -> dict[str, Any]:
        """The content, checked against the fields; shows every problem and raises
        :class:`InvalidAnswer` when there is one (nothing is sent then)."""
        content, problems = self.raw_content()
        try:
            checked = validate(self.fields, content)
        except InvalidAnswer as exc:
            problems.extend(p for p in exc.problems if p.field not in {q.field for q in problems})
        if problems:
            self.show_problems(problems)
            raise InvalidAnswer(problems)
        self.show_problems(())
        return checked

    def show_problems(self, problems: Sequence[Problem]) -> None:
        """Show each problem under its field (and clear the others)."""
        by_field: Mapping[str, str] = {p.field: p.message for p in problems}
        first: QWidget | None = None
        for name, label in self.errors.items():
            message = by_field.get(name)
            label.setVisible(message is not None)
            label.setText(
                f"This {message}."
                if message and message.startswith("is ")
                else (f"{message[0].upper()}{message[1:]}." if message else "")
            )
            if message is not None and first is None:
                first = self.inputs[name]
        if first is not None:
            first.setFocus()
