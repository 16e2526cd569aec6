"""Exit codes of ``mooring`` commands (docs/cli-reference.md is generated from these docstrings)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a command's exit status means."""

    OK = 0
    """Success; a followed call completed and the tool did not report an error."""
    PROBLEM = 1
    """Something the user must fix: an unusable database, a failed check, a known error."""
    USAGE = 2
    """The command line was wrong (argparse's own code)."""
    NEEDS_APPROVAL = 3
    """The call needs the user's approval and no terminal was there to ask."""
    TOOL_ERROR = 4
    """The call completed, and the tool reported an error (``isError: true``)."""
    TASK_FAILED = 5
    """The call failed with a JSON-RPC error, or was never sent."""
    CANCELLED = 6
    """A followed call or task was cancelled (``tasks cancel`` exits 0 once delivered)."""
    EXPIRED = 7
    """The server forgot the task, or the user abandoned it: no result can be had."""
    UNKNOWN_OUTCOME = 8
    """The request was sent and no answer came: it may or may not have run."""
    WAITING = 9
    """Stopped following while the task still runs or waits for input (it goes on)."""
    DENIED = 10
    """The call was refused before sending: by the user, a rule, or a guard."""
    INTERNAL = 70
    """A bug: Mooring itself failed (EX_SOFTWARE). Please report it with the log file."""
