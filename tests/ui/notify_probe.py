"""Run the app on a data folder with unfinished work, beside another Mooring process; say on
stdout when this window polls (holds the poller lock), then report the task states it showed
until every task ended, and close.

Run as a separate process by test_window_and_watcher.py: ``python notify_probe.py``.
"""

from __future__ import annotations

import json
import os
import sys

from PySide6.QtCore import QTimer

from mooring.adapters.poller_lock import FilePollerLock
from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.settings.paths import resolve_paths
from mooring.ui.main_window import MainWindow
from tests.ui.probe_rows import changed_row_states, on_rows_change

TERMINAL = {"completed", "failed", "cancelled", "expired", "abandoned", "denied"}


def watch(window: MainWindow) -> None:
    seen: list[list[str]] = []
    lock = FilePollerLock(resolve_paths().poller_lock, "")
    announce = QTimer(window)

    def holds_lock() -> None:
        holder = lock.holder() or ""
        if holder.endswith(f"pid {os.getpid()}"):
            announce.stop()
            sys.stdout.write("polling\n")
            sys.stdout.flush()

    model = window.tasks.model

    def check(*_args: object) -> None:
        states = changed_row_states(model, seen)
        if states is None:
            return
        if states and all(s.split(" (")[0] in TERMINAL for s in states):
            # The report is the last line: the watcher may end, and this window take the
            # poller lock over, while it closes.
            announce.stop()
            sys.stdout.write(json.dumps({"seen": seen}) + "\n")
            sys.stdout.flush()
            window.close()

    announce.timeout.connect(holds_lock)
    announce.start(20)
    on_rows_change(model, check)


if __name__ == "__main__":
    raise SystemExit(int(run_gui(build_parser().parse_args(["gui"]), on_ready=watch)))
