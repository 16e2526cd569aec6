"""``mooring settings …``: see and change the declared settings."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.settings.schema import BY_KEY, SETTINGS
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
    declared = BY_KEY.get(args.key)
    if declared is None:
        raise KnownError(f"No setting called {args.key!r}.", hint="See `mooring settings list`.")
    raw: str = args.value
    try:
        if declared.type is bool:
            if raw.lower() not in ("true", "false", "yes", "no", "on", "off", "1", "0"):
                raise ValueError(raw)
            value: object = raw.lower() in ("true", "yes", "on", "1")
        elif declared.type is list:
            value = [part.strip() for part in raw.split(",") if part.strip()]
        elif declared.choices is not None and raw not in declared.choices:
            raise ValueError(raw)
        else:
            value = declared.type(raw)
    except ValueError as exc:
        kind = (
            " or ".join(declared.choices)
            if declared.choices is not None
            else f"a {declared.type.__name__}"
        )
        raise KnownError(f"{args.key} takes {kind}, not {raw!r}.") from exc
    settings.set(args.key, value)
    save_settings(settings_file, settings)
    print(f"{args.key} = {value!r}")  # noqa: T201  # CLI output
    return ExitCode.OK
