"""``MOORING_SMOKE=1``: the real app opens its window, paints it, reports and quits by itself
(how ``make package`` checks a built bundle's window), and the window carries the app's icon
and desktop file name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication

from mooring.settings.paths import APP_ID
from mooring.ui.app import ensure_app


def test_a_smoke_run_paints_the_window_and_quits_cleanly(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "MOORING_DATA_DIR": str(tmp_path / "data"),
        "QT_QPA_PLATFORM": "offscreen",
        "MOORING_SMOKE": "1",
    }
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-m", "mooring"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["smoke"] == "painted"
    assert report["painted"] is True
    assert report["icon"] is True
    assert report["desktop_file"] == APP_ID
    assert report["servers"] == ["demo (bundled)"]
    log = (tmp_path / "data" / "logs" / "mooring.log").read_text()
    assert "window closed" in log
    assert "Traceback" not in log


def test_the_app_announces_its_desktop_entry_and_icon(qapp: QApplication) -> None:
    app = ensure_app()
    assert app.desktopFileName() == APP_ID
    icon = app.windowIcon()
    assert not icon.isNull()
    assert {16, 48, 256} <= {size.width() for size in icon.availableSizes()}
