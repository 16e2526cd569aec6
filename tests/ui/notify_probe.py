"""Run the app on a data folder (a face of its engine, started by the window when none runs);
say ``ready`` on stdout once the window shows what is stored, then report the task states it
showed until every task listed ended, and close.

Run as a separate process by test_window_and_watcher.py: ``python notify_probe.py``.
"""

from __future__ import annotations

import json
import sys

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.ui.main_window import MainWindow
from tests.ui.probe_rows import changed_row_states, on_rows_change

TERMINAL = {"completed", "failed", "cancelled", "expired", "abandoned", "denied"}


def watch(window: MainWindow) -> None:
    seen: list[list[str]] = []
    model = window.tasks.model
    sys.stdout.write("ready\n")
    sys.stdout.flush()

    def check(*_args: object) -> None:
        states = changed_row_states(model, seen)
        if states is None:
            return
        if states and all(s.split(" (")[0] in TERMINAL for s in states):
            sys.stdout.write(json.dumps({"seen": seen}) + "\n")
            sys.stdout.flush()
            window.close()

    on_rows_change(model, check)


if __name__ == "__main__":
    raise SystemExit(int(run_gui(build_parser().parse_args(["gui"]), on_ready=watch)))
