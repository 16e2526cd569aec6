"""How records look on the command line: one JSON object per task, and one-line summaries."""

from __future__ import annotations

import json
from collections.abc import Sequence

from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.core.tasks.words import state_words

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:  # type-only: quick commands format records without loading the host
    from typing import Any, Protocol, TypeVar

    from mooring.cli.context import CliContext
    from mooring.cli.output import Terminal
    from mooring.core.tasks.inputs import TaskInput
    from mooring.core.views import TaskView

    class _HasId(Protocol):
        @property
        def id(self) -> str: ...

    T = TypeVar("T", bound=_HasId)


def _iso(value: object) -> str | None:
    return value.isoformat() if value is not None else None  # type: ignore[attr-defined]


def input_json(item: TaskInput) -> dict[str, Any]:
    """An input request as shown to scripts."""
    return {
        "key": item.key,
        "method": item.method,
        "message": item.params.get("message"),
        "requested_schema": item.params.get("requestedSchema"),
        "answered": item.answer is not None,
        "delivered": item.acknowledged_at is not None,
        "outcome": item.outcome,
    }


def view_json(view: TaskView) -> dict[str, Any]:
    """The ``tasks show --json`` object (also what ``call --json`` prints)."""
    record = view.record
    tool_round = view.tool_round
    return {
        "id": record.id,
        "task_id": record.task_id,
        "server": view.server_alias or record.server_id,
        "tool": record.tool,
        "state": record.state.value,
        "state_words": str(view.words),
        "server_status": record.server_status,
        "status_message": record.status_message,
        "flags": sorted(f.value for f in record.flags),
        "reason": record.reason,
        "poll_count": record.poll_count,
        "anomaly_count": record.anomaly_count,
        "cancel_requested": record.cancel_requested,
        "created_at": _iso(record.created_at),
        "updated_at": _iso(record.updated_at),
        "last_checked_at": _iso(record.last_checked_at),
        "ttl_ms": record.ttl_ms,
        "poll_interval_ms": record.poll_interval_ms,
        "approval": tool_round.approval if tool_round else None,
        "result": tool_round.result if tool_round else None,
        "error": tool_round.error if tool_round else None,
        "inputs": [input_json(i) for i in view.inputs],
        "wire": record.wire.value if record.wire is not None else None,
        "progress": _progress_json(record),
    }


def _progress_json(record: TaskRecord) -> dict[str, Any] | None:
    """A plain call's last progress notification (``None`` when none was seen)."""
    if record.last_sign_of_life_at is None:
        return None
    return {
        "progress": record.progress,
        "total": record.progress_total,
        "message": record.progress_message,
        "last_sign_of_life_at": _iso(record.last_sign_of_life_at),
    }


def progress_line(record: TaskRecord) -> str:
    """A plain call's last progress, for people: "working: 3 of 10 - copying" (server text is
    shown printable only and shortened: it is the server's, not ours)."""
    done = f"{record.progress:g}" if record.progress is not None else "?"
    text = f"working: {done}" + (
        f" of {record.progress_total:g}" if record.progress_total is not None else ""
    )
    if record.progress_message:
        message = "".join(c if c.isprintable() else " " for c in record.progress_message)
        text += f" - {message[:200]}"
    return text


async def record_json(ctx: CliContext, record: TaskRecord) -> dict[str, Any]:
    """:func:`view_json` of a record."""
    return view_json(await ctx.host.task_view(record))


async def records_json(ctx: CliContext, records: Sequence[TaskRecord]) -> list[dict[str, Any]]:
    """:func:`view_json` of each record, in their order, read in one database round (a
    thousand records read one by one cost a thousand trips to the database thread)."""
    return [view_json(view) for view in await ctx.host.task_views(records)]


def summary(record: TaskRecord, result: dict[str, Any] | None = None) -> str:
    """One line: the state in the words every face uses, with its details."""
    return str(state_words(record, result))


def exit_code_for(record: TaskRecord, result: dict[str, Any] | None) -> ExitCode:
    """The documented exit code for where a followed task ended."""
    match record.state:
        case LocalState.COMPLETED:
            return ExitCode.TOOL_ERROR if result and result.get("isError") else ExitCode.OK
        case LocalState.FAILED:
            return ExitCode.TASK_FAILED
        case LocalState.CANCELLED:
            return ExitCode.CANCELLED
        case LocalState.EXPIRED | LocalState.ABANDONED:
            return ExitCode.EXPIRED
        case LocalState.UNKNOWN_OUTCOME:
            return ExitCode.UNKNOWN_OUTCOME
        case LocalState.DENIED:
            return ExitCode.DENIED
        case _:
            return ExitCode.WAITING


def say_final(
    terminal: Terminal, as_json: bool, record: TaskRecord, shown: dict[str, Any]
) -> ExitCode:
    """Print where a record ended (``shown``: its :func:`view_json`); its exit code."""
    if as_json:
        terminal.say(json.dumps(shown, indent=2), exact=True)
    else:
        text = result_text(shown["result"])
        if text:
            terminal.say(text)
        if shown["error"]:
            terminal.say(f"error {shown['error'].get('code')}: {shown['error'].get('message')}")
    if record.state is LocalState.DENIED and shown["approval"] == "aborted":
        if not as_json:
            terminal.warn(
                "mooring: this call needs your approval and there is no terminal to ask on.\n"
                "  Run it in a terminal, or add a rule: mooring rules add SERVER TOOL allow"
            )
        return ExitCode.NEEDS_APPROVAL
    return exit_code_for(record, shown["result"])


def result_text(result: dict[str, Any] | None) -> str:
    """The text parts of a ``CallToolResult``, for people."""
    if not result:
        return ""
    parts = []
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "resource_link":
            name = block.get("name")
            parts.append(f"[resource_link] {block.get('uri')}" + (f" ({name})" if name else ""))
        elif isinstance(block, dict):
            parts.append(f"[{block.get('type', 'content')}]")
    return "\n".join(parts)


def by_prefix(items: Sequence[T], prefix: str, what: str) -> T:
    """The one item whose ``id`` starts with ``prefix``, or a clear error naming ``what``."""
    matches = [item for item in items if item.id.startswith(prefix)]
    if len(matches) != 1:
        raise KnownError(
            f"No {what} {prefix!r}." if not matches else f"{prefix!r} matches several {what}s.",
            code="not_found",
        )
    return matches[0]
