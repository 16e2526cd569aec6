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
from pathlib import Path

import pytest

from tests.e2e.conftest import SAMPLES, Cli, add_demo

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


def test_a_screen_reader_user_finds_the_panels_and_allows_a_call(
    cli: Cli, tmp_path: Path, desktop: dict[str, str]
) -> None:
    add_demo(cli, tmp_path, allow=False)
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
        [
            sys.executable,
            str(HERE / "window_probe.py"),
            "call",
            str(SAMPLES / "suppliers_clean.csv"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        driver = subprocess.run(
            [str(SYSTEM_PYTHON), str(HERE / "atspi_driver.py"), "Mooring"],
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | desktop,
            timeout=150,
        )
        assert driver.returncode == 0, (driver.stdout, driver.stderr[-2000:])
        seen = json.loads(driver.stdout.strip().splitlines()[-1])
        out, err = app.communicate(timeout=120)
    finally:
        stop(app)
    assert seen["dialog"] == "Approve tool call"
    assert {"Allow once", "Deny"} <= set(seen["buttons"])
    assert {"Tasks", "Servers"} <= set(seen["panels"])
    assert app.returncode == 0, err[-3000:]
    report = json.loads(out.strip().splitlines()[-1])
    assert report["seen"][0] == "waiting for your approval"
    assert report["seen"][-1] == "completed"
