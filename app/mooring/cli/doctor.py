"""``mooring doctor``: print every check and exit non-zero when something is unusable."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from mooring.cli.exit_codes import ExitCode
from mooring.core.text import neutralize
from mooring.services.diagnostics import Report


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
