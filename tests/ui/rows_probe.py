"""Launch the real app, print the task rows its window shows, then close it.

Run as a separate process by test_task_rows.py: ``python rows_probe.py``.
"""

from __future__ import annotations

import json
import sys

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.ui.main_window import MainWindow
from mooring.ui.models.tasks import TaskRole


def report_and_close(window: MainWindow) -> None:
    model = window.tasks.model
    roles = (TaskRole.ID, TaskRole.TOOL, TaskRole.SERVER, TaskRole.STATE_WORDS, TaskRole.DETAIL)
    rows = [[str(model.index(r, 0).data(role)) for role in roles] for r in range(model.rowCount())]
    sys.stdout.write(json.dumps({"tasks": rows}) + "\n")
    sys.stdout.flush()
    window.close()


if __name__ == "__main__":
    raise SystemExit(int(run_gui(build_parser().parse_args(["gui"]), on_ready=report_and_close)))
