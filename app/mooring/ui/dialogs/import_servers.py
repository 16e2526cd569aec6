"""Importing servers from Claude Desktop, VS Code and Cursor: every configuration file found,
its servers with a checkbox (new ones ticked), and why the others cannot be imported."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from mooring.core.server_import import ConfigPreview, EntryStatus, ImportEntry
from mooring.ui.text import inert, plain_tooltip

TITLE = "Import servers"
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
"""The :class:`ImportEntry` of a server row."""

NOTHING_FOUND = (
    "No Claude Desktop, VS Code or Cursor configuration was found on this computer. "
    "Add a server by hand with Add server…, or choose a configuration file with Import a "
    "file…."
)


class ImportDialog(QDialog):
    """Shows previews; :meth:`chosen` is what the user ticked. Opened with ``open()``."""

    choice_changed = Signal()

    def __init__(self, previews: list[ConfigPreview], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setObjectName("import-servers-dialog")
        self.resize(640, 420)
        layout = QVBoxLayout(self)
        self.intro = QLabel(self)
        self.intro.setWordWrap(True)
        self.intro.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.intro)
        self.model = QStandardItemModel(self)
        self.model.setHorizontalHeaderLabels(["Server", "What happens"])
        self.tree = QTreeView(self)
        self.tree.setObjectName("import-tree")
        self.tree.setAccessibleName("Servers found")
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        layout.addWidget(self.tree, stretch=1)
        self.buttons = QDialogButtonBox(self)
        self.import_button = self.buttons.addButton(
            "Import", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.import_button.setAccessibleName("Import")
        self.file_button = self.buttons.addButton(
            "Import a file…", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.file_button.setAccessibleName("Import a file")
        self.file_button.setToolTip("Read the servers of a configuration file you choose")
        cancel = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        cancel.setAccessibleName("Cancel")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.model.itemChanged.connect(lambda _item: self._update())
        self._fill(previews)

    def add_previews(self, previews: list[ConfigPreview]) -> None:
        """Show more files' servers (a file the user chose)."""
        self._fill(previews)

    def _fill(self, previews: list[ConfigPreview]) -> None:
        if not previews and not self.model.rowCount():
            self.intro.setText(NOTHING_FOUND)
        else:
            self.intro.setText(
                "Tick the servers to import. Their secrets (header and environment values) "
                "go to the keyring; nothing is started until you use a server."
            )
        for found in previews:
            title = f"{found.source.app} — {inert(found.source.path, limit=200)}"
            if found.problem:
                title += f" ({inert(found.problem, limit=300)})"
            file_item = QStandardItem(title)
            file_item.setEditable(False)
            file_item.setData(title, Qt.ItemDataRole.AccessibleTextRole)
            file_item.setToolTip(plain_tooltip(title))
            for entry in found.entries:
                file_item.appendRow(self._row(entry))
            self.model.appendRow(file_item)
            # The file's row spans both columns: its path is long, its servers' names short.
            self.tree.setFirstColumnSpanned(self.model.rowCount() - 1, QModelIndex(), True)
        self.tree.expandAll()
        self.tree.setColumnWidth(0, 200)
        self._update()

    def _row(self, entry: ImportEntry) -> list[QStandardItem]:
        name = inert(entry.name, limit=80)
        item = QStandardItem(name)
        item.setEditable(False)
        item.setData(entry, ENTRY_ROLE)
        server = entry.server
        if entry.status is EntryStatus.NEW and server is not None:
            item.setCheckable(True)
            item.setCheckState(Qt.CheckState.Checked)
            what = f"new: {inert(server.target, limit=200)}"
        else:
            item.setEnabled(False)
            what = f"{entry.status.value}: {inert(entry.reason, limit=200)}"
        reason = QStandardItem(what)
        reason.setEditable(False)
        reason.setToolTip(plain_tooltip(what))
        item.setData(f"{name}, {what}", Qt.ItemDataRole.AccessibleTextRole)
        reason.setData(what, Qt.ItemDataRole.AccessibleTextRole)
        return [item, reason]

    def entry_items(self) -> list[QStandardItem]:
        """Every server row (first column), in order."""
        items: list[QStandardItem] = []
        for row in range(self.model.rowCount()):
            parent = self.model.item(row)
            items.extend(parent.child(child) for child in range(parent.rowCount()))
        return items

    def chosen(self) -> list[ImportEntry]:
        """The ticked new entries."""
        chosen: list[ImportEntry] = []
        for item in self.entry_items():
            entry = item.data(ENTRY_ROLE)
            if (
                isinstance(entry, ImportEntry)
                and item.isCheckable()
                and item.checkState() == Qt.CheckState.Checked
            ):
                chosen.append(entry)
        return chosen

    def _update(self) -> None:
        count = len(self.chosen())
        self.import_button.setEnabled(count > 0)
        self.import_button.setText(f"Import {count}" if count else "Import")
        self.choice_changed.emit()
