"""The first launch on embedded defaults: a real window that shows the bundled demo server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QImage

from mooring.storage.db import head_revision

PROBE = Path(__file__).with_name("first_launch_probe.py")


def launch(data_dir: Path, shot: Path) -> dict[str, object]:
    env = {**os.environ, "MOORING_DATA_DIR": str(data_dir), "QT_QPA_PLATFORM": "offscreen"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path.cwd()), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(PROBE), str(shot)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_first_launch_configures_the_demo_server_and_shows_it(tmp_path: Path) -> None:
    shown = launch(tmp_path / "data", tmp_path / "window.png")
    assert shown["title"] == "Mooring"
    assert shown["data_dir"] == str(tmp_path / "data")
    assert str(shown["schema"]).startswith(head_revision())
    assert shown["status"] == "Ready"
    assert shown["welcome"] is True  # the first launch on this data folder welcomes
    assert shown["tabs"] == ["Conversations", "Tasks", "Servers", "Issues", "Settings"]
    servers = shown["servers"]
    assert isinstance(servers, list)
    [[name, transport, target, trusted, _connection]] = servers
    assert (name, transport, trusted) == ("demo (bundled)", "stdio", "no")
    assert "-m mooring.demo_server --store" in target
    assert str(tmp_path / "data" / "demo-server.sqlite3") in target
    image = QImage(str(tmp_path / "window.png"))
    assert not image.isNull()
    assert image.width() >= 600


def test_a_removed_demo_server_does_not_come_back_nor_the_welcome(tmp_path: Path) -> None:
    import sqlite3

    assert launch(tmp_path / "data", tmp_path / "1.png")["welcome"] is True
    conn = sqlite3.connect(tmp_path / "data" / "mooring.sqlite3")
    conn.execute("UPDATE servers SET removed_at = '2026-11-29T12:00:00.000000+00:00'")
    conn.commit()
    conn.close()
    shown = launch(tmp_path / "data", tmp_path / "2.png")
    assert shown["servers"] == []
    assert shown["welcome"] is False  # once only
