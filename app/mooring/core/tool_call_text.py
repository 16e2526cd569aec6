"""Tool calls a small model writes as text: ``<tool_call>{"name": …, "arguments": …}</tool_call>``.

Small local models (the Hermes and Qwen formats) often put their tool calls in the reply's
content instead of the wire's ``tool_calls`` field. :func:`parse_tool_call_text` finds such
blocks and reads each tolerantly; one that cannot be read becomes a call with an ``error``, which
the chat answers with an error result and never runs. :class:`ToolCallTextFilter` hides the
blocks from the streamed text as it arrives, so the person sees what the model said, not the
markup. Pure: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CLOSE_TAG", "OPEN_TAG", "ParsedToolCall", "ToolCallText", "ToolCallTextFilter"]

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"


@dataclass(frozen=True, slots=True)
class ParsedToolCall:
    """One ``<tool_call>`` block: a name and JSON-object arguments, or why it is not runnable."""

    name: str
    arguments: dict[str, Any]
    raw: str
    """The block's text between the tags (kept to explain a malformed call)."""
    error: str = ""
    """Why the block is not a runnable call; "" when it is."""


@dataclass(frozen=True, slots=True)
class ToolCallText:
    """A reply's text split into what is said and the tool calls written in it."""

    text: str
    """The text with every tool-call block removed."""
    calls: tuple[ParsedToolCall, ...] = field(default=())


def _strip_fence(raw: str) -> str:
    body = raw.strip()
    if body.startswith("```"):
        body = body[3:]
        if body[:4].lower() == "json":
            body = body[4:]
        body = body.removesuffix("```")
    return body.strip()


def _read_call(raw: str) -> list[ParsedToolCall]:
    """The calls of one block's text (a list of call objects is accepted too)."""
    body = _strip_fence(raw)
    if not body:
        return [ParsedToolCall("", {}, raw, "the tool call is empty")]
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        return [ParsedToolCall("", {}, raw, f"the tool call is not valid JSON ({exc.msg})")]
    items = value if isinstance(value, list) and value else [value]
    return [_read_object(item, raw) for item in items]


def _read_object(value: Any, raw: str) -> ParsedToolCall:
    if not isinstance(value, dict):
        return ParsedToolCall("", {}, raw, "the tool call is not a JSON object")
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        return ParsedToolCall("", {}, raw, 'the tool call has no "name"')
    name = name.strip()
    arguments: Any = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):  # some models write the arguments as a JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return ParsedToolCall(name, {}, raw, f"its arguments are not valid JSON ({exc.msg})")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return ParsedToolCall(name, {}, raw, "its arguments are not a JSON object")
    return ParsedToolCall(name, arguments, raw)


def parse_tool_call_text(text: str) -> ToolCallText:
    """Split ``text`` into what is said and its ``<tool_call>`` blocks. A block left open at the
    end (the reply stopped inside it) is read to the end of the text."""
    said: list[str] = []
    calls: list[ParsedToolCall] = []
    rest = text
    while True:
        start = rest.find(OPEN_TAG)
        if start < 0:
            said.append(rest)
            break
        said.append(rest[:start])
        rest = rest[start + len(OPEN_TAG) :]
        end = rest.find(CLOSE_TAG)
        raw, rest = (rest, "") if end < 0 else (rest[:end], rest[end + len(CLOSE_TAG) :])
        calls.extend(_read_call(raw))
    return ToolCallText("".join(said), tuple(calls))


class ToolCallTextFilter:
    """Streams a reply's text with its tool-call blocks left out.

    ``feed`` returns what can be shown now: a tail that may be the start of ``<tool_call>`` is
    held back until the next piece tells. The pieces joined with :meth:`finish` equal
    ``parse_tool_call_text(whole).text``.
    """

    def __init__(self) -> None:
        self._held = ""
        self._inside = False

    def feed(self, piece: str) -> str:
        """The part of ``piece`` (with what was held back) that is outside any block."""
        buffer = self._held + piece
        shown: list[str] = []
        while buffer:
            tag = CLOSE_TAG if self._inside else OPEN_TAG
            at = buffer.find(tag)
            if at >= 0:
                if not self._inside:
                    shown.append(buffer[:at])
                buffer = buffer[at + len(tag) :]
                self._inside = not self._inside
                continue
            keep = _partial_tag(buffer, tag)
            if not self._inside:
                shown.append(buffer[: len(buffer) - keep])
            buffer = buffer[len(buffer) - keep :]
            break
        self._held = buffer
        return "".join(shown)

    def finish(self) -> str:
        """What was held back, once the reply has ended ("" inside an unclosed block)."""
        held, self._held = self._held, ""
        return "" if self._inside else held


def _partial_tag(buffer: str, tag: str) -> int:
    """The length of the longest end of ``buffer`` that starts ``tag`` (could be completed)."""
    for size in range(min(len(tag) - 1, len(buffer)), 0, -1):
        if tag.startswith(buffer[-size:]):
            return size
    return 0
