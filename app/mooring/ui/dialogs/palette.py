"""The tool palette (Ctrl+K): run any tool of any server directly, with a form from its input
schema — Mooring is useful with no model configured.

A schema that is not a flat object of simple fields gets a JSON editor instead of a form. The
call itself goes through the host (approval first), after the palette closed.

It opens on a server whose connection is ready (a failed one may sort first), on a read-only
tool of it, else a non-destructive one (annotations are the server's claims; the approval
dialog still asks). Tab follows reading order: the tool list, the tool's argument fields, Run,
Close — rebuilt for each tool's form.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from mooring.core.elicitation import InvalidAnswer, SchemaError, fields_of
from mooring.core.ports import ConnectionState
from mooring.core.servers import ServerDefinition
from mooring.core.tools import ToolInfo
from mooring.core.views import ServerView
from mooring.ui.qt_async import Jobs
from mooring.ui.text import inert, plain_tooltip
from mooring.ui.widgets.schema_form import SchemaForm

if TYPE_CHECKING:
    from mooring.core.host_api import HostApi

TITLE = "Run a tool"


def readiness(view: ServerView) -> int:
    """How good a first choice a server is (lower is better): ready, then not known yet or
    connecting, then failed or stopped."""
    state = view.connection.state if view.connection is not None else None
    if state is ConnectionState.READY:
        return 0
    if state is None or state is ConnectionState.CONNECTING:
        return 1
    return 2


def riskiness(info: ToolInfo) -> int:
    """How good a first choice a tool is (lower is better): read-only, then claimed not
    destructive, then unannotated (MCP presumes such a tool may be destructive), then
    destructive."""
    hints = info.annotations
    if hints.read_only:
        return 0
    if hints.destructive is False:
        return 1
    if hints.destructive is None:
        return 2
    return 3


class ToolPalette(QDialog):
    """Choose a server and a tool, fill in its arguments, run it."""

    run_requested = Signal(object, str, object)
    """(server definition, tool name, arguments) once the arguments are valid."""
    tools_shown = Signal()

    def __init__(self, host: HostApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.setWindowTitle(TITLE)
        self.setObjectName("tool-palette")
        self.resize(720, 520)
        self.jobs = Jobs(self._say)
        self._servers: list[ServerDefinition] = []
        self._tools: list[ToolInfo] = []
        self.form: SchemaForm | None = None
        self.json_edit: QPlainTextEdit | None = None
        layout = QVBoxLayout(self)
        top = QFormLayout()
        self.server_combo = QComboBox(self)
        self.server_combo.setAccessibleName("Server")
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setAccessibleName("Find a tool")
        self.filter_edit.setPlaceholderText("Type to find a tool")
        top.addRow("Server:", self.server_combo)
        top.addRow("Find:", self.filter_edit)
        layout.addLayout(top)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.tool_list = QListWidget(splitter)
        self.tool_list.setObjectName("palette-tools")
        self.tool_list.setAccessibleName("Tools")
        right = QWidget(splitter)
        self.right = QVBoxLayout(right)
        self.right.setContentsMargins(0, 0, 0, 0)
        self.description_label = QLabel(right)
        self.description_label.setTextFormat(Qt.TextFormat.PlainText)
        self.description_label.setWordWrap(True)
        self.right.addWidget(self.description_label)
        self.form_area = QScrollArea(right)
        self.form_area.setWidgetResizable(True)
        # Not a Tab stop itself: Tab goes from the tool list straight to the first argument.
        self.form_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.right.addWidget(self.form_area, stretch=1)
        splitter.setStretchFactor(1, 2)
        layout.addWidget(splitter, stretch=1)
        self.message_label = QLabel(self)
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        self.message_label.setWordWrap(True)
        layout.addWidget(self.message_label)
        row = QHBoxLayout()
        row.addStretch(1)
        self.close_button = QPushButton("Close", self)
        self.close_button.setAccessibleName("Close")
        self.run_button = QPushButton("Run", self)
        self.run_button.setAccessibleName("Run")
        self.run_button.setDefault(True)
        self.run_button.setEnabled(False)
        row.addWidget(self.close_button)
        row.addWidget(self.run_button)
        layout.addLayout(row)
        self.close_button.clicked.connect(self.reject)
        self.run_button.clicked.connect(self._on_run)
        self.server_combo.currentIndexChanged.connect(lambda _i: self._load_tools())
        self.filter_edit.textChanged.connect(self._filter)
        self.tool_list.currentRowChanged.connect(lambda _r: self._show_tool())
        self.filter_edit.setFocus()
        self.finished.connect(lambda _r: self.jobs.cancel_soon())

    def _say(self, text: str) -> None:
        self.message_label.setText(text)

    async def load(self) -> None:
        """List the enabled servers (by name), choose the first ready one, show its tools."""
        views = [v for v in await self.host.server_desk.servers() if v.server.enabled]
        self._servers = [v.server for v in views]
        self.server_combo.blockSignals(True)
        self.server_combo.clear()
        for server in self._servers:
            self.server_combo.addItem(inert(server.alias, limit=80), server.id)
        if views:
            first = min(range(len(views)), key=lambda i: (readiness(views[i]), i))
            self.server_combo.setCurrentIndex(first)
        self.server_combo.blockSignals(False)
        if not self._servers:
            self._say("No servers yet: add one in the Servers panel.")
            return
        await self.show_tools()

    def choose_server(self, alias: str) -> None:
        """Pick a server by name."""
        for i, server in enumerate(self._servers):
            if server.alias == alias:
                self.server_combo.setCurrentIndex(i)

    def server(self) -> ServerDefinition | None:
        """The chosen server."""
        i = self.server_combo.currentIndex()
        return self._servers[i] if 0 <= i < len(self._servers) else None

    def _load_tools(self) -> None:
        self.jobs.start(self.show_tools())

    async def show_tools(self) -> None:
        """List the chosen server's tools (connecting to it if needed)."""
        server = self.server()
        if server is None:
            return
        self.tool_list.clear()
        self._tools = []
        self._say(f"Reading the tools of {inert(server.alias, limit=80)}…")
        tools = await self.host.server_desk.tools(server)
        if self.server() is not server:
            return
        if tools is None:
            self._say(f"{inert(server.alias, limit=80)} cannot be reached now.")
            return
        # A tool the server hides never runs: it is not listed at all (a filter cannot bring
        # it back).
        self._tools = sorted((t for t in tools if not server.hides(t.name)), key=lambda t: t.name)
        for info in self._tools:
            item = QListWidgetItem(inert(info.name, limit=120), self.tool_list)
            item.setData(Qt.ItemDataRole.UserRole, info.name)
        self._say("" if self._tools else "This server offers no tools.")
        self._filter(self.filter_edit.text())
        self.tools_shown.emit()

    def _filter(self, text: str) -> None:
        needle = text.strip().lower()
        by_name = {t.name: t for t in self._tools}
        best: tuple[int, int] | None = None
        for row in range(self.tool_list.count()):
            item = self.tool_list.item(row)
            match = needle in item.text().lower()
            item.setHidden(not match)
            info = by_name.get(item.data(Qt.ItemDataRole.UserRole))
            rank = (riskiness(info) if info is not None else 3, row)
            if match and (best is None or rank < best):
                best = rank
        if best is not None and (
            self.tool_list.currentRow() < 0 or self.tool_list.currentItem().isHidden()
        ):
            self.tool_list.setCurrentRow(best[1])

    def choose_tool(self, name: str) -> bool:
        """Pick a tool by name."""
        for row in range(self.tool_list.count()):
            if self.tool_list.item(row).data(Qt.ItemDataRole.UserRole) == name:
                self.tool_list.setCurrentRow(row)
                return True
        return False

    def tool(self) -> ToolInfo | None:
        """The chosen tool."""
        if self.tool_list.currentRow() < 0:
            return None
        name = self.tool_list.currentItem().data(Qt.ItemDataRole.UserRole)
        return next((t for t in self._tools if t.name == name), None)

    def _show_tool(self) -> None:
        info = self.tool()
        self.run_button.setEnabled(info is not None)
        self.form = None
        self.json_edit = None
        if info is None:
            self.description_label.setText("")
            self.form_area.setWidget(QWidget())
            self._order_tabs()
            return
        text = (info.description or info.name).strip()
        self.description_label.setText(inert(text.split("\n\n")[0], limit=400, multiline=True))
        self.description_label.setToolTip(plain_tooltip(inert(text, limit=4000, multiline=True)))
        try:
            self.form = SchemaForm(fields_of(info.input_schema or None), self)
            self.form_area.setWidget(self.form)
        except SchemaError:
            self.json_edit = QPlainTextEdit(self)
            self.json_edit.setAccessibleName("Arguments (JSON)")
            self.json_edit.setPlainText("{}")
            self.json_edit.setTabChangesFocus(True)
            self.form_area.setWidget(self.json_edit)
        self._order_tabs()

    def _order_tabs(self) -> None:
        """Tab in reading order: the tool list, this tool's argument inputs, Run, Close (the
        form is built after the buttons, so Qt's creation order would put it last)."""
        chain: list[QWidget] = [self.tool_list]
        if self.form is not None:
            chain.extend(self.form.inputs.values())
        elif self.json_edit is not None:
            chain.append(self.json_edit)
        chain += [self.run_button, self.close_button]
        for before, after in itertools.pairwise(chain):
            QWidget.setTabOrder(before, after)

    def arguments(self) -> dict[str, Any]:
        """The arguments entered, checked; raises ``ValueError`` saying what to fix."""
        if self.form is not None:
            return self.form.checked_content()
        if self.json_edit is not None:
            try:
                value = json.loads(self.json_edit.toPlainText() or "{}")
            except json.JSONDecodeError as exc:
                raise ValueError(f"The arguments are not valid JSON: {exc.msg}.") from exc
            if not isinstance(value, dict):
                raise ValueError("The arguments must be a JSON object.")
            return value
        return {}

    def _on_run(self) -> None:
        server, info = self.server(), self.tool()
        if server is None or info is None:
            return
        try:
            arguments = self.arguments()
        except InvalidAnswer:
            self._say("Some arguments need fixing.")
            return
        except ValueError as exc:
            self._say(str(exc))
            return
        self.run_requested.emit(server, info.name, arguments)
        self.accept()
