"""Launch the app while another process holds the poller lock; the task it shows is finished
"elsewhere" (written to the ledger, as the other process would, with no event here) after the
first paint and before the window's first look at the ledger. Report the states the task row
showed, then close (or give up after a bound, with what it showed).

Run as a separate process by test_window_and_watcher.py: ``python follow_probe.py``.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

from PySide6.QtCore import QTimer

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.services.follower import DatabaseFollower
from mooring.ui.main_window import MainWindow
from tests.ui.probe_rows import changed_row_states, on_rows_change

GIVE_UP_MS = 30_000
"""Only a failing run waits this long: a row that is never read again."""

first_look = DatabaseFollower.discover_new


async def finished_elsewhere_first(self: DatabaseFollower) -> list[TaskRecord]:
    """The other process finishes every unfinished task just before this window's first look."""
    if not getattr(self, "finished_elsewhere", False):
        self.finished_elsewhere = True  # type: ignore[attr-defined]  # the probe's own mark
        ledger = self._ledger
        for record in await ledger.unfinished():
            await ledger.save(record.transition(LocalState.COMPLETED, at=datetime.now(UTC)))
    return await first_look(self)


DatabaseFollower.discover_new = finished_elsewhere_first  # type: ignore[method-assign]


def watch(window: MainWindow) -> None:
    seen: list[list[str]] = []
    model = window.tasks.model

    def report() -> None:
        if not window.isVisible():
            return  # reported already
        sys.stdout.write(json.dumps({"seen": seen}) + "\n")
        sys.stdout.flush()
        window.close()

    def check(*_args: object) -> None:
        states = changed_row_states(model, seen)
        if states is None:
            return
        if states and all(s.startswith("completed") for s in states):
            report()

    QTimer.singleShot(GIVE_UP_MS, report)
    on_rows_change(model, check)


if __name__ == "__main__":
    raise SystemExit(int(run_gui(build_parser().parse_args(["gui"]), on_ready=watch)))
