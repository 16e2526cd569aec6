"""Files attached to the next message: picked (*Attach file…*, Ctrl+Shift+A) or dropped on the
composer, shown as removable chips above it.

Each file is read and checked at once (:func:`~mooring.core.files.attach_file`): one that is
too big, or neither UTF-8 text nor a PNG, JPEG, GIF or WebP image, is refused with the limits in
words and nothing else changes. A chip is a button named after its file: Delete or Backspace
(or pressing it) removes it. File names are shown as plain text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QFileDialog, QHBoxLayout, QPushButton, QWidget

from mooring.core.errors import KnownError
from mooring.core.files import (
    IMAGE_LIMIT,
    LIMITS_WORDS,
    FileAttachment,
    FileKind,
    attach_file,
    check_total,
    size_words,
)
from mooring.core.ids import new_id
from mooring.ui.qt_async import Jobs, wait_dialog
from mooring.ui.text import inert

__all__ = ["FileChip", "FileTray"]

ATTACH_TIP = f"Attach files to the next message (Ctrl+Shift+A): {LIMITS_WORDS}"


class FileChip(QPushButton):
    """One attached file: pressing it, Delete or Backspace removes it."""

    remove_requested = Signal(str)
    """The file's id."""

    def __init__(self, file: FileAttachment, parent: QWidget | None = None) -> None:
        name = inert(file.name, limit=60)
        super().__init__(f"{name} ({size_words(file.size)}) ✕", parent)
        self.file_id = file.id
        what = "image" if file.kind is FileKind.IMAGE else "file"
        self.setAccessibleName(f"Attached {what} {name}, {size_words(file.size)}")
        self.setAccessibleDescription("Press Delete or Backspace to remove it")
        self.setToolTip(f"{name}: press to remove it from the message")
        self.clicked.connect(lambda: self.remove_requested.emit(self.file_id))

    def keyPressEvent(self, event: QKeyEvent) -> None:  # Qt API
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.remove_requested.emit(self.file_id)
            return
        super().keyPressEvent(event)


class FileTray(QWidget):
    """The *Attach file…* button and the chips of the files attached to the next message."""

    files_changed = Signal()

    def __init__(
        self,
        jobs: Jobs,
        report: Callable[[KnownError], None],
        parent: QWidget | None = None,
        on_dialog: Callable[[QDialog], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self._report = report
        self._on_dialog = on_dialog
        self.files: list[FileAttachment] = []
        self.chips: list[FileChip] = []
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self.attach_button = QPushButton("Attach file…", self)
        self.attach_button.setAccessibleName("Attach file")
        self.attach_button.setToolTip(ATTACH_TIP)
        self.attach_button.clicked.connect(lambda: jobs.start(self.pick()))
        self._row.addWidget(self.attach_button)
        self._row.addStretch(1)

    async def pick(self) -> None:
        """Ask for files (a file dialog, opened window-modally) and attach them."""
        dialog = QFileDialog(self.window(), "Attach files")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setAccessibleName("Attach files")
        dialog.setLabelText(QFileDialog.DialogLabel.Accept, "Attach")
        # The files as chosen when Attach was pressed: asked afterwards, a dialog whose listing
        # was still being read can answer with none.
        chosen: list[str] = []
        dialog.filesSelected.connect(chosen.extend)
        if await wait_dialog(dialog, self._on_dialog) == QFileDialog.DialogCode.Accepted:
            self.add_paths(chosen or dialog.selectedFiles())
        dialog.deleteLater()

    def add_paths(self, paths: Iterable[str]) -> bool:
        """Read and attach these files; the first that cannot be is reported and none of
        them is attached. Whether they were."""
        try:
            read = [_read(Path(p)) for p in paths]
            check_total([*self.files, *read])
        except KnownError as exc:
            self._report(exc)
            return False
        self.add(read)
        return True

    def add(self, files: Sequence[FileAttachment]) -> None:
        """Attach read files (given back after a refusal, say)."""
        for file in files:
            chip = FileChip(file, self)
            chip.remove_requested.connect(self.remove)
            self._row.insertWidget(1 + len(self.chips), chip)
            self.chips.append(chip)
            self.files.append(file)
        self.files_changed.emit()

    def take(self) -> tuple[FileAttachment, ...]:
        """The files for the message being sent (no longer shown as attached)."""
        taken = tuple(self.files)
        for chip in self.chips:
            self._drop_chip(chip)
        self.chips.clear()
        self.files.clear()
        self.files_changed.emit()
        return taken

    def remove(self, file_id: str) -> None:
        """Take one file off the next message (the focus moves to a neighbour)."""
        at = next((n for n, f in enumerate(self.files) if f.id == file_id), None)
        if at is None:
            return
        del self.files[at]
        self._drop_chip(self.chips.pop(at))
        if self.chips:
            self.chips[min(at, len(self.chips) - 1)].setFocus()
        else:
            self.attach_button.setFocus()
        self.files_changed.emit()

    def _drop_chip(self, chip: FileChip) -> None:
        self._row.removeWidget(chip)
        chip.hide()
        chip.deleteLater()


def _read(path: Path) -> FileAttachment:
    try:
        with path.open("rb") as stream:
            data = stream.read(IMAGE_LIMIT + 1)
    except OSError as exc:
        raise KnownError(
            f"Cannot read {inert(path.name, limit=120)}: {exc.strerror or exc}.", code="file"
        ) from None
    return attach_file(new_id(), path.name, data)
