"""The ``mooring`` entry point: quick read-only commands first, everything else to bootstrap.

``mooring tasks list`` on a database that needs nothing done to it is answered from a
read-only ``sqlite3`` view of the ledger (:mod:`mooring.storage.reader`), without loading the
host, the MCP SDK, SQLAlchemy or an event loop. Every other command line, and a listing whose
data folder needs work first (a database to create or migrate, the bundled demo server to set
up), goes to :func:`mooring.bootstrap.main`, which does everything as before. ``--help`` and
``--version`` are answered by the parser here, before anything else loads.
"""

from __future__ import annotations

import gc
import sys

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    import argparse
    import logging
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from mooring.settings.paths import Paths
    from mooring.storage.reader import LedgerReader


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mooring`` command and ``python -m mooring``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    # What starting up makes (modules, classes, the parser) lives as long as the process: the
    # garbage collector's passes over it find nothing (~6 ms of a quick listing). It runs again
    # for the full path's command, which settles it itself (bootstrap.settle_collector).
    collecting = gc.isenabled()
    gc.disable()
    try:
        from mooring.adapters.launcher import PROGRAM_ENTRIES

        if (argv[0] if argv else None) not in PROGRAM_ENTRIES:
            from mooring.cli.parser import build_parser
            from mooring.cli.quick import is_quick

            args = build_parser().parse_args(argv)
            code = None
            if is_quick(args):
                code = _quick(args)
            elif _narrow(args):  # the narrow client, if an engine runs
                code = _through_engine(args)
            if code is not None:
                # As settle_collector does: what is loaded stays out of the collector's
                # sight, or its last pass, as the process ends, walks all of it (~10 ms).
                gc.freeze()
                return code
        from mooring.bootstrap import main as full_main
    finally:
        if collecting:
            gc.enable()
    return full_main(argv)


def _quick(args: argparse.Namespace) -> int | None:
    """Run a quick command; ``None`` when the full path must run it instead. Ends as every
    command ends (:func:`mooring.cli.errors.end_command`).

    A read-only listing that goes well has nothing to log: logging (and the log file) is set up
    only to record an internal error. Whatever would warn (a settings file with problems) goes
    the full way, which says it.
    """
    return _ended(args, lambda: _quick_listing(args))


def _narrow(args: argparse.Namespace) -> bool:
    """Whether the narrow client (:mod:`mooring.cli.calling`) runs this command line when an
    engine runs: ``mooring call … --detach`` and ``mooring tasks answer`` (decided here, so
    that module loads for nothing else)."""
    if args.command == "call":
        return bool(args.detach)
    return args.command == "tasks" and getattr(args, "tasks_command", None) == "answer"


def _through_engine(args: argparse.Namespace) -> int | None:
    """The command on the narrow client (:mod:`mooring.cli.calling`), when the data folder's
    engine runs; ``None`` when it does not (the full path starts it)."""
    from mooring.cli.calling import run_here

    return _ended(args, lambda: run_here(args))


def _ended(args: argparse.Namespace, body: Callable[[], int | None]) -> int | None:
    """``body``'s code, ended as every command ends (:func:`mooring.cli.errors.end_command`);
    logging (and the log file) is set up only to record an internal error."""
    from mooring.cli.errors import end_command
    from mooring.settings.paths import resolve_paths

    def log_file() -> Path:
        return resolve_paths(args.data_dir).log_file

    def file_log() -> logging.Logger:
        from mooring.adapters.logging import setup_logging

        return setup_logging(log_file(), json_lines=args.log_json).getChild("bootstrap")

    return end_command(body, log_file, file_log)


def _quick_listing(args: argparse.Namespace) -> int | None:
    from mooring.cli.output import Terminal
    from mooring.cli.quick import list_tasks
    from mooring.settings.paths import resolve_paths
    from mooring.settings.store import read_settings
    from mooring.storage.reader import open_reader

    paths = resolve_paths(args.data_dir)
    paths.check()
    reader = open_reader(paths.database)  # reads only: nothing happened yet if it is None
    if reader is None:
        return None
    try:
        settings = read_settings(paths.settings_file)
        if settings.problems or settings.damaged is not None:
            return None  # the host reports them (and keeps a damaged file aside)
        if settings.get("demo_server.enabled") and not _demo_server_settled(reader, paths):
            return None  # the host sets it up (or follows this installation) first
        return int(list_tasks(reader, args, Terminal()))
    finally:
        reader.close()


def _demo_server_settled(reader: LedgerReader, paths: Paths) -> bool:
    """Whether the host's first-use step would leave the bundled demo server as it is."""
    from mooring.adapters import launcher
    from mooring.core.builtin_launch import launch_for_this_installation
    from mooring.core.servers import Transport

    builtin = reader.builtin_servers()
    if not builtin:
        return False  # never configured: the host configures it now
    command, args = launcher.demo_server_command(paths.demo_store)
    return all(
        launch_for_this_installation(theirs, their_args, command, tuple(args)) is None
        for transport, theirs, their_args in builtin
        if transport == Transport.STDIO.value
    )
