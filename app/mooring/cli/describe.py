"""State lines that say what a person needs: a tool's own error is not a plain "completed"."""

from __future__ import annotations

from mooring.cli.render import summary
from mooring.core.ids import short_id
from mooring.core.results import tool_error
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:  # type-only: quick commands format records without loading the host
    from mooring.cli.context import CliContext
    from mooring.core.conversation import ToolRound
    from mooring.core.views import TaskView

COMPLETED = "completed"


def with_tool_error(record: TaskRecord, error: str | None) -> str:
    """``summary(record)``, with "completed — the tool reported an error: …" when it did."""
    text = summary(record)
    if record.state is not LocalState.COMPLETED or error is None:
        return text
    rest = text[len(COMPLETED) :] if text.startswith(COMPLETED) else f" ({text})"
    return f"{COMPLETED} — the tool reported an error: {error}{rest}"


async def state_line(ctx: CliContext, record: TaskRecord) -> str:
    """The one-line state of a record, reading its stored result when it completed."""
    if reads_result(record):
        return view_state_line(await ctx.host.task_view(record))
    return _line(record, None)


def reads_result(record: TaskRecord) -> bool:
    """Whether :func:`state_line` reads the record's stored result (else it says
    ``with_tool_error(record, None)``)."""
    return record.state is LocalState.COMPLETED and bool(record.tool_round_id)


def list_line(record: TaskRecord, alias: str | None, state: str) -> str:
    """One line of ``tasks list``: the short id, server/tool and the state line."""
    return f"{short_id(record.id)}  {'?' if alias is None else alias}/{record.tool}  {state}"


def no_tasks(*, active: bool) -> str:
    """What ``tasks list`` says when there is nothing to list."""
    return "No active tasks." if active else "No tasks."


def view_state_line(view: TaskView) -> str:
    """:func:`state_line` of a view, whose stored result was read with it."""
    return _line(view.record, view.tool_round)


def _line(record: TaskRecord, tool_round: ToolRound | None) -> str:
    error = None
    if record.state is LocalState.COMPLETED and tool_round is not None:
        error = tool_error(tool_round.result)
    return with_tool_error(record, error)
