"""Code blocks in the transcript: monospaced, coloured by language, the text untouched."""

from __future__ import annotations

from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument
from pytestqt.qtbot import QtBot

from mooring.ui.highlight import MAX_HIGHLIGHTED, code_blocks, highlight
from mooring.ui.models.conversations import render

REPLY = (
    "Run this:\n\n"
    "```python\ndef vendor(code):\n    return '<b>' + code  # not HTML\n```\n\n"
    "Then:\n\n```sh\necho done\n```\n\n"
    "```nosuchlanguage\nkeep me plain\n```\n"
)


def format_at(document: QTextDocument, text: str) -> QTextCharFormat:
    """The character format of the first character of ``text`` in ``document``."""
    position = document.toPlainText().index(text)
    cursor = QTextCursor(document)
    cursor.setPosition(position + 1)  # the format of the character before the cursor
    return cursor.charFormat()


def colour_at(document: QTextDocument, text: str) -> str:
    return format_at(document, text).foreground().color().name()


def test_a_replys_code_blocks_are_found_in_order_with_their_language(qtbot: QtBot) -> None:
    document = render(REPLY, markdown=True)
    blocks = code_blocks(document)
    assert [(b.language, b.text) for b in blocks] == [
        ("python", "def vendor(code):\n    return '<b>' + code  # not HTML"),
        ("sh", "echo done"),
        ("nosuchlanguage", "keep me plain"),
    ]
    # Each block's start is where its text is in the document.
    plain = document.toPlainText()
    assert all(plain[b.start : b.start + len(b.text)] == b.text for b in blocks)


def test_known_languages_are_coloured_and_the_text_stays_exactly_as_written(qtbot: QtBot) -> None:
    document = render(REPLY, markdown=True)
    plain = document.toPlainText()
    assert "return '<b>' + code  # not HTML" in plain  # no HTML rendered, nothing dropped

    keyword = colour_at(document, "def vendor")
    comment = colour_at(document, "# not HTML")
    prose = colour_at(document, "Run this")
    unknown = colour_at(document, "keep me plain")
    assert keyword != prose
    assert comment not in {prose, keyword}
    assert unknown == prose  # a language Pygments does not know stays plain
    # Code is monospaced, coloured or not; prose is not.
    assert format_at(document, "def vendor").fontFamilies() == ["monospace"]
    assert format_at(document, "keep me plain").fontFamilies() == ["monospace"]
    assert not format_at(document, "Run this").fontFamilies()

    # Rendering without highlighting gives the same text (what is copied and read aloud).
    bare = QTextDocument()
    bare.setMarkdown(
        REPLY,
        QTextDocument.MarkdownFeature.MarkdownDialectGitHub
        | QTextDocument.MarkdownFeature.MarkdownNoHTML,
    )
    assert bare.toPlainText() == plain


def test_a_huge_code_block_is_left_plain(qtbot: QtBot) -> None:
    body = "x = 1\n" * (MAX_HIGHLIGHTED // 6 + 10)
    document = render(f"```python\n{body}```\n", markdown=True)
    assert highlight(document, dark=False) == 0
    assert colour_at(document, "x = 1") == colour_at(render("x = 1", markdown=True), "x = 1")


def test_a_dark_palette_gets_the_dark_style(qtbot: QtBot) -> None:
    light = render("```python\ndef f(): pass\n```", markdown=True)
    dark = render("```python\ndef f(): pass\n```", markdown=False)
    dark.setMarkdown(
        "```python\ndef f(): pass\n```",
        QTextDocument.MarkdownFeature.MarkdownDialectGitHub
        | QTextDocument.MarkdownFeature.MarkdownNoHTML,
    )
    assert highlight(dark, dark=True) == 1
    assert colour_at(light, "def") != colour_at(dark, "def")
