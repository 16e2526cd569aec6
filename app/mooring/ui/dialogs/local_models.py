"""Local models: the recommended model files (size, licence) and the ones in the data folder;
downloading one with a progress bar, resumable and checksum-checked (``adapters/model_files``).

The download runs on a worker thread; its progress reaches the bar through the event loop.
**Cancel** (or Esc) stops it at once, keeping the ``.part`` file: Download resumes it. Every
control has an accessible name and is reachable with Tab.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from mooring.adapters.model_files import Checksum, DownloadStop, download, installed
from mooring.core.local_models import CATALOGUE, CatalogueModel
from mooring.ui.qt_async import error_text

TITLE = "Local models"


class LocalModelsDialog(QDialog):
    """The catalogue and the model files here; Download fetches the selected one."""

    downloaded = Signal(str)
    """A download ended well (the file's path)."""
    failed = Signal(str)
    """A download stopped (what to say)."""
    cancelled = Signal(str)
    """The user stopped a download (what to say); the part fetched is kept."""

    def __init__(
        self,
        folder: Path,
        parent: QWidget | None = None,
        catalogue: Sequence[CatalogueModel] = CATALOGUE,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setObjectName("local-models-dialog")
        self.folder = folder
        self.catalogue = tuple(catalogue)
        self.busy = False
        self.task: asyncio.Future[None] | None = None
        """The download under way (kept: the loop holds its tasks weakly)."""
        self.stop: DownloadStop | None = None
        """Stops the download under way."""
        layout = QVBoxLayout(self)
        about = QLabel(
            "Models that run on this computer: no key, no network once downloaded. Add one as "
            "a provider of kind Local model file to chat with it.",
            self,
        )
        about.setWordWrap(True)
        about.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(about)
        self.models_list = QListWidget(self)
        self.models_list.setAccessibleName("Local models")
        layout.addWidget(self.models_list)
        self.licence_label = QLabel(self)
        self.licence_label.setAccessibleName("Licence")
        self.licence_label.setTextFormat(Qt.TextFormat.PlainText)
        self.licence_label.setWordWrap(True)
        self.licence_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.licence_label)
        self.download_button = QPushButton("Download", self)
        self.download_button.setAccessibleName("Download")
        layout.addWidget(self.download_button)
        self.cancel_button = QPushButton("Cancel download", self)
        self.cancel_button.setAccessibleName("Cancel download")
        self.cancel_button.setToolTip("Stop the download (Esc); Download resumes it later")
        self.cancel_button.setEnabled(False)
        layout.addWidget(self.cancel_button)
        self.progress = QProgressBar(self)
        self.progress.setAccessibleName("Download progress")
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        layout.addWidget(self.progress)
        self.status_label = QLabel(self)
        self.status_label.setAccessibleName("Status")
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        self.status_label.setWordWrap(True)
        layout.addWidget(self.status_label)
        buttons = QDialogButtonBox(self)
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        close.setAccessibleName("Close")
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.download_button.clicked.connect(self._start_download)
        self.cancel_button.clicked.connect(self.cancel_download)
        self.models_list.currentRowChanged.connect(lambda _r: self._on_selection())
        self.fill()
        self.models_list.setCurrentRow(0)

    def fill(self) -> None:
        """List the catalogue (marking what is here) and the other files here."""
        here = {f.path.name: f for f in installed(self.folder)}
        self.models_list.clear()
        for model in self.catalogue:
            mark = "  [downloaded]" if model.file_name in here else ""
            item = QListWidgetItem(
                f"{model.title} — ~{model.approx_bytes / 1e6:,.0f} MB — {model.licence}{mark}"
            )
            item.setData(Qt.ItemDataRole.UserRole, model.key)
            self.models_list.addItem(item)
        known = {m.file_name for m in self.catalogue}
        for name, file in here.items():
            if name not in known:
                item = QListWidgetItem(f"{name} — {file.size / 1e6:,.0f} MB (here)")
                item.setData(Qt.ItemDataRole.UserRole, "")
                self.models_list.addItem(item)

    def selected(self) -> CatalogueModel | None:
        """The catalogue model selected (``None``: a file that is only here, or none)."""
        item = self.models_list.currentItem()
        key = item.data(Qt.ItemDataRole.UserRole) if item is not None else ""
        return next((m for m in self.catalogue if m.key == key), None)

    def _on_selection(self) -> None:
        model = self.selected()
        here = model is not None and (self.folder / model.file_name).exists()
        self.download_button.setEnabled(model is not None and not here and not self.busy)
        self.licence_label.setText(
            f"Licence: {model.licence} ({model.licence_url}). {model.notes}"
            if model is not None
            else ""
        )

    def reject(self) -> None:
        """Esc or Close: stops a download under way first (a second Esc closes)."""
        if self.busy and self.stop is not None and not self.stop.stopped():
            self.cancel_download()
            return
        super().reject()

    def cancel_download(self) -> None:
        """Stop the download under way (what came is kept for the next one to resume)."""
        if self.stop is not None:
            self.stop.stop()
            self.cancel_button.setEnabled(False)
            self.status_label.setText("Stopping…")

    def _start_download(self) -> None:
        model = self.selected()
        if model is not None and not self.busy:
            self.task = asyncio.ensure_future(self.download(model))

    async def download(self, model: CatalogueModel) -> None:
        """Download ``model`` into the folder, the bar following; say how it ended."""
        import httpx2

        self.busy = True
        stop = self.stop = DownloadStop()
        self._on_selection()
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self.status_label.setText(f"Downloading {model.file_name}…")
        loop = asyncio.get_running_loop()

        def progress(done: int, total: int | None) -> None:
            if total:
                loop.call_soon_threadsafe(self.progress.setValue, done * 100 // total)

        told: list[Checksum] = []

        def fetch() -> Path:
            with httpx2.Client(timeout=httpx2.Timeout(30.0, read=60.0)) as client:
                return download(
                    client,
                    model.url,
                    self.folder / model.file_name,
                    sha256=model.sha256,
                    progress=progress,
                    stop=stop,
                    checksum=told.append,
                )

        try:
            path = await asyncio.to_thread(fetch)
        except Exception as exc:  # noqa: BLE001  # said in the dialog; the .part is kept
            words = error_text(exc)
            if stop.stopped():
                words = "Download stopped. What came is kept: press Download to resume."
            self.status_label.setText(words)
            if stop.stopped():
                self.cancelled.emit(words)
            else:
                self.failed.emit(words)
        else:
            self.progress.setValue(100)
            source = f" (SHA-256 from {told[0].source})" if told else ""
            self.status_label.setText(f"Downloaded and verified {path.name}{source}.")
            self.fill()
            self.downloaded.emit(str(path))
        finally:
            self.busy = False
            self.stop = None
            self.cancel_button.setEnabled(False)
            self._on_selection()
