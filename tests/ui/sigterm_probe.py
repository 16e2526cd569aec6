"""Launch the real app, say when its window is up, and wait to be told to stop.

Run as a separate process by test_sigterm.py: ``python sigterm_probe.py``; the test sends
SIGTERM once ``ready`` is printed.
"""

from __future__ import annotations

import sys

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.ui.main_window import MainWindow


def say_ready(window: MainWindow) -> None:
    sys.stdout.write(f"ready {window.windowTitle()}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    code = int(run_gui(build_parser().parse_args(["gui"]), on_ready=say_ready))
    sys.stdout.write(f"exited {code}\n")
    raise SystemExit(code)
