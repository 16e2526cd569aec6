"""One conversation as a record of what was said, what ran and why: JSON and Markdown.

The JSON form is complete (every message, every tool round with its approval decision, task
id and final state); the Markdown form is the same record for people. Strings from models and
servers are hostile: in Markdown they are fenced or escaped so they cannot add structure.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mooring.core.conversation import (
    Conversation,
    ConversationRound,
    Message,
    MessageStatus,
    Role,
)
from mooring.core.files import FileAttachment, FileKind, size_words

EXPORT_FORMAT = 1
"""Version of the JSON export's shape (bumped when a field changes meaning)."""


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def message_json(message: Message) -> dict[str, Any]:
    """A stored message as exported."""
    return {
        "id": message.id,
        "role": message.role.value,
        "content": message.content,
        "created_at": _iso(message.created_at),
        "status": message.status.value,
        "error_kind": message.error_kind,
        "error": message.error,
        "model": message.model,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ],
        "tool_call_id": message.tool_call_id,
        "tool_round_id": message.tool_round_id,
        "is_error": message.is_error,
        "awaits_task": message.awaits_task,
        "followup": message.followup,
        "attachments": [file_json(f) for f in message.files],
    }


def file_json(file: FileAttachment) -> dict[str, Any]:
    """A file attached to a message as exported: a text file's text, an image's bytes in
    base64."""
    out: dict[str, Any] = {
        "id": file.id,
        "kind": file.kind.value,
        "name": file.name,
        "mime": file.mime,
        "size": file.size,
        "sha256": file.sha256,
    }
    if file.kind is FileKind.TEXT:
        out["text"] = file.text
    else:
        out["base64"] = base64.b64encode(file.data).decode("ascii")
    return out


def round_json(item: ConversationRound) -> dict[str, Any]:
    """A tool round with its approval decision, task and final state."""
    tool_round, record = item.round, item.record
    return {
        "id": tool_round.id,
        "server": item.server_alias,
        "server_id": tool_round.server_id,
        "tool": tool_round.tool,
        "arguments": tool_round.arguments,
        "approval": tool_round.approval,
        "operation_id": record.id if record else None,
        "task_id": record.task_id if record else None,
        "state": record.state.value if record else None,
        "status_message": record.status_message if record else None,
        "reason": record.reason if record else None,
        "outcome": tool_round.outcome.value,
        "result": tool_round.result,
        "error": tool_round.error,
        "created_at": _iso(tool_round.created_at),
        "finished_at": _iso(tool_round.finished_at),
    }


def conversation_json(conversation: Conversation) -> dict[str, Any]:
    """A conversation's own fields."""
    return {
        "id": conversation.id,
        "title": conversation.title,
        "created_at": _iso(conversation.created_at),
        "updated_at": _iso(conversation.updated_at),
        "provider_id": conversation.provider_id,
        "model": conversation.model,
        "auto_continue": conversation.auto_continue,
        "muted": conversation.muted,
        "system_prompt": conversation.system_prompt,
        "assistant_id": conversation.assistant_id,
        "offered_tools": (
            None
            if conversation.offering is None
            else {
                "servers": sorted(conversation.offering.servers),
                "tools": [list(pair) for pair in sorted(conversation.offering.tools)],
            }
        ),
    }


def export_json(
    conversation: Conversation,
    messages: Sequence[Message],
    rounds: Sequence[ConversationRound],
    *,
    exported_at: datetime,
) -> dict[str, Any]:
    """The whole record as one JSON-ready object."""
    return {
        "format": EXPORT_FORMAT,
        "exported_at": _iso(exported_at),
        "conversation": conversation_json(conversation),
        "messages": [message_json(m) for m in messages],
        "tool_rounds": [round_json(r) for r in rounds],
    }


def _fence(text: str, info: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    text = " ".join(text.split())
    return re.sub(r"([\\`*_{}\[\]<>()#+!|])", r"\\\1", text) or "—"


def _inline(text: str) -> str:
    return _cell(text)


def _code(value: object) -> str:
    """A name or id as an inline code span, so it reads literally (``files__read``, not
    ``files\\_\\_read``): on one line, fenced by one backtick more than its longest run of
    backticks and padded with a space when it starts or ends with one (CommonMark)."""
    text = " ".join(("" if value is None else str(value)).split())
    if not text:
        return "—"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _code_cell(value: object) -> str:
    # A table splits cells at every unescaped pipe, even inside a code span (GFM).
    return _code(value).replace("|", "\\|")


_WHO = {
    Role.USER: "You",
    Role.ASSISTANT: "Assistant",
    Role.TOOL: "Tool result",
    Role.SYSTEM: "System",
}


def export_markdown(
    conversation: Conversation,
    messages: Sequence[Message],
    rounds: Sequence[ConversationRound],
    *,
    exported_at: datetime,
) -> str:
    """The record as Markdown: the conversation, then every tool round in a table."""
    by_round = {r.round.id: r for r in rounds}
    lines = [
        f"# {_inline(conversation.title)}",
        "",
        f"- Conversation: {_code(conversation.id)}",
        f"- Started: {_iso(conversation.created_at)}",
        f"- Model: {_code(conversation.model) if conversation.model else 'default'}",
        f"- Continue automatically: {'on' if conversation.auto_continue else 'off'}",
        f"- Exported: {_iso(exported_at)}",
        "",
    ]
    if conversation.system_prompt:
        lines += ["## System prompt", "", _fence(conversation.system_prompt, "text"), ""]
    for m in messages:
        who = _WHO[m.role]
        if m.followup:
            who = "Background task result"
        notes = []
        if m.status is MessageStatus.INTERRUPTED:
            notes.append("interrupted")
        if m.status is MessageStatus.ERROR:
            notes.append(f"error: {_code(m.error_kind)}")
        if m.tool_round_id and m.tool_round_id in by_round:
            item = by_round[m.tool_round_id]
            notes.append(_code(f"{item.server_alias}/{item.round.tool}"))
        suffix = f" ({', '.join(notes)})" if notes else ""
        lines += [f"## {who}{suffix}", ""]
        if m.role is Role.TOOL:
            lines += [_fence(m.content), ""]
        elif m.content:
            # Fenced for every author: a "## Assistant" line, a table or HTML the user typed
            # stays text, as the model's does.
            lines += [_fence(m.content, "text"), ""]
        for file in m.files:
            what = "Attached file" if file.kind is FileKind.TEXT else "Attached image"
            lines += [f"{what} {_code(file.name)} ({file.mime}, {size_words(file.size)})", ""]
            if file.kind is FileKind.TEXT:
                lines += [_fence(file.text, "text"), ""]
        if m.error:
            lines += [f"> {_inline(m.error)}", ""]
        for call in m.tool_calls:
            args = json.dumps(call.arguments, indent=2, ensure_ascii=False)
            lines += [f"Tool call {_code(call.name)}:", "", _fence(args, "json"), ""]
    if rounds:
        lines += [
            "## Tool rounds",
            "",
            "| round | server | tool | approval | task | state |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for item in rounds:
            record = item.record
            lines.append(
                "| "
                + " | ".join(
                    _code_cell(v)
                    for v in (
                        item.round.id[:8],
                        item.server_alias,
                        item.round.tool,
                        item.round.approval,
                        record.task_id if record else None,
                        record.state.value if record else item.round.outcome.value,
                    )
                )
                + " |"
            )
        lines.append("")
    return "\n".join(lines)
