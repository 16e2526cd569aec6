"""Guard against the PySide6 6.12.0 refcount bug that aborts CPython 3.11 (docs/stack.md)."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QLabel

class Emitter(QObject):
    fired = Signal()

app = QApplication([])
label = QLabel()
for i in range(20_000):
    label.setText(str(i))
emitter = Emitter()
for _ in range(20_000):
    emitter.fired.emit()
print("survived", label.text())
"""


def test_twenty_thousand_void_qt_calls_do_not_crash_the_interpreter() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "survived 19999"
