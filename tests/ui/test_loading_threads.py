"""The window's loading threads import Qt modules one at a time.

PySide6 builds its types and enums lazily, and not safely from two threads at once: the
composition root's two loading threads (the host's build, the panels' modules) once imported
Qt modules together, and about one launch in fifteen on a busy machine ended in a segmentation
fault. Both now hold ``mooring.ui.QT_IMPORTS`` while they do.
"""

from __future__ import annotations

import threading
from types import TracebackType

import pytest

import mooring.ui.main_window as main_window
from mooring.ui import QT_IMPORTS


class Recorded:
    """A lock that notes the thread that holds it."""

    def __init__(self) -> None:
        self.holders: list[str] = []

    def __enter__(self) -> None:
        self.holders.append(threading.current_thread().name)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        pass


def test_the_panels_modules_load_under_the_qt_imports_lock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert vars(main_window)["QT_IMPORTS"] is QT_IMPORTS  # the one lock, not a copy
    recorded = Recorded()
    monkeypatch.setattr(main_window, "QT_IMPORTS", recorded)
    worker = threading.Thread(target=main_window.load_panel_modules, name="loader")
    worker.start()
    worker.join(timeout=60)
    assert recorded.holders == ["loader"]
