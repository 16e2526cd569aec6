"""``mooring autostart on|off``: the XDG autostart entry for the headless monitor."""

from __future__ import annotations

import configparser
import shlex
from pathlib import Path

from tests.helpers.processes import run_mooring


def entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string(path.read_text())
    return parser["Desktop Entry"]


def test_autostart_on_writes_an_entry_that_runs_the_monitor_on_this_data_folder(
    tmp_path: Path,
) -> None:
    config = tmp_path / "my config"
    data = tmp_path / "data with space"
    env: dict[str, str | None] = {"XDG_CONFIG_HOME": str(config)}
    assert "off" in run_mooring("autostart", data_dir=data, env=env).stdout

    on = run_mooring("autostart", "on", data_dir=data, env=env)
    assert on.returncode == 0, on.stderr
    path = config / "autostart" / "io.mooring.Mooring.desktop"
    desktop = entry(path)
    assert desktop["Type"] == "Application"
    assert desktop["NoDisplay"] == "true"
    command = shlex.split(desktop["Exec"])
    assert command[1:] == [
        "-m",
        "mooring",
        "agent",
        "run",
        "--data-dir",
        str(data),
    ]
    assert "on" in run_mooring("autostart", data_dir=data, env=env).stdout

    off = run_mooring("autostart", "off", data_dir=data, env=env)
    assert off.returncode == 0
    assert not path.exists()
    assert "already off" in run_mooring("autostart", "off", data_dir=data, env=env).stdout


def test_without_xdg_config_home_the_entry_goes_to_dot_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = run_mooring(
        "autostart", "on", data_dir=tmp_path / "d", env={"XDG_CONFIG_HOME": None, "HOME": str(home)}
    )
    assert done.returncode == 0, done.stderr
    assert (home / ".config" / "autostart" / "io.mooring.Mooring.desktop").exists()
