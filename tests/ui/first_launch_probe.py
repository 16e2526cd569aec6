"""Launch the real app through the composition root, report what the window shows, close it.

Run as a separate process by test_first_launch.py: ``python first_launch_probe.py OUT.png``.
"""

from __future__ import annotations

import json
import sys

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.ui.main_window import MainWindow


def report_and_close(window: MainWindow) -> None:
    table = window.servers_table
    rows = [
        [item.text() if (item := table.item(r, c)) else "" for c in range(table.columnCount())]
        for r in range(table.rowCount())
    ]
    window.grab().save(sys.argv[1])
    sys.stdout.write(
        json.dumps(
            {
                "title": window.windowTitle(),
                "servers": rows,
                "data_dir": window.data_dir_label.text(),
                "schema": window.schema_label.text(),
                "status": window.statusBar().currentMessage(),
            }
        )
        + "\n"
    )
    window.close()


if __name__ == "__main__":
    raise SystemExit(int(run_gui(build_parser().parse_args(["gui"]), on_ready=report_and_close)))
