"""The composition root: builds everything in a fixed, logged order and passes it along.

paths → logging → settings → database (migrate) → services → (GUI: QApplication + qasync loop)
→ window. No global singletons: collaborators are constructor arguments. The GUI and the CLI
share this file; nothing else wires concrete classes together.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mooring import __version__
from mooring.cli.doctor import print_report
from mooring.cli.exit_codes import ExitCode
from mooring.cli.parser import build_parser
from mooring.core.clock import SystemClock
from mooring.core.errors import KnownError
from mooring.services.diagnostics import Level, Report
from mooring.services.first_run import ensure_demo_server
from mooring.settings.paths import Paths, resolve_paths
from mooring.settings.store import Settings, load_settings
from mooring.storage.db import Database
from mooring.storage.store import SqlStore

if TYPE_CHECKING:
    from mooring.ui.main_window import MainWindow

log = logging.getLogger("mooring.bootstrap")


def demo_server_command(paths: Paths) -> tuple[str, list[str]]:
    """How to start the bundled demo server with this Python, on a store in the data folder."""
    return sys.executable, ["-m", "mooring.demo_server", "--store", str(paths.demo_store)]


def _start(args: argparse.Namespace) -> tuple[Paths, Settings]:
    from mooring.adapters.logging import setup_logging

    paths = resolve_paths(args.data_dir)
    setup_logging(paths.log_file, json_lines=args.log_json)
    log.info("mooring %s starting; data folder %s", __version__, paths.data_dir)
    settings = load_settings(paths.settings_file)
    return paths, settings


def run_doctor(args: argparse.Namespace) -> ExitCode:
    """Check every part of the environment and print what to fix."""
    from mooring.adapters.notify.probe import notifier_status
    from mooring.adapters.secrets import keyring_status
    from mooring.ui.probe import qt_status

    paths, settings = _start(args)
    report = Report()
    try:
        paths.ensure()
    except OSError as exc:
        report.add(
            "data directory",
            Level.FAIL,
            f"{paths.data_dir} cannot be created: {exc.strerror}",
            "Choose a writable folder with --data-dir or MOORING_DATA_DIR.",
        )
    else:
        source = "--data-dir / MOORING_DATA_DIR" if paths.overridden else "platform default"
        report.add("data directory", Level.OK, f"{paths.data_dir} ({source})")

    try:
        db = Database.open(paths.database)
    except KnownError as exc:
        report.add("database", Level.FAIL, exc.message, exc.hint)
        report.add("schema version", Level.FAIL, "unknown (the database could not be opened)")
    else:
        try:
            store = SqlStore(db, SystemClock())
            counts = asyncio.run(store.counts())
            report.add(
                "database", Level.OK, f"{paths.database} ({sum(counts.values())} task records)"
            )
            report.add("schema version", Level.OK, f"{db.schema.current} (newest known)")
        finally:
            db.close()

    keyring = keyring_status()
    report.add(
        "keyring",
        Level.OK if keyring.usable else Level.WARN,
        f"{keyring.backend}: {keyring.detail}",
        ""
        if keyring.usable
        else "Secrets will be kept for this session only. Unlock or "
        "install a Secret Service keyring (e.g. gnome-keyring) to keep them.",
    )
    notifier = notifier_status()
    report.add(
        "notifications",
        Level.OK if notifier.usable else Level.WARN,
        f"{notifier.backend}: {notifier.detail}",
        ""
        if notifier.usable
        else "Start a notification daemon to be told about finished work outside the window.",
    )
    qt = qt_status()
    if not qt.importable:
        report.add(
            "qt platform",
            Level.FAIL,
            qt.detail,
            "Install Qt's system libraries: run `bash packaging/system-deps.sh gui`.",
        )
    else:
        report.add(
            "qt platform",
            Level.OK if qt.display else Level.WARN,
            qt.detail,
            "" if qt.display else "The CLI works without a display; the window needs one.",
        )
    if settings.problems:
        report.add("settings", Level.WARN, "; ".join(settings.problems))
    return print_report(report, as_json=args.json)


def run_gui(
    args: argparse.Namespace, *, on_ready: Callable[[MainWindow], None] | None = None
) -> ExitCode:
    """Open the database, set up first-run defaults and run the window."""
    from mooring.ui.app import run_app, show_fatal
    from mooring.ui.main_window import HostOverview
    from mooring.ui.probe import qt_status

    paths, settings = _start(args)
    qt = qt_status()
    if not qt.importable or not qt.display:
        sys.stderr.write(f"mooring: the window cannot open: {qt.detail}\n")
        sys.stderr.write("mooring: `mooring doctor` checks this machine; the CLI works headless.\n")
        return ExitCode.PROBLEM
    try:
        db = Database.open(paths.database)
    except KnownError as exc:
        log.error("cannot open the database: %s", exc.message)
        sys.stderr.write(f"mooring: {exc.message}\n  {exc.hint}\n")
        show_fatal(exc.message, exc.hint)
        return ExitCode.PROBLEM
    clock = SystemClock()
    store = SqlStore(db, clock)

    async def load() -> HostOverview:
        return HostOverview(
            data_dir=str(paths.data_dir),
            database=str(paths.database),
            schema=f"{db.schema.current} (newest known: {db.schema.head})",
            servers=await store.list_servers(),
            task_counts=await store.counts(),
            issues=await store.open_issues(),
        )

    async def first_run() -> None:
        if settings.get("demo_server.enabled"):
            command, demo_args = demo_server_command(paths)
            await ensure_demo_server(store, clock, command=command, args=demo_args)

    try:
        asyncio.run(first_run())
        return ExitCode(run_app(load, on_ready=on_ready))
    finally:
        db.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mooring`` command and ``python -m mooring``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "doctor":
            return int(run_doctor(args))
        return int(run_gui(args))
    except KnownError as exc:
        sys.stderr.write(f"mooring: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"  {exc.hint}\n")
        return int(ExitCode.PROBLEM)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `mooring ... | head`: the reader left, nothing to report
        return int(ExitCode.OK)
    except Exception:
        log.exception("internal error")
        sys.stderr.write(
            "mooring: internal error; this is a bug. Details are in the log file "
            f"({resolve_paths(args.data_dir).log_file}).\n"
        )
        return int(ExitCode.INTERNAL)
