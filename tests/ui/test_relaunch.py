"""The app after a restart: the window is up at once, and unfinished tasks catch up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import SAMPLES, Cli, add_demo
from tests.helpers.processes import engine_pid

PROBE = Path(__file__).with_name("relaunch_probe.py")


def test_the_window_reconciles_a_task_left_running_and_shows_it_finish(
    cli: Cli, tmp_path: Path
) -> None:
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=100, rows_per_checkpoint=3)
    assert cli.run("settings", "set", "demo_server.enabled", "false").returncode == 0
    shown = cli.json(
        "call",
        "demo",
        "import_suppliers",
        "--detach",
        "--args",
        json.dumps({"path": str(SAMPLES / "suppliers_clean.csv")}),
    )
    assert shown["state"] == "working"  # the CLI left; the task waits in the ledger
    stopped = cli.run("agent", "stop")  # and so does the engine: a restart
    assert stopped.returncode == 0
    assert "has ended" in stopped.stdout
    assert engine_pid(cli.data_dir) is None  # `agent stop` returns once it is gone

    env = {
        **os.environ,
        "MOORING_DATA_DIR": str(cli.data_dir),
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")]),
    }
    env.update({k: v for k, v in cli.env.items() if v is not None})
    done = subprocess.run(
        [sys.executable, str(PROBE), str(tmp_path / "relaunch.png")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])["seen"]
    assert seen[-1] == ["completed"]
    final = cli.json("tasks", "show", shown["id"])
    assert final["state"] == "completed"
    assert demo.count("tools/call") == 1  # reconciled, never sent again
