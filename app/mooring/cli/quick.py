"""Read-only commands served without the host: ``mooring tasks list``, straight from the ledger.

A listing needs no MCP SDK, no event loop and no SQLAlchemy; loading them would cost many times
what the listing does. The output is the same as the host's handler gives (the same line and
state functions, :mod:`mooring.cli.describe`); ``--json`` stays with the host's handler, which
builds the full task views.
"""

from __future__ import annotations

import argparse

from mooring.cli.describe import list_line, no_tasks, with_tool_error
from mooring.cli.exit_codes import ExitCode
from mooring.cli.output import Terminal
from mooring.core.results import tool_error
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Protocol

    class TaskListing(Protocol):
        """What a quick listing reads (``mooring.storage.reader.LedgerReader``)."""

        def list_records(self, *, limit: int | None = None) -> list[TaskRecord]: ...

        def unfinished(self) -> list[TaskRecord]: ...

        def server_alias(self, server_id: str) -> str | None: ...

        def tool_result(self, round_id: str) -> dict[str, Any] | None: ...


def is_quick(args: argparse.Namespace) -> bool:
    """Whether this command line is one the quick path serves."""
    return (
        args.command == "tasks"
        and getattr(args, "tasks_command", None) == "list"
        and not getattr(args, "json", False)
    )


def list_tasks(listing: TaskListing, args: argparse.Namespace, terminal: Terminal) -> ExitCode:
    """``mooring tasks list`` (as :func:`mooring.cli.tasks.list_tasks` prints it)."""
    records = listing.unfinished() if args.active else listing.list_records(limit=args.limit)
    if not records:
        terminal.say(no_tasks(active=args.active))
    aliases: dict[str, str | None] = {}
    for r in records:
        if r.server_id not in aliases:
            aliases[r.server_id] = listing.server_alias(r.server_id)
        error = None
        if r.state is LocalState.COMPLETED and r.tool_round_id:
            error = tool_error(listing.tool_result(r.tool_round_id))
        terminal.say(list_line(r, aliases[r.server_id], with_tool_error(r, error)))
    return ExitCode.OK
