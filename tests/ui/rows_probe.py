"""Launch the real app, print the task rows its window shows, then close it.

Run as a separate process by test_task_rows.py: ``python rows_probe.py``.
"""

from __future__ import annotations

import json
import sys

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.ui.main_window import MainWindow


def report_and_close(window: MainWindow) -> None:
    table = window.tasks_table
    rows = [
        [item.text() if (item := table.item(r, c)) else "" for c in range(table.columnCount())]
        for r in range(table.rowCount())
    ]
    sys.stdout.write(json.dumps({"tasks": rows}) + "\n")
    sys.stdout.flush()
    window.close()


if __name__ == "__main__":
    raise SystemExit(int(run_gui(build_parser().parse_args(["gui"]), on_ready=report_and_close)))
