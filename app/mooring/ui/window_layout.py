"""The main window's layout kept between launches: geometry, docks, the current view and the
panels' splitters, in an INI file of the data folder (``QSettings``).

The shell restores what it can before the host exists (geometry, the view); the panels' own
parts once they are built. The palette's darkness is kept too: the next launch's first paint
uses it before any setting is read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings

from mooring.ui.palette_theme import is_dark

if TYPE_CHECKING:
    from PySide6.QtWidgets import QSplitter

    from mooring.ui.main_window import MainWindow

__all__ = ["WindowLayout"]


class WindowLayout:
    """Where ``window``'s layout is kept (``file``; ``None``: nowhere, nothing is kept)."""

    def __init__(self, window: MainWindow, file: Path | None) -> None:
        self._window = window
        self.file = file

    def _store(self) -> QSettings | None:
        if self.file is None:
            return None
        return QSettings(str(self.file), QSettings.Format.IniFormat)

    def _splitters(self) -> dict[str, QSplitter]:
        window = self._window
        return {
            "tasks_splitter": window.tasks.splitter,
            "conversations_splitter": window.conversations.splitter,
            "servers_splitter": window.servers.splitter,
        }

    def restore(self) -> bool:
        """Put the window back as it was at the last close (the panels' own parts once they
        exist); whether a geometry was restored (then fitted to the screen, and to be fitted
        again once shown, when the window's frame is known)."""
        store = self._store()
        if store is None:
            return False
        window = self._window
        fitted = False
        for key, restore in (
            ("geometry", window.restoreGeometry),
            ("state", window.restoreState),
        ):
            value = store.value(key)
            if isinstance(value, QByteArray) and restore(value) and key == "geometry":
                # Saved on a larger screen, or while something made the window taller than
                # this one: fitted now, and again once shown.
                window.fit_to_screen()
                fitted = True
        tab = store.value("tab")
        if tab is not None and str(tab).isdigit():
            window.tabs.setCurrentIndex(int(str(tab)))
        if window.attached:
            self.restore_panels()
        return fitted

    def restore_panels(self) -> None:
        """Put the panels' splitters back (the panels exist now)."""
        store = self._store()
        if store is None:
            return
        for key, splitter in self._splitters().items():
            value = store.value(key)
            if isinstance(value, QByteArray):
                splitter.restoreState(value)

    def save(self) -> None:
        """Remember the window's geometry, panels and current view (a window closed while
        it was still loading keeps the panels' last saved parts)."""
        store = self._store()
        if store is None:
            return
        window = self._window
        store.setValue("geometry", window.saveGeometry())
        store.setValue("state", window.saveState())
        if window.attached:
            for key, splitter in self._splitters().items():
                store.setValue(key, splitter.saveState())
        store.setValue("tab", window.tabs.currentIndex())
        store.setValue("dark", is_dark(window.palette()))  # the next launch's first paint
        store.sync()
