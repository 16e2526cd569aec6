"""The window and a headless watcher on one data folder: one polls, the other follows the
database, so the server sees one set of status requests; only the poller notifies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mooring.adapters.poller_lock import FilePollerLock
from mooring.settings.paths import resolve_paths
from tests.e2e.conftest import SAMPLES, Cli, DemoServer, add_demo
from tests.helpers.notifyd import logged, private_bus, service_process
from tests.helpers.processes import Lines

PROBE = Path(__file__).with_name("notify_probe.py")
FOLLOW_PROBE = Path(__file__).with_name("follow_probe.py")


@pytest.fixture
def notifications(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    with (
        private_bus(tmp_path / "bus") as address,
        service_process(address, tmp_path / "notified.jsonl") as log,
    ):
        yield address, log


def window_env(cli: Cli, address: str | None) -> dict[str, str]:
    """The environment of a window process on ``cli``'s data folder (``address``: the D-Bus
    session bus it notifies on, or none)."""
    env = {
        **os.environ,
        "MOORING_DATA_DIR": str(cli.data_dir),
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")]),
    }
    env.update({k: v for k, v in cli.env.items() if v is not None})
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    if address is not None:
        env["DBUS_SESSION_BUS_ADDRESS"] = address
    return env


def start_window(cli: Cli, address: str) -> subprocess.Popen[str]:
    env = window_env(cli, address)
    window = subprocess.Popen(
        [sys.executable, str(PROBE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    cli.children.append(window)
    return window


def prepare(cli: Cli, tmp_path: Path) -> tuple[DemoServer, str]:
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=100, rows_per_checkpoint=1)
    assert cli.run("settings", "set", "demo_server.enabled", "false").returncode == 0
    # The offscreen window may well be the active one: notify regardless, for this test.
    assert cli.run("settings", "set", "notifications.when", "always").returncode == 0
    assert cli.run("settings", "set", "notifications.asked", "true").returncode == 0
    shown = cli.json(
        "call",
        "demo",
        "import_suppliers",
        "--detach",
        "--args",
        json.dumps({"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}),
    )
    return demo, str(shown["id"])


def test_a_window_follows_a_watcher_that_polls(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, log = notifications
    demo, record_id = prepare(cli, tmp_path)
    watcher = cli.start(
        "tasks", "watch", "--notify", "--timeout", "120", env={"DBUS_SESSION_BUS_ADDRESS": address}
    )
    Lines(watcher.stdout).until(lambda line: "answer with" in line)  # polled: the question
    window = start_window(cli, address)
    answered = cli.run("tasks", "answer", record_id, "--value", '{"column": "vendor_code"}')
    assert answered.returncode == 0, answered.stderr

    window_out = Lines(window.stdout).rest(120)
    assert window.wait(timeout=30) == 0, Lines(window.stderr).rest()
    assert watcher.wait(timeout=60) == 0
    seen = json.loads(window_out[-1])["seen"]
    assert seen[-1] == ["completed"]  # followed to the end from the database
    assert len({r["pid"] for r in demo.requests() if r["method"] == "tasks/get"}) == 1
    assert [n["body"] for n in logged(log)] == [
        "A task needs your input",
        "A background task completed",
    ]


def test_a_watcher_follows_the_window_that_polls(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, log = notifications
    demo, record_id = prepare(cli, tmp_path)
    window = start_window(cli, address)
    window_out = Lines(window.stdout)
    window_out.until(lambda line: line == "polling")
    watcher = cli.start(
        "tasks", "watch", "--notify", "--timeout", "120", env={"DBUS_SESSION_BUS_ADDRESS": address}
    )
    watcher_err = Lines(watcher.stderr)
    watcher_err.until(lambda line: "is polling these tasks" in line)
    Lines(watcher.stdout).until(lambda line: "answer with" in line)
    answered = cli.run("tasks", "answer", record_id, "--value", '{"column": "vendor_code"}')
    assert answered.returncode == 0, answered.stderr

    window_out.rest(120)
    assert window.wait(timeout=30) == 0, Lines(window.stderr).rest()
    assert watcher.wait(timeout=60) == 0, watcher_err.rest()
    assert len({r["pid"] for r in demo.requests() if r["method"] == "tasks/get"}) == 1
    assert [n["body"] for n in logged(log)] == [  # from the window only, never once per process
        "A task needs your input",
        "A background task completed",
    ]


def test_a_task_finished_elsewhere_before_the_windows_first_look_is_shown_finished(
    cli: Cli, tmp_path: Path
) -> None:
    """The window painted a task as unfinished; the process that polls finished it before the
    window's follower first looked at the ledger (so the follower never followed it): the row
    is read again, not left unfinished until the window restarts."""
    demo, _ = prepare(cli, tmp_path)
    watcher = FilePollerLock(resolve_paths(cli.data_dir).poller_lock, "a watcher")
    assert watcher.try_acquire()  # another process polls: the window follows
    try:
        done = subprocess.run(
            [sys.executable, str(FOLLOW_PROBE)],
            capture_output=True,
            text=True,
            env=window_env(cli, None),
            timeout=120,
            check=False,
        )
    finally:
        watcher.release()
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])["seen"]
    assert not seen[0][0].startswith("completed"), seen  # painted as the ledger had it then
    assert seen[-1] == ["completed"], seen
    assert not [r for r in demo.requests() if r["method"] == "tasks/get"]  # it only followed
