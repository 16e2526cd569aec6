"""The real window as its own process, against the demo server as its child: a tool from the
palette → the approval dialog → a live task card → the input form → completion."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import SAMPLES, Cli, add_demo

PROBE = Path(__file__).with_name("window_probe.py")


def env_for(cli: Cli) -> dict[str, str]:
    env = {
        **os.environ,
        "MOORING_DATA_DIR": str(cli.data_dir),
        "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")]),
    }
    env.update({k: v for k, v in cli.env.items() if v is not None})
    return env


def test_a_tool_runs_from_the_palette_through_approval_and_input_to_completion(
    cli: Cli, tmp_path: Path
) -> None:
    demo = add_demo(cli, tmp_path, allow=False)  # no rule: the window must ask
    done = subprocess.run(
        [sys.executable, str(PROBE), "flow", str(SAMPLES / "suppliers_ambiguous_id.csv")],
        capture_output=True,
        text=True,
        env=env_for(cli),
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    seen = report["seen"]
    assert seen[0] == "waiting for your approval"
    assert "needs your input" in seen
    assert seen[-1] == "completed"
    assert seen.index("needs your input") < seen.index("completed")
    assert "cancelled" not in seen
    assert demo.count("tasks/update") == 1
    [task] = cli.json("tasks", "list")
    assert task["state"] == "completed"


def test_a_second_launch_on_the_same_data_folder_focuses_the_first(
    cli: Cli, tmp_path: Path
) -> None:
    first = subprocess.Popen(
        [sys.executable, str(PROBE), "wait", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_for(cli),
    )
    try:
        assert first.stdout is not None
        ready, _, _ = select.select([first.stdout], [], [], 120)
        assert ready, "the first window never came up"
        assert json.loads(first.stdout.readline()) == {"ready": True}
        second = subprocess.run(
            [sys.executable, "-m", "mooring"],
            capture_output=True,
            text=True,
            env=env_for(cli),
            timeout=120,
        )
    finally:
        first.kill()
        first.communicate(timeout=30)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "already running on this data folder" in second.stderr
    logs = "".join(p.read_text() for p in cli.data_dir.rglob("*.log"))
    assert "bringing the window to the front" in logs
