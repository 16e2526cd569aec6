"""Hostile text is shown visibly and inertly: no control or bidi character reaches a display."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mooring.core.text import is_safe, neutralize

BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]


def _dangerous(char: str, *, multiline: bool) -> bool:
    code = ord(char)
    if multiline and char in "\n\t":
        return False
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or code in BIDI
        or code in (0x2028, 0x2029)
        or 0xD800 <= code <= 0xDFFF
    )


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        ("\x1b[2J\x1b]0;pwned\x07", "\\x1b[2J\\x1b]0;pwned\\x07"),
        ("ok\x08\x08no", "ok\\x08\\x08no"),
        ("safe\rEVIL", "safe\\x0dEVIL"),
        ("nul\x00del\x7fcsi\x9b", "nul\\x00del\\x7fcsi\\x9b"),
        ("report\u202etxt.exe", "report<U+202E>txt.exe"),
        ("\u2067isolated\u2069", "<U+2067>isolated<U+2069>"),
        ("\u200e\u200f\u061c", "<U+200E><U+200F><U+061C>"),
        ("line\u2028break", "line<U+2028>break"),
        ("lone \ud800", "lone <U+D800>"),
    ],
)
def test_controls_and_bidi_become_visible_escapes(hostile: str, shown: str) -> None:
    assert neutralize(hostile) == shown


def test_newline_and_tab_survive_only_where_several_lines_are_allowed() -> None:
    assert neutralize("a\n\tb") == "a\n\tb"
    assert neutralize("a\n\tb", multiline=False) == "a\\x0a\\x09b"


def test_ordinary_text_is_untouched() -> None:
    text = "Imported suppliers.csv: 12 saved — café, 東京, עברית, emoji 🚢, C:\\path"
    assert neutralize(text) == text
    assert is_safe(text)
    assert not is_safe("\x1b[0m")


@given(st.text(alphabet=st.characters(codec=None)), st.booleans())
def test_no_dangerous_character_survives(text: str, multiline: bool) -> None:
    shown = neutralize(text, multiline=multiline)
    assert not any(_dangerous(c, multiline=multiline) for c in shown)
    shown.encode("utf-8")  # printable on any UTF-8 terminal, even from lone surrogates


@given(st.text(alphabet=st.characters(codec=None)), st.booleans())
def test_neutralising_twice_is_neutralising_once(text: str, multiline: bool) -> None:
    once = neutralize(text, multiline=multiline)
    assert neutralize(once, multiline=multiline) == once


@given(st.text(alphabet=st.characters(codec=None)))
def test_only_dangerous_characters_change(text: str) -> None:
    kept = [c for c in text if not _dangerous(c, multiline=True)]
    shown = neutralize(text)
    # Every safe character is still there, in order, and nothing printable was added
    # except the escapes themselves (ASCII).
    rest = iter(shown)
    assert all(any(c == s for s in rest) for c in kept)
    assert all(c.isascii() for c in shown if c not in text)


def test_every_category_cc_character_is_escaped() -> None:
    controls = "".join(chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cc")
    assert "\\x" in neutralize(controls)
    assert not any(unicodedata.category(c) == "Cc" for c in neutralize(controls, multiline=False))
