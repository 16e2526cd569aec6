"""How a ``KnownError`` ends a command: one neutralised message, a hint, the documented code."""

from __future__ import annotations

from typing import TextIO

from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.core.text import neutralize

USAGE_CODES = frozenset({"usage", "invalid_answer"})
"""``KnownError.code`` values that mean "the command line was wrong" (exit 2)."""


def report_known_error(exc: KnownError, stream: TextIO) -> ExitCode:
    """Write ``mooring: MESSAGE`` (and the hint) to ``stream``; return the exit code.

    The message may quote a server or a file, so it is neutralised like every human line.
    """
    stream.write(neutralize(f"mooring: {exc.message}") + "\n")
    if exc.hint:
        stream.write(neutralize(f"  {exc.hint}") + "\n")
    stream.flush()
    return ExitCode.USAGE if exc.code in USAGE_CODES else ExitCode.PROBLEM
