"""What the model is told: the stored conversation made valid for both wires, tool results as
bounded text, task outcomes and provider failures in plain words. Pure functions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mooring.core.chat import ChatTurnMessage, ProviderError, ProviderFailure
from mooring.core.conversation import Message, MessageStatus, Role, ToolRound
from mooring.core.files import FileAttachment, FileKind
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState

MAX_RESULT_CHARS = 16_000
"""Characters of one tool result given to the model at most."""
FOLLOWUP_PREFIX = "[Background task result, reported by Mooring — not written by the user]"
NOT_RECORDED = "No result was recorded for this call (Mooring stopped before it finished)."


def _bounded(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit} more characters not shown]"


def result_for_model(result: dict[str, Any] | None) -> str:
    """A ``CallToolResult`` as text for the model: text blocks joined, other blocks described,
    structured content when there is no text; bounded in size."""
    if not result:
        return "(the tool returned nothing)"
    parts: list[str] = []
    for block in result.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(block.get("data", ""))) * 3 // 4
            parts.append(f"[{kind}: {block.get('mimeType', 'unknown type')}, ~{size} bytes]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {block.get('uri', '')} {block.get('name', '')}]")
        elif kind == "resource":
            resource = block.get("resource") or {}
            if isinstance(resource, dict) and "text" in resource:
                parts.append(f"[resource {resource.get('uri', '')}]\n{resource.get('text', '')}")
            else:
                uri = resource.get("uri", "") if isinstance(resource, dict) else ""
                parts.append(f"[binary resource {uri}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    structured = result.get("structuredContent")
    if not any(p.strip() for p in parts) and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    return _bounded("\n".join(parts) or "(the tool returned no content)")


def _error_words(error: dict[str, Any] | None) -> str:
    if not error:
        return "no details"
    message = str(error.get("message") or "no details")
    code = error.get("code")
    return f"{message} (code {code})" if code is not None else message


def tool_result_text(
    record: TaskRecord, tool_round: ToolRound | None, server_alias: str
) -> tuple[str, bool, bool]:
    """What the model is told about a call that just returned: (text, is_error, task_started)."""
    where = f"server {server_alias!r}, tool {record.tool!r}"
    result = tool_round.result if tool_round else None
    error = tool_round.error if tool_round else None
    match record.state:
        case LocalState.COMPLETED:
            return result_for_model(result), bool(result and result.get("isError")), False
        case LocalState.DENIED:
            approval = tool_round.approval if tool_round else None
            why = record.reason or _error_words(error)
            return (
                f"The call was refused and did not run ({where}). Reason: {why}"
                + (f" [approval: {approval}]" if approval else "")
                + ". Explain this to the user; do not retry it unless they ask.",
                True,
                False,
            )
        case LocalState.FAILED:
            return f"The call failed ({where}): {_error_words(error)}", True, False
        case LocalState.UNKNOWN_OUTCOME:
            return (
                f"The request was sent ({where}) but no answer came: it may or may not have "
                "run. Do not call it again; tell the user, who can check and retry it.",
                True,
                False,
            )
        case LocalState.WORKING | LocalState.INPUT_REQUIRED if record.task_id:
            state = (
                "waiting for the user's input (the user answers it, not you)"
                if record.state is LocalState.INPUT_REQUIRED
                else "working"
            )
            return (
                f"The work started as a background task ({where}, task id {record.task_id}, "
                f"state: {state}). Its result will be added to this conversation when it "
                "ends. Tell the user it is running; do not call the tool again for it.",
                False,
                True,
            )
        case _:
            return f"The call ended {record.state.value.replace('_', ' ')} ({where}).", True, False


def followup_text(record: TaskRecord, tool_round: ToolRound | None, server_alias: str) -> str:
    """A background task's final state and result, in plain words for the model."""
    head = (
        f"The background task {record.task_id} (server {server_alias!r}, tool "
        f"{record.tool!r}) ended: {record.state.value.replace('_', ' ')}."
    )
    result = tool_round.result if tool_round else None
    error = tool_round.error if tool_round else None
    match record.state:
        case LocalState.COMPLETED:
            tail = "The tool reported an error:" if result and result.get("isError") else "Result:"
            return f"{head}\n{tail}\n{result_for_model(result)}"
        case LocalState.FAILED:
            return f"{head} It failed: {_error_words(error)}"
        case LocalState.CANCELLED:
            return f"{head} It was cancelled; no result."
        case _:
            why = f" ({record.reason})" if record.reason else ""
            return f"{head} Its result is lost: the server no longer has it{why}."


