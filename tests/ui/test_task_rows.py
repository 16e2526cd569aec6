"""The window says when a completed call's tool reported an error, not a plain "completed"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import Cli, add_demo

PROBE = Path(__file__).with_name("rows_probe.py")


def test_a_tool_error_is_named_in_the_task_row(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path)
    assert cli.run("settings", "set", "demo_server.enabled", "false").returncode == 0
    assert cli.run("call", "demo", "import_suppliers").returncode == 4  # no path: a tool error

    env = {
        **os.environ,
        "MOORING_DATA_DIR": str(cli.data_dir),
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")]),
    }
    env.update({k: v for k, v in cli.env.items() if v is not None})
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, str(PROBE)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [row] = json.loads(done.stdout.strip().splitlines()[-1])["tasks"]
    assert row[3] == "completed — the tool reported an error"
    assert row[4].startswith("Invalid arguments for import_suppliers: path (missing)")
