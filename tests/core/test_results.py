"""Clipping a tool result for a face that shows only its start (the window)."""

from __future__ import annotations

from typing import Any

from mooring.core.results import CLIPPED_KEY, clipped


def test_a_result_within_the_limit_is_passed_as_it_is() -> None:
    result: dict[str, Any] = {"content": [{"type": "text", "text": "hello"}], "isError": False}
    assert clipped(result, 5) is result
    assert clipped(None, 5) is None


def test_text_is_cut_in_order_and_the_whole_size_said() -> None:
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": "a" * 6}, {"type": "text", "text": "b" * 6}],
        "isError": True,
        "_meta": {"seen": 1},
    }
    shown = clipped(result, 8)
    assert shown == {
        "content": [{"type": "text", "text": "a" * 6}, {"type": "text", "text": "bb"}],
        "isError": True,
        "_meta": {"seen": 1, CLIPPED_KEY: 12},
    }
    assert result["content"][1]["text"] == "b" * 6  # the stored result is untouched


def test_payloads_and_a_large_structure_are_left_out_a_small_structure_kept() -> None:
    image = {"type": "image", "mimeType": "image/png", "data": "A" * 100}
    big = {
        "content": [{"type": "text", "text": "rows"}, image],
        "structuredContent": {"x": "y" * 50},
    }
    assert clipped(big, 20) == {
        "content": [{"type": "text", "text": "rows"}, {"type": "image", "mimeType": "image/png"}],
        "_meta": {CLIPPED_KEY: 4},
    }
    small = {"content": [{"type": "text", "text": "r" * 30}], "structuredContent": {"n": 1}}
    assert clipped(small, 20) == {
        "content": [{"type": "text", "text": "r" * 20}],
        "structuredContent": {"n": 1},
        "_meta": {CLIPPED_KEY: 30},
    }
