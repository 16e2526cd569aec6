"""How a ``KnownError`` ends a command: one neutralised message, a hint, the documented code."""

from __future__ import annotations

import sys
from collections.abc import Callable

from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.core.text import neutralize

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    import logging
    from pathlib import Path
    from typing import TextIO, TypeVar

    T = TypeVar("T")

USAGE_CODES = frozenset({"usage", "invalid_answer"})
"""``KnownError.code`` values that mean "the command line was wrong" (exit 2)."""


def report_known_error(exc: KnownError, stream: TextIO) -> ExitCode:
    """Write ``mooring: MESSAGE`` (and the hint) to ``stream``; return the exit code.

    The message may quote a server or a file, so it is neutralised like every human line.
    """
    from mooring.cli.remedies import hint_of

    stream.write(neutralize(f"mooring: {exc.message}") + "\n")
    hint = hint_of(exc)
    if hint:
        stream.write(neutralize(f"  {hint}") + "\n")
    stream.flush()
    return ExitCode.USAGE if exc.code in USAGE_CODES else ExitCode.PROBLEM


def end_command(
    body: Callable[[], T], log_file: Callable[[], Path], log: Callable[[], logging.Logger]
) -> T | int:
    """Run a command's ``body`` and end it as every command ends: with its own code; a known
    error in words (:func:`report_known_error`); Ctrl-C as 130; quietly when the reader of the
    output left (``mooring ... | head``); anything else logged in full as an internal error
    (to the logger ``log`` gives, asked only then: a quick command sets its log file up only
    for this), the user told where the log file is (``log_file``, also asked only then)."""
    try:
        return body()
    except KnownError as exc:
        return int(report_known_error(exc, sys.stderr))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader left, nothing to report
        return int(ExitCode.OK)
    except Exception:
        logger = log()
        logger.exception("internal error")
        sys.stderr.write(
            f"mooring: internal error; this is a bug. Details are in the log file ({log_file()}).\n"
        )
        return int(ExitCode.INTERNAL)
