"""Showing hostile text: strings from servers and models are displayed as plain text only.

The window's one entry point to :func:`mooring.core.text.neutralize` (every face uses that
function), with a length limit for labels and rows.
"""

from __future__ import annotations

import html
from typing import Any

from mooring.core.text import neutralize


def inert(text: Any, *, multiline: bool = False, limit: int | None = None) -> str:
    """``text`` safe to show: control and bidi characters made visible and inert
    (``<U+202E>``, ``\\x1b``), so nothing can reorder, hide or fake what is around it.

    ``multiline`` keeps newlines and tabs; ``limit`` cuts very long text with an ellipsis.
    """
    raw = "" if text is None else str(text)
    if limit is None:
        return neutralize(raw, multiline=multiline)
    # Every character neutralises to one or more, so the first ``limit`` decide what is shown:
    # a 5 MB tool result costs what its shown part costs (on the GUI thread).
    shown = neutralize(raw[:limit], multiline=multiline)
    if len(raw) > limit or len(shown) > limit:
        shown = shown[: max(limit - 1, 0)] + "…"
    return shown


def plain_tooltip(text: str) -> str:
    """A tooltip that shows ``text`` literally: Qt renders tooltips that look like HTML as
    rich text, so the (already neutralised) text is escaped inside a paragraph."""
    return f"<p>{html.escape(text)}</p>"
