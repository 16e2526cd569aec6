"""Launch the app on a data folder with unfinished work; report the task rows it showed, in
order, until every task row reached a terminal state; then close.

Run as a separate process by test_relaunch.py: ``python relaunch_probe.py OUT.png``.
"""

from __future__ import annotations

import json
import sys

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.ui.main_window import MainWindow

TERMINAL = {"completed", "failed", "cancelled", "expired", "abandoned", "denied"}


def watch(window: MainWindow) -> None:
    seen: list[list[str]] = []

    def check() -> None:
        table = window.tasks_table
        states = [
            item.text() if (item := table.item(row, 3)) else "" for row in range(table.rowCount())
        ]
        seen.append(states)
        if states and all(s.split(" (")[0] in TERMINAL for s in states):
            window.grab().save(sys.argv[1])
            sys.stdout.write(json.dumps({"seen": seen}) + "\n")
            sys.stdout.flush()
            window.close()

    window.overview_shown.connect(check)
    check()


if __name__ == "__main__":
    raise SystemExit(int(run_gui(build_parser().parse_args(["gui"]), on_ready=watch)))
