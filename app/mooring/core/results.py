"""Reading a ``CallToolResult`` for people: the tool's own error (the resources it links to:
:mod:`mooring.core.resources`)."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def tool_error(result: dict[str, Any] | None) -> str | None:
    """The tool's own error message when the result says ``isError: true``, else ``None``.

    The message is the first line of the first text block (or a generic phrase).
    """
    if not result or result.get("isError") is not True:
        return None
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text":
            lines = str(block.get("text", "")).strip().splitlines()
            if lines:
                return lines[0]
    return "no details given"


SHOWN_RESULT_CHARS = 20_000
"""What the window asks for of each result it lists: it shows at most the first 2,000
characters (a task card) and 600 (a tool round card); the whole result stays in the ledger, and
``mooring tasks show`` prints it."""

CLIPPED_KEY = "io.mooring/clipped"
"""In a clipped result's ``_meta``: the characters of text the whole result holds."""


def clipped(result: dict[str, Any] | None, limit: int) -> dict[str, Any] | None:
    """``result`` with at most ``limit`` characters of text, for a face that shows only its
    start (the window): its text blocks cut in order, any other block's payload (an image's
    data, an embedded resource) and a large ``structuredContent`` left out, and ``_meta``
    saying so (:data:`CLIPPED_KEY`). A result within the limit is returned as it is."""
    if not result:
        return result
    blocks = [b for b in result.get("content") or [] if isinstance(b, dict)]
    texts = sum(len(str(b.get("text", ""))) for b in blocks if b.get("type") == "text")
    payloads = sum(len(str(b.get("data", b.get("resource", "")))) for b in blocks)
    structured = result.get("structuredContent")
    big_structure = structured is not None and len(repr(structured)) > limit
    if texts + payloads <= limit and not big_structure:
        return result
    left = limit
    kept: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "text":
            text = str(block.get("text", ""))[: max(left, 0)]
            left -= len(text)
            kept.append({**block, "text": text})
        else:
            kept.append({"type": block.get("type"), "mimeType": block.get("mimeType")})
    shown = {key: value for key, value in result.items() if key != "structuredContent"}
    if not big_structure and structured is not None:
        shown["structuredContent"] = structured
    shown["content"] = kept
    shown["_meta"] = {**(result.get("_meta") or {}), CLIPPED_KEY: texts}
    return shown
