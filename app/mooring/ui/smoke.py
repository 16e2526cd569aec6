"""A smoke run of the window: open, paint once, report, quit (packaging checks a bundle so).

``MOORING_SMOKE=1 mooring`` opens the window as usual, and as soon as it is painted prints one
JSON line on stdout (``{"smoke": "painted", ...}``) and quits the way File → Quit does.
"""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from mooring.ui.main_window import MainWindow


def report_and_quit(window: MainWindow) -> None:
    """Paint ``window`` once, print what it shows, then quit (the ``on_ready`` of a smoke run)."""
    shot = window.grab()
    model = window.servers.model
    servers = [
        str(model.data(model.index(row, 0), Qt.ItemDataRole.DisplayRole))
        for row in range(model.rowCount())
    ]
    app = QApplication.instance()
    report = {
        "smoke": "painted",
        "title": window.windowTitle(),
        "size": [shot.width(), shot.height()],
        "painted": not shot.isNull(),
        "icon": not window.windowIcon().isNull(),
        "desktop_file": app.desktopFileName() if isinstance(app, QApplication) else "",
        "servers": servers,
    }
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    QTimer.singleShot(0, window.quit)
