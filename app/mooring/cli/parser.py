"""The ``mooring`` command line."""

from __future__ import annotations

import argparse

from mooring import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every ``mooring`` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep all of Mooring's files under DIR (default: $MOORING_DATA_DIR, else the "
        "platform's user data folder)",
    )
    common.add_argument("--json", action="store_true", help="print machine-readable JSON")
    common.add_argument("--log-json", action="store_true", help="write the log file as JSON lines")

    parser = argparse.ArgumentParser(
        prog="mooring",
        description="Mooring: a desktop MCP host for long-running, durable work.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"mooring {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser(
        "gui", parents=[common], help="open the desktop app (the default with no command)"
    )
    commands.add_parser(
        "doctor",
        parents=[common],
        help="check the database, keyring, notifications and Qt; say what to fix",
    )
    return parser
