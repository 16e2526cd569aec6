"""The window beside the commands on one data folder: all of them faces of one engine, so a
task a command starts on a stdio server is the one the window shows and follows, through the
one connection (one server process) the engine owns; the engine alone notifies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import SAMPLES, Cli, DemoServer, add_demo
from tests.helpers.notifyd import logged, private_bus, service_process
from tests.helpers.processes import Lines, stop_engine

PROBE = Path(__file__).with_name("notify_probe.py")


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


def start_window(cli: Cli, address: str | None) -> subprocess.Popen[str]:
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


def prepare(cli: Cli, tmp_path: Path) -> DemoServer:
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=100, rows_per_checkpoint=1)
    assert cli.run("settings", "set", "demo_server.enabled", "false").returncode == 0
    # The offscreen window may well be the active one: notify regardless, for this test.
    assert cli.run("settings", "set", "notifications.when", "always").returncode == 0
    assert cli.run("settings", "set", "notifications.asked", "true").returncode == 0
    return demo


def start_import(cli: Cli, env: dict[str, str | None] | None = None) -> str:
    """A call that asks a question (ambiguous ids), left running: its record id."""
    done = cli.run(
        "call",
        "demo",
        "import_suppliers",
        "--detach",
        "--json",
        "--args",
        json.dumps({"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}),
        env=env,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    return str(json.loads(done.stdout)["id"])


def test_a_task_a_command_starts_on_a_stdio_server_completes_with_the_window_open(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, log = notifications
    demo = prepare(cli, tmp_path)
    window = start_window(cli, address)  # it starts the engine (with the session bus)
    window_out = Lines(window.stdout)
    window_out.until(lambda line: line == "ready")
    record_id = start_import(cli)
    answered = cli.run("tasks", "answer", record_id, "--value", '{"column": "vendor_code"}')
    assert answered.returncode == 0, answered.stderr

    report = window_out.rest(120)
    assert window.wait(timeout=30) == 0, Lines(window.stderr).rest()
    seen = json.loads(report[-1])["seen"]
    assert any(s and s[0].startswith("needs your input") for s in seen), seen
    assert seen[-1] == ["completed"]
    assert cli.json("tasks", "show", record_id)["state"] == "completed"
    # One connection, the engine's: one server process for the call, the polls, the answer.
    assert len({r["pid"] for r in demo.requests()}) == 1
    assert demo.count("tools/call") == 1
    # The engine holds a notice that follows another closely, to merge them; it delivers what
    # it holds as it stops, at the latest.
    assert stop_engine(cli.data_dir)
    assert [n["body"] for n in logged(log)] == [  # from the engine, once
        "A task needs your input",
        "A background task completed",
    ]


def test_a_window_opened_after_a_command_shows_and_follows_its_task(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, log = notifications
    demo = prepare(cli, tmp_path)
    record_id = start_import(cli, {"DBUS_SESSION_BUS_ADDRESS": address})  # starts the engine
    window = start_window(cli, None)  # a face of that engine: no second poller
    window_out = Lines(window.stdout)
    window_out.until(lambda line: line == "ready")
    answered = cli.run("tasks", "answer", record_id, "--value", '{"column": "vendor_code"}')
    assert answered.returncode == 0, answered.stderr

    report = window_out.rest(120)
    assert window.wait(timeout=30) == 0, Lines(window.stderr).rest()
    assert json.loads(report[-1])["seen"][-1] == ["completed"]
    assert len({r["pid"] for r in demo.requests()}) == 1
    assert demo.count("tools/call") == 1
    assert stop_engine(cli.data_dir)  # what it holds to merge is delivered as it stops
    assert [n["body"] for n in logged(log)] == [
        "A task needs your input",
        "A background task completed",
    ]
