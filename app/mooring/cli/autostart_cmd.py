"""``mooring autostart [on|off]``: start the headless monitor at login, or stop doing so."""

from __future__ import annotations

import argparse

from mooring.adapters.autostart import autostart_file, disable_autostart, enable_autostart
from mooring.adapters.launcher import mooring_command
from mooring.cli.exit_codes import ExitCode
from mooring.settings.paths import APP_ID, APP_NAME, Paths


def monitor_command(paths: Paths) -> list[str]:
    """The command the autostart entry runs: this Python (or this bundle), this data folder."""
    command = mooring_command("agent", "run")
    if paths.overridden:
        command += ["--data-dir", str(paths.data_dir)]
    return command


def run_autostart(args: argparse.Namespace, paths: Paths) -> ExitCode:
    """Write, remove or describe the XDG autostart entry."""
    path = autostart_file(APP_ID)
    if args.switch == "on":
        enable_autostart(path, monitor_command(paths), name=APP_NAME)
        print(f"At login, Mooring follows unfinished tasks and notifies you ({path}).")  # noqa: T201
    elif args.switch == "off":
        removed = disable_autostart(path)
        print("Autostart is off." if removed else "Autostart was already off.")  # noqa: T201
    elif path.exists():
        print(f"Autostart is on ({path}).")  # noqa: T201  # CLI output
    else:
        print("Autostart is off. `mooring autostart on` switches it on.")  # noqa: T201
    return ExitCode.OK
