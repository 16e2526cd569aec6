"""Launch the real app through the composition root and report, in the order they happened,
what start-up did: the main window's first paint (and what it showed then), the engine
reached (started by the window when none runs), the window ready; or the fatal-error dialog.
One JSON line on stdout.

Run as a separate process by test_start_up.py: ``python start_up_probe.py [close]``
(``close``: the window is closed as soon as it is painted, while the engine is reached).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

import mooring.bootstrap.window
from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.ui.app import ensure_app
from mooring.ui.loading import LoadingPage
from mooring.ui.main_window import MainWindow

events: list[dict[str, Any]] = []


def pages(window: MainWindow) -> list[dict[str, Any]]:
    shown = []
    for i in range(window.tabs.count()):
        page = window.tabs.widget(i)
        assert page is not None
        label = page.findChild(QLabel) if isinstance(page, LoadingPage) else None
        shown.append(
            {
                "tab": window.tabs.tabText(i).replace("&", ""),
                "name": page.accessibleName(),
                "loading": isinstance(page, LoadingPage),
                "words": label.text() if label is not None else None,
            }
        )
    return shown


class Watcher(QObject):
    """Notes the main window's first paint and answers the fatal-error dialog."""

    def __init__(self) -> None:
        super().__init__()
        self.painted = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt API
        if isinstance(watched, QWidget):
            window = watched.window()
            painted = event.type() == QEvent.Type.Paint and isinstance(window, MainWindow)
            if painted and not self.painted:
                assert isinstance(window, MainWindow)
                self.painted = True
                events.append(
                    {
                        "event": "painted",
                        "title": window.windowTitle(),
                        "name": window.accessibleName(),
                        "visible": window.isVisible(),
                        "attached": window.attached,
                        "status": window.statusBar().currentMessage(),
                        "pages": pages(window),
                        "sqlalchemy_loaded": "sqlalchemy" in sys.modules,
                        "host_loaded": "mooring.services.host" in sys.modules,
                    }
                )
                if sys.argv[1:] == ["close"]:
                    QTimer.singleShot(0, window.close)
            if event.type() == QEvent.Type.Show and isinstance(watched, QMessageBox):
                events.append(
                    {"event": "fatal", "title": watched.text(), "hint": watched.informativeText()}
                )
                QTimer.singleShot(0, watched.accept)
        return False


connect = mooring.bootstrap.window._connect_window


async def connect_window(*args: Any, **kwargs: Any) -> Any:
    connected = await connect(*args, **kwargs)
    events.append({"event": "engine reached", "engine_pid": connected.info.data_dir != ""})
    return connected


def on_ready(window: MainWindow) -> None:
    events.append(
        {
            "event": "ready",
            "attached": window.attached,
            "status": window.statusBar().currentMessage(),
            "pages": pages(window),
            "run_a_tool": window.palette_action.isEnabled(),
            "sdk_loaded": "mcp" in sys.modules,
            "sqlalchemy_loaded": "sqlalchemy" in sys.modules,
            "host_loaded": "mooring.services.host" in sys.modules,
        }
    )
    window.close()


if __name__ == "__main__":
    mooring.bootstrap.window._connect_window = connect_window
    watcher = Watcher()
    ensure_app().installEventFilter(watcher)
    code = int(run_gui(build_parser().parse_args(["gui"]), on_ready=on_ready))
    sys.stdout.write(json.dumps({"code": code, "events": events}) + "\n")
    raise SystemExit(0)
