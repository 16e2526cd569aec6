"""The full path's entry point: a command line routed to what runs it (the window without a
command)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mooring.adapters import launcher
from mooring.bootstrap.agent import run_agent
from mooring.bootstrap.doctor import run_doctor
from mooring.bootstrap.headless import run_headless
from mooring.bootstrap.starting import log
from mooring.bootstrap.window import run_gui, smoke_run
from mooring.cli.errors import end_command
from mooring.cli.parser import build_parser
from mooring.settings.paths import resolve_paths


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mooring`` command and ``python -m mooring``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == [launcher.DEMO_SERVER_ENTRY]:
        # A separate program behind an entry of this one, so a frozen bundle (which cannot
        # run `python -m`) can start it: `mooring demo-server --help` lists its flags.
        from mooring.demo_server.cli import main as demo_server_main

        return demo_server_main(argv[1:])
    if argv[:1] == [launcher.LOCAL_MODEL_ENTRY]:
        # The same for a local model's process (`python -m mooring.local_model`).
        from mooring.local_model.__main__ import main as local_model_main

        return local_model_main(argv[1:])
    args = build_parser().parse_args(argv)
    return end_command(
        lambda: _run(args), lambda: resolve_paths(args.data_dir).log_file, lambda: log
    )


def _run(args: argparse.Namespace) -> int:
    """Run the command ``args`` names (the window without one)."""
    if args.command == "doctor":
        return int(run_doctor(args))
    if args.command == "settings":
        from mooring.cli.settings_cmd import run_settings

        settings_paths = resolve_paths(args.data_dir)
        settings_paths.check()
        return int(run_settings(args, settings_paths.settings_file))
    if args.command == "agent":
        return int(run_agent(args))
    if args.command == "models":
        from mooring.cli.models_cmd import run_models

        model_paths = resolve_paths(args.data_dir)
        model_paths.check()
        return int(run_models(args, model_paths))
    if args.command == "autostart":
        from mooring.cli.autostart_cmd import run_autostart

        return int(run_autostart(args, resolve_paths(args.data_dir)))
    from mooring.cli.commands import HEADLESS

    if args.command in HEADLESS:
        return int(run_headless(args))
    return int(run_gui(args, on_ready=smoke_run()))
