"""Launch the app on a data folder with unfinished work; report the task states it showed, in
order, until every task reached a terminal state; then close.

Run as a separate process by test_relaunch.py: ``python relaunch_probe.py OUT.png``.
"""

from __future__ import annotations

import json
import sys

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.ui.main_window import MainWindow
from tests.ui.probe_rows import changed_row_states, on_rows_change

TERMINAL = {"completed", "failed", "cancelled", "expired", "abandoned", "not run — denied"}


def watch(window: MainWindow) -> None:
    seen: list[list[str]] = []
    model = window.tasks.model

    def check(*_args: object) -> None:
        states = changed_row_states(model, seen)
        if states is None:
            return
        if states and all(s in TERMINAL for s in states):
            window.grab().save(sys.argv[1])
            sys.stdout.write(json.dumps({"seen": seen}) + "\n")
            sys.stdout.flush()
            window.close()

    on_rows_change(model, check)


if __name__ == "__main__":
    raise SystemExit(int(run_gui(build_parser().parse_args(["gui"]), on_ready=watch)))
