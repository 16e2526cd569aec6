"""SIGTERM (logout, ``kill``) ends the window the way Quit does: a clean shutdown."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

PROBE = Path(__file__).with_name("sigterm_probe.py")


def test_sigterm_closes_the_window_like_quit_and_shuts_down_cleanly(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {**os.environ, "MOORING_DATA_DIR": str(data), "QT_QPA_PLATFORM": "offscreen"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path.cwd()), env.get("PYTHONPATH", "")])
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    window = subprocess.Popen(
        [sys.executable, str(PROBE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert window.stdout is not None
        first = window.stdout.readline()  # printed once the window is shown
        assert first.startswith("ready"), (first, window.stderr.read() if window.stderr else "")
        window.send_signal(signal.SIGTERM)
        out, err = window.communicate(timeout=60)
    finally:
        if window.poll() is None:
            window.kill()
            window.communicate(timeout=30)
    assert window.returncode == 0, err[-3000:]
    assert "exited 0" in out  # run_gui returned: the shutdown path ran to its end
    log = (data / "logs" / "mooring.log").read_text()
    assert "SIGTERM received: closing the window as Quit does" in log
    assert "mooring.ui: window closed" in log  # the shutdown path ran to its end
    assert "Traceback" not in err
