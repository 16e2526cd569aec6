"""Showing text from servers and models to people without letting it act on the display.

A server's status message, tool result, question, error or tool name is hostile until shown
otherwise: an ESC can rewrite the user's terminal (colours, cursor moves, window titles,
hyperlinks), a backspace or carriage return can hide what came before it, and a bidi override
can make ``txt.exe`` read as ``exe.txt``. ``neutralize`` makes every such character visible
and inert, so what the user reads is what the server sent.
"""

from __future__ import annotations

import re

_BIDI = frozenset(
    {
        0x061C,  # ARABIC LETTER MARK
        0x200E,  # LEFT-TO-RIGHT MARK
        0x200F,  # RIGHT-TO-LEFT MARK
        *range(0x202A, 0x202F),  # embeddings, pop, overrides (LRE RLE PDF LRO RLO)
        *range(0x2066, 0x206A),  # isolates (LRI RLI FSI PDI)
    }
)
_LINE_BREAKERS = frozenset({0x2028, 0x2029})  # LINE / PARAGRAPH SEPARATOR

_CONTROLS = "\x00-\x1f\x7f-\x9f"
_UNICODE = "".join(chr(c) for c in sorted(_BIDI | _LINE_BREAKERS))
# Lone surrogates (from a server's ``"\ud800"`` escapes) cannot be encoded for a terminal.
_SURROGATES = "\ud800-\udfff"
_UNSAFE = re.compile(f"[{_CONTROLS}{_UNICODE}{_SURROGATES}]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def _multi_line(match: re.Match[str]) -> str:
    char = match.group(0)
    return char if char in "\n\t" else _visible(match)


def neutralize(text: str, *, multiline: bool = True) -> str:
    """``text`` with every control, bidi and line-separator character made visible and inert.

    C0 and C1 controls and DEL become ``\\x1b``-style escapes; bidi marks, embeddings,
    overrides and isolates, U+2028/U+2029 and lone surrogates become ``<U+202E>``-style tags.
    With ``multiline`` (the default) newline and tab are kept as they are; without it they are
    escaped too, so the result is exactly one line. Every other character, including
    backslashes and all printable non-ASCII text, is kept, and neutralising twice changes
    nothing more than neutralising once.
    """
    if multiline:
        return _UNSAFE.sub(_multi_line, text)
    return _UNSAFE.sub(_visible, text)


def is_safe(text: str, *, multiline: bool = True) -> bool:
    """Whether ``text`` can be shown as it is (``neutralize`` would not change it)."""
    return neutralize(text, multiline=multiline) == text
