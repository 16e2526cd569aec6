"""Showing hostile text: strings from servers and models are displayed as plain text only.

TODO(lead): replace :func:`neutralise` with ``mooring.core.text.neutralise`` once that module
(written on another branch) is on main; this local helper exists only until then.
"""

from __future__ import annotations

import unicodedata
from typing import Any

_BIDI_AND_INVISIBLE = frozenset(
    {
        *range(0x202A, 0x202F),  # LRE RLE PDF LRO RLO
        *range(0x2066, 0x206A),  # LRI RLI FSI PDI
        0x200E,  # LRM
        0x200F,  # RLM
        0x061C,  # ALM
        0x200B,  # zero width space
        0x200C,
        0x200D,
        0x2060,  # word joiner
        0xFEFF,  # BOM / zero width no-break space
    }
)


def neutralise(text: Any, *, multiline: bool = False, limit: int | None = None) -> str:
    """``text`` safe to show: control, bidi-override and invisible characters become visible
    escapes (``\\u202e``), so nothing can reorder, hide or fake what is around it.

    ``multiline`` keeps newlines and tabs; ``limit`` cuts very long text with an ellipsis.
    """
    raw = "" if text is None else str(text)
    out: list[str] = []
    for ch in raw:
        code = ord(ch)
        if multiline and ch in "\n\t":
            out.append(ch)
        elif code in _BIDI_AND_INVISIBLE or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co"):
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    shown = "".join(out)
    if limit is not None and len(shown) > limit:
        shown = shown[: max(limit - 1, 0)] + "…"
    return shown
