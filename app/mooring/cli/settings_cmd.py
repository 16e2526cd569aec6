"""``mooring settings …``: see and change the declared settings."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mooring.cli.exit_codes import ExitCode
from mooring.settings.editor import parse_setting
from mooring.settings.schema import SETTINGS
from mooring.settings.store import load_settings, save_settings


def run_settings(args: argparse.Namespace, settings_file: Path) -> ExitCode:
    """List settings, or set one (typed by its declaration)."""
    settings = load_settings(settings_file)
    if args.settings_command == "list":
        if args.json:
            print(json.dumps(settings.as_dict(), indent=2))  # noqa: T201  # CLI output
        else:
            for s in SETTINGS:
                print(f"{s.key} = {settings.get(s.key)!r}\n    {s.description}")  # noqa: T201
        return ExitCode.OK
    value = parse_setting(args.key, args.value)
    settings.set(args.key, value)
    save_settings(settings_file, settings)
    print(f"{args.key} = {value!r}")  # noqa: T201  # CLI output
    return ExitCode.OK
