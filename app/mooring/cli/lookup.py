"""Finding the task a user named on the command line, or saying exactly why not."""

from __future__ import annotations

from mooring.core.errors import KnownError
from mooring.core.views import SHOWN_MATCHES, AmbiguousId

TYPE_CHECKING = False  # not typing's: the narrow client loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from mooring.cli.context import CliContext
    from mooring.core.tasks.record import TaskRecord


async def find_task(ctx: CliContext, key: str) -> TaskRecord:
    """The task whose operation id or task id is ``key`` or uniquely starts with it.

    An ambiguous ``key`` is refused with the matching tasks listed (newest first), so the
    user can pick one by a longer prefix; an unknown one is refused as not found.
    """
    try:
        return await ctx.host.find_task(key)
    except AmbiguousId as ambiguous:
        matches = ambiguous.matches
    raise ambiguous_task(key, matches, {s.id: s.alias for s in await ctx.host.list_servers()})


def ambiguous_task(
    key: str, matches: Sequence[TaskRecord], servers: Mapping[str, str]
) -> KnownError:
    """The error of a ``key`` that starts several tasks' ids (``servers``: alias by id)."""
    lines = [
        f"  {r.id[:12]}  {servers.get(r.server_id, '?')}/{r.tool}  {r.state.value}"
        f"  {r.created_at:%Y-%m-%d %H:%M}"
        + (f"  task {r.task_id[:12]}" if r.task_id and r.task_id.startswith(key) else "")
        for r in matches[:SHOWN_MATCHES]
    ]
    if len(matches) > SHOWN_MATCHES:
        lines.append("  … and more")
    return KnownError(
        f"{key!r} is ambiguous: it starts the ids of several tasks:\n" + "\n".join(lines),
        hint="Name one by a longer prefix (or the whole id).",
        code="ambiguous",
    )
