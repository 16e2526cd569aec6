"""Exit codes of ``mooring`` commands (documented in docs/cli.md)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a command's exit status means."""

    OK = 0
    PROBLEM = 1
    """Something the user must fix: an unusable database, a failed check, a known error."""
    USAGE = 2
    """The command line was wrong (argparse's own code)."""
    INTERNAL = 70
    """A bug: Mooring itself failed (EX_SOFTWARE). Please report it with the log file."""
