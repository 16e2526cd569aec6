"""``mooring doctor``: every part of the environment checked, with what to fix."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from mooring.bootstrap.starting import start_up
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.settings.paths import Paths

if TYPE_CHECKING:
    from mooring.core.diagnostics import Check


def run_doctor(args: argparse.Namespace) -> ExitCode:
    """Check every part of the environment and print what to fix."""
    from mooring.adapters.notify.probe import notifier_status
    from mooring.adapters.secrets import keyring_status
    from mooring.cli.doctor import diagnose, print_report
    from mooring.ui.probe import qt_status

    paths, settings = start_up(args)
    report = diagnose(
        paths,
        settings,
        database=lambda: _database_checks(paths),
        keyring=keyring_status,
        notifier=notifier_status,
        qt=lambda: qt_status().as_probe(),
    )
    return print_report(report, as_json=args.json)


def _database_checks(paths: Paths) -> list[Check]:
    """Can the database be opened, and at which schema version?"""
    import asyncio

    from mooring.core.clock import SystemClock
    from mooring.core.diagnostics import Check, Level
    from mooring.storage.db import Database
    from mooring.storage.store import SqlStore

    try:
        db = Database.open(paths.database)
    except KnownError as exc:
        return [
            Check("database", Level.FAIL, exc.message, exc.hint),
            Check("schema version", Level.FAIL, "unknown (the database could not be opened)"),
        ]
    try:
        counts = asyncio.run(SqlStore(db, SystemClock()).counts())
        return [
            Check("database", Level.OK, f"{paths.database} ({sum(counts.values())} task records)"),
            Check("schema version", Level.OK, f"{db.schema.current} (newest known)"),
        ]
    finally:
        db.close()
