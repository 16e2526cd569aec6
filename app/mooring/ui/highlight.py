"""Code blocks in the transcript: found in a laid-out message, coloured with Pygments.

A model's Markdown reaches the transcript as a ``QTextDocument`` built with HTML turned off
(``ui.models.conversations.render``); Qt marks the blocks of a fenced or indented code block
with ``BlockCodeLanguage``. Here the consecutive blocks of one code block are read back as
one text, lexed by Pygments (by the fence's language only: no guessing, which is slow and
wrong on short snippets), and each token's colour, weight and slant are set on the document.
The text itself is never changed: what is copied and what a screen reader reads stay exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Final

from PySide6.QtGui import (
    QColor,
    QFont,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from PySide6.QtGui import QTextBlock, QTextDocument

MAX_HIGHLIGHTED: Final = 20_000
"""Characters of one code block coloured at most; a longer one is left plain (monospaced),
so a pasted log cannot stall the window."""

LIGHT_STYLE: Final = "default"
DARK_STYLE: Final = "monokai"
LIGHT_BACKGROUND: Final = "#f2f2f2"
DARK_BACKGROUND: Final = "#2a2a2a"
"""Behind every code block, coloured or not: where code starts and ends shows at a glance."""


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """One code block of a message: its fence's language (``""`` when none) and its text."""

    language: str
    text: str
    start: int
    """Where its text starts in the document (a character position)."""


def _language(block: QTextBlock) -> str | None:
    """The code language of a block (``""``: code of no named language), ``None`` if prose."""
    fmt = block.blockFormat()
    if not fmt.hasProperty(QTextFormat.Property.BlockCodeLanguage):
        return None
    return str(fmt.property(QTextFormat.Property.BlockCodeLanguage) or "")


def code_blocks(document: QTextDocument) -> list[CodeBlock]:
    """The message's code blocks, in order. Consecutive code lines of one language form one
    block (two blocks of one language with nothing between them read as one)."""
    found: list[CodeBlock] = []
    lines: list[str] = []
    language: str | None = None
    start = 0
    block = document.begin()
    while True:
        current = _language(block) if block.isValid() else None
        if lines and current != language:
            found.append(CodeBlock(language or "", "\n".join(lines), start))
            lines = []
        if not block.isValid():
            return found
        if current is not None:
            if not lines:
                language, start = current, block.position()
            lines.append(block.text())
        block = block.next()


def highlight(document: QTextDocument, *, dark: bool) -> int:
    """Shade every code block of ``document`` and colour those whose language Pygments knows;
    how many were coloured."""
    coloured = 0
    backdrop = QTextBlockFormat()
    backdrop.setBackground(QColor(DARK_BACKGROUND if dark else LIGHT_BACKGROUND))
    for code in code_blocks(document):
        shade = QTextCursor(document)
        shade.setPosition(code.start)
        shade.setPosition(code.start + len(code.text), QTextCursor.MoveMode.KeepAnchor)
        shade.mergeBlockFormat(backdrop)
        if not code.language or len(code.text) > MAX_HIGHLIGHTED:
            continue
        lexer = _lexer(code.language)
        if lexer is None:
            continue
        cursor = QTextCursor(document)
        formats = _formats(DARK_STYLE if dark else LIGHT_STYLE)
        for offset, token, value in lexer.get_tokens_unprocessed(code.text):
            fmt = _format_of(formats, token)
            if fmt is None or not value:
                continue
            cursor.setPosition(code.start + offset)
            cursor.setPosition(code.start + offset + len(value), QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(fmt)
        coloured += 1
    return coloured


@cache
def _lexer(language: str) -> Lexer | None:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        # No stripping: offsets must match the document's text exactly.
        lexer: Lexer = get_lexer_by_name(language.strip().lower(), stripnl=False, stripall=False)
    except ClassNotFound:
        return None
    return lexer


@cache
def _formats(style_name: str) -> dict[object, QTextCharFormat]:
    """A character format per token type of a Pygments style (types it leaves plain omitted)."""
    from pygments.styles import get_style_by_name

    style = get_style_by_name(style_name)
    formats: dict[object, QTextCharFormat] = {}
    for token, spec in style:
        if not (spec["color"] or spec["bold"] or spec["italic"]):
            continue
        fmt = QTextCharFormat()
        if spec["color"]:
            fmt.setForeground(QColor(f"#{spec['color']}"))
        if spec["bold"]:
            fmt.setFontWeight(QFont.Weight.Bold)
        if spec["italic"]:
            fmt.setFontItalic(True)
        formats[token] = fmt
    return formats


def _format_of(formats: dict[object, QTextCharFormat], token: object) -> QTextCharFormat | None:
    """The format of ``token`` or of its nearest parent type the style colours."""
    current: object | None = token
    while current is not None:
        fmt = formats.get(current)
        if fmt is not None:
            return fmt
        current = getattr(current, "parent", None)
    return None
