"""The real window over AT-SPI under Xvfb, driven the way a screen-reader user would: the
panels and the approval dialog's buttons are found by their accessible names, and pressing
"Allow once" lets the call run to completion."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import SAMPLES, Cli, add_demo
from tests.helpers.model_endpoints import ModelEndpoint
from tests.ui.chat_seed import seed_versions

HERE = Path(__file__).parent
LAUNCHER = Path("/usr/libexec/at-spi-bus-launcher")
SYSTEM_PYTHON = Path("/usr/bin/python3")


def have_atspi() -> bool:
    if not (shutil.which("Xvfb") and shutil.which("dbus-daemon") and LAUNCHER.exists()):
        return False
    probe = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import pyatspi"], capture_output=True, timeout=30
    )
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(
    not have_atspi(),
    reason="needs Xvfb, dbus-daemon, at-spi2-core and python3-pyatspi (packaging/system-deps.sh)",
)


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def desktop() -> Iterator[dict[str, str]]:
    """Xvfb, a private session bus and the accessibility bus, started in that order."""
    started: list[subprocess.Popen[str]] = []
    try:
        xvfb = subprocess.Popen(
            ["Xvfb", "-displayfd", "1", "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        started.append(xvfb)
        assert xvfb.stdout is not None
        display = f":{xvfb.stdout.readline().strip()}"
        bus = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        started.append(bus)
        assert bus.stdout is not None
        address = bus.stdout.readline().strip()
        env = {"DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": address}
        a11y = subprocess.Popen(
            [str(LAUNCHER), "--launch-immediately", "--a11y=1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, **env},
        )
        started.append(a11y)
        # Blocks until the accessibility bus answers (Qt reads its status once, at start).
        ready = subprocess.run(
            [
                "dbus-send",
                "--session",
                "--print-reply",
                "--reply-timeout=20000",
                "--dest=org.a11y.Bus",
                "/org/a11y/bus",
                "org.a11y.Bus.GetAddress",
            ],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
            timeout=60,
        )
        assert ready.returncode == 0, ready.stderr
        yield env
    finally:
        for process in reversed(started):
            stop(process)


@dataclass
class Drove:
    """What the assistive-technology client reported, and the window's own output."""

    seen: dict[str, Any]
    out: str
    err: str
    returncode: int


def drive_window(cli: Cli, desktop: dict[str, str], probe: list[str], driver: list[str]) -> Drove:
    """Launch the window (``probe``: a probe script and its arguments, on the accessibility
    bus), run an AT-SPI client against it (``driver``: a script and its arguments, under the
    system Python), and wait for the window to end."""
    env = {
        **os.environ,
        **desktop,
        "MOORING_DATA_DIR": str(cli.data_dir),
        "QT_QPA_PLATFORM": "xcb",
        "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
        "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")]),
    }
    env.update({k: v for k, v in cli.env.items() if v is not None})
    app = subprocess.Popen(
        [sys.executable, str(HERE / probe[0]), *probe[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        ran = subprocess.run(
            [str(SYSTEM_PYTHON), str(HERE / driver[0]), *driver[1:]],
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | desktop,
            timeout=150,
        )
        assert ran.returncode == 0, (ran.stdout, ran.stderr[-2000:])
        seen = json.loads(ran.stdout.strip().splitlines()[-1])
        out, err = app.communicate(timeout=120)
    finally:
        stop(app)
    return Drove(seen, out, err, app.returncode)


def test_a_screen_reader_user_finds_the_panels_and_allows_a_call(
    cli: Cli, tmp_path: Path, desktop: dict[str, str]
) -> None:
    add_demo(cli, tmp_path, allow=False)
    drove = drive_window(
        cli,
        desktop,
        ["window_probe.py", "call", str(SAMPLES / "suppliers_clean.csv")],
        ["atspi_driver.py", "Mooring"],
    )
    seen, out, err = drove.seen, drove.out, drove.err
    assert seen["dialog"] == "Approve tool call"
    assert {"Allow once", "Deny"} <= set(seen["buttons"])
    assert {"Tasks", "Servers"} <= set(seen["panels"])
    assert drove.returncode == 0, err[-3000:]
    report = json.loads(out.strip().splitlines()[-1])
    assert report["seen"][0] == "waiting for your approval"
    assert report["seen"][-1] == "completed"


# What a screen reader must find in the conversation view, by name: (role, description words).
CHAT_CONTROLS = {
    "Transcript": ("list", ""),
    "Message": ("text", ""),
    "Copy message": ("push button", "Ctrl+Shift+C"),
    "Copy code": ("push button", "code block"),
    "Edit message": ("push button", ""),
    "Regenerate reply": ("push button", ""),
    "Previous version": ("push button", "Alt+Left"),
    "Next version": ("push button", "Alt+Right"),
    "System prompt": ("push button", ""),
    "Conversation list": ("list", ""),
    "Search conversations": ("text", ""),
}


def test_a_screen_reader_user_finds_the_chat_controls_and_steps_back_a_version(
    cli: Cli, desktop: dict[str, str], model_endpoint: ModelEndpoint
) -> None:
    done = cli.run(
        "providers", "add", "scripted", "--kind", "openai",
        "--base-url", model_endpoint.openai_url, "--model", "model-small",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

    def run(*args: str) -> str:
        ran = cli.run(*args)
        assert ran.returncode == 0, (args, ran.stderr)
        return ran.stdout

    seed_versions(run, model_endpoint)
    drove = drive_window(cli, desktop, ["chat_probe.py", "hold"], ["atspi_chat_driver.py"])
    seen, out, err = drove.seen, drove.out, drove.err
    controls = seen["controls"]
    for name, (role, words) in CHAT_CONTROLS.items():
        assert name in controls, (name, sorted(controls))
        assert controls[name]["role"] == role, (name, controls[name])
        assert controls[name]["focusable"], (name, controls[name])  # reachable by Tab
        assert words in controls[name]["description"], (name, controls[name])
    assert drove.returncode == 0, err[-3000:]
    said = [json.loads(line) for line in out.strip().splitlines() if line.startswith("{")]
    assert [s["version"] for s in said] == ["2 of 2", "1 of 2"]  # the press stepped back
    assert "A shorter way" in said[0]["transcript"][-1]
    assert "Here is one way" in said[-1]["transcript"][-1]
