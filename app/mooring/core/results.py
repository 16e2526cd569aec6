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
