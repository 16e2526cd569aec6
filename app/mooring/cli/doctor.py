"""``mooring doctor``: check every part of the environment, print it, and exit non-zero when
something Mooring needs is unusable."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TextIO

from mooring.cli.exit_codes import ExitCode
from mooring.core.diagnostics import Check, Level, ProbeResult, Report
from mooring.core.text import neutralize
from mooring.settings.paths import Paths
from mooring.settings.store import Settings


def diagnose(
    paths: Paths,
    settings: Settings,
    *,
    database: Callable[[], list[Check]],
    keyring: Callable[[], ProbeResult],
    notifier: Callable[[], ProbeResult],
    qt: Callable[[], ProbeResult],
) -> Report:
    """Every finding about this machine and data folder (probes are injected by the
    composition root: the database's lives in storage, Qt's in the window's package)."""
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

    for check in database():
        report.checks.append(check)

    found = keyring()
    report.add(
        "keyring",
        Level.OK if found.usable else Level.WARN,
        f"{found.backend}: {found.detail}",
        ""
        if found.usable
        else "Secrets cannot be kept. Give provider keys and server secrets by environment "
        "variable name instead (--api-key-env VAR, --env-from NAME=VAR; read at each use), or "
        "unlock or install a Secret Service keyring (e.g. gnome-keyring).",
    )
    found = notifier()
    link = getattr(found, "link", "")  # which link of the delivery chain is in use
    report.add(
        "notifications",
        Level.OK if found.usable else Level.WARN,
        (f"via {link}: " if link else "") + f"{found.backend}: {found.detail}",
        ""
        if found.usable
        else "Start a notification daemon to be told about finished work outside the window.",
    )
    found = qt()
    if found.backend == "unavailable":
        report.add(
            "qt platform",
            Level.FAIL,
            found.detail,
            "Install Qt's system libraries: run `bash packaging/system-deps.sh gui`.",
        )
    else:
        report.add(
            "qt platform",
            Level.OK if found.usable else Level.WARN,
            found.detail,
            "" if found.usable else "The CLI works without a display; the window needs one.",
        )
    if settings.problems:
        report.add("settings", Level.WARN, "; ".join(settings.problems))
    return report


def print_report(report: Report, *, as_json: bool, out: TextIO = sys.stdout) -> ExitCode:
    """Print the report; the exit code says whether anything failed."""
    if as_json:
        json.dump(report.as_json(), out, indent=2)
        out.write("\n")
    else:
        out.write(neutralize(report.as_text()) + "\n")
        if not report.ok:
            out.write("\nSomething Mooring needs is unusable; see the hints above.\n")
    return ExitCode.OK if report.ok else ExitCode.PROBLEM