def file_text(file: FileAttachment) -> str:
    """An attached text file as the model reads it, inside the user's message."""
    return f"[Attached file {file.describe()}]\n{file.text}\n[End of {file.name}]"


def _user_parts(message: Message, images: bool) -> tuple[str, tuple[FileAttachment, ...]]:
    """A user message's text with its text files, and the images that go as image parts
    (described instead when the model takes none)."""
    parts = [message.content] if message.content else []
    sent: list[FileAttachment] = []
    for file in message.files:
        if file.kind is FileKind.TEXT:
            parts.append(file_text(file))
        elif images:
            sent.append(file)
        else:
            parts.append(f"[Attached image {file.describe()}: not sent, this model takes none]")
    return "\n\n".join(parts), tuple(sent)


def build_context(
    messages: Sequence[Message], *, images: bool = True
) -> tuple[ChatTurnMessage, ...]:
    """The stored conversation as the model must see it.

    Every assistant tool call is answered by exactly one tool message right after it (a call
    left unanswered by a crash gets "no result recorded"); follow-ups become user-side notes
    (the call they belong to was already answered); a failed reply keeps only its text, an
    empty one is left out (one wire refuses empty assistant turns);
    consecutive user-side messages are joined (one wire requires alternating turns). A user's
    text files go inside its text; its images as image parts (``images``: the model takes
    them), else described in words.
    """
    out: list[ChatTurnMessage] = []
    pending: list[str] = []

    def flush() -> None:
        for call_id in pending:
            out.append(
                ChatTurnMessage(
                    role=Role.TOOL, content=NOT_RECORDED, tool_call_id=call_id, is_error=True
                )
            )
        pending.clear()

    def user(text: str, attached: tuple[FileAttachment, ...] = ()) -> None:
        flush()
        if out and out[-1].role is Role.USER:
            out[-1] = ChatTurnMessage(
                role=Role.USER,
                content=out[-1].content + "\n\n" + text,
                images=out[-1].images + attached,
            )
        else:
            out.append(ChatTurnMessage(role=Role.USER, content=text, images=attached))

    for m in messages:
        if m.role is Role.USER:
            user(*_user_parts(m, images))
        elif m.role is Role.ASSISTANT:
            flush()
            if m.status is MessageStatus.COMPLETE and (m.content or m.tool_calls):
                out.append(
                    ChatTurnMessage(role=Role.ASSISTANT, content=m.content, tool_calls=m.tool_calls)
                )
                pending.extend(c.id for c in m.tool_calls)
            elif m.content:
                out.append(ChatTurnMessage(role=Role.ASSISTANT, content=m.content))
        elif m.role is Role.TOOL and m.followup:
            user(f"{FOLLOWUP_PREFIX}\n{m.content}")
        elif m.role is Role.TOOL and m.tool_call_id in pending:
            out.append(
                ChatTurnMessage(
                    role=Role.TOOL,
                    content=m.content,
                    tool_call_id=m.tool_call_id,
                    is_error=m.is_error,
                )
            )
            pending.remove(m.tool_call_id)
    flush()
    return tuple(out)


def failure_words(error: ProviderError) -> str:
    """A provider failure as the user reads it in the conversation."""
    lead = {
        ProviderFailure.AUTH: "The model provider refused the API key",
        ProviderFailure.UNREACHABLE: "The model provider could not be reached",
        ProviderFailure.RATE_LIMITED: "The model provider is rate limiting requests",
        ProviderFailure.NO_TOOL_SUPPORT: "This model does not support tools",
        ProviderFailure.CONTEXT_TOO_LONG: "The conversation is too long for this model",
        ProviderFailure.MODEL_NOT_FOUND: "The model provider does not know this model",
        ProviderFailure.STREAM_BROKEN: "The reply broke off halfway",
        ProviderFailure.BAD_REQUEST: "The model provider rejected the request",
        ProviderFailure.SERVER_ERROR: "The model provider had an internal error",
    }[error.kind]
    detail = error.message.strip()
    return f"{lead}: {detail}" if detail else f"{lead}."
