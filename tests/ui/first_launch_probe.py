"""Launch the real app through the composition root, report what the window shows, close it.

Run as a separate process by test_first_launch.py: ``python first_launch_probe.py OUT.png``.
"""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import Qt

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.ui.main_window import MainWindow


def report_and_close(window: MainWindow) -> None:
    model = window.servers.model
    rows = [
        [
            str(model.data(model.index(r, c), Qt.ItemDataRole.DisplayRole))
            for c in range(model.columnCount())
        ]
        for r in range(model.rowCount())
    ]
    window.grab().save(sys.argv[1])
    sys.stdout.write(
        json.dumps(
            {
                "title": window.windowTitle(),
                "servers": rows,
                "data_dir": window.settings.data_dir_label.text(),
                "schema": window.settings.schema_label.text(),
                "status": window.statusBar().currentMessage(),
                "welcome": window.welcome is not None and window.welcome.isVisible(),
                "tabs": [
                    window.tabs.tabText(i).replace("&", "") for i in range(window.tabs.count())
                ],
            }
        )
        + "\n"
    )
    window.close()


if __name__ == "__main__":
    raise SystemExit(int(run_gui(build_parser().parse_args(["gui"]), on_ready=report_and_close)))
