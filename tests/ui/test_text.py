"""Showing server and model text inert, cut to a limit."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mooring.core.text import neutralize
from mooring.ui.text import inert


def cut_after_neutralising(text: str, limit: int, *, multiline: bool) -> str:
    """The plain rule: neutralise all of it, then cut (what ``inert`` must show)."""
    shown = neutralize(text, multiline=multiline)
    return shown[: max(limit - 1, 0)] + "…" if len(shown) > limit else shown


# Control, bidi and line-separator characters among plain ones, so that neutralising grows text.
TEXT = st.text(
    alphabet=st.sampled_from(["a", "é", " ", "\n", "\t", "\x1b", "\x00", "\u202e", "\u2028", "文"])
)


@given(TEXT, st.integers(min_value=0, max_value=40), st.booleans())
def test_a_cut_text_shows_what_cutting_after_neutralising_shows(
    text: str, limit: int, multiline: bool
) -> None:
    assert inert(text, limit=limit, multiline=multiline) == cut_after_neutralising(
        text, limit, multiline=multiline
    )


def test_a_huge_text_is_cut_from_its_start() -> None:
    huge = "\u202e" + "x" * 5_000_000
    assert inert(huge, limit=10) == "<U+202E>x…"
