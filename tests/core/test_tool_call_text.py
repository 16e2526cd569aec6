"""Tool calls written as ``<tool_call>`` text are read tolerantly; a malformed one is never
runnable, and the streamed text hides the blocks exactly as the whole reply's parse does."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mooring.core.tool_call_text import (
    CLOSE_TAG,
    OPEN_TAG,
    ParsedToolCall,
    ToolCallTextFilter,
    parse_tool_call_text,
)


def block(body: str) -> str:
    return f"{OPEN_TAG}{body}{CLOSE_TAG}"


@pytest.mark.parametrize(
    ("text", "said", "calls"),
    [
        ("No calls here.", "No calls here.", []),
        (
            'Let me look.\n<tool_call>\n{"name": "demo__list", "arguments": {}}\n</tool_call>',
            "Let me look.\n",
            [("demo__list", {}, "")],
        ),
        (  # arguments as a JSON string (some models write them so)
            block('{"name": "f", "arguments": "{\\"x\\": 1}"}'),
            "",
            [("f", {"x": 1}, "")],
        ),
        (  # "parameters" instead of "arguments"; a fenced body
            block('```json\n{"name": "f", "parameters": {"q": "a"}}\n```'),
            "",
            [("f", {"q": "a"}, "")],
        ),
        (  # two blocks, text between and after
            block('{"name": "a", "arguments": {}}') + " and " + block('{"name": "b"}') + " done",
            " and  done",
            [("a", {}, ""), ("b", {}, "")],
        ),
        (  # a list of calls in one block
            block('[{"name": "a", "arguments": {"n": 1}}, {"name": "b", "arguments": {}}]'),
            "",
            [("a", {"n": 1}, ""), ("b", {}, "")],
        ),
        (  # the reply stopped inside the block: read to the end
            'Sure <tool_call>{"name": "a", "arguments": {"n": 2}}',
            "Sure ",
            [("a", {"n": 2}, "")],
        ),
    ],
)
def test_tool_calls_written_as_text_are_read(
    text: str, said: str, calls: list[tuple[str, dict[str, object], str]]
) -> None:
    found = parse_tool_call_text(text)
    assert found.text == said
    assert [(c.name, c.arguments, c.error) for c in found.calls] == calls


@pytest.mark.parametrize(
    ("body", "name", "error"),
    [
        ('{"name": "a", "arguments": {"n": 1}', "", "not valid JSON"),  # cut short
        ("call the weather tool", "", "not valid JSON"),
        ("", "", "empty"),
        ('"just a string"', "", "not a JSON object"),
        ('{"arguments": {"n": 1}}', "", 'no "name"'),
        ('{"name": "  ", "arguments": {}}', "", 'no "name"'),
        ('{"name": "a", "arguments": [1, 2]}', "a", "not a JSON object"),
        ('{"name": "a", "arguments": 5}', "a", "not a JSON object"),
        ('{"name": "a", "arguments": "{not json"}', "a", "not valid JSON"),
    ],
)
def test_a_malformed_call_is_kept_with_why_and_no_arguments(
    body: str, name: str, error: str
) -> None:
    [call] = parse_tool_call_text(f"before {block(body)} after").calls
    assert call.name == name
    assert error in call.error
    assert call.arguments == {}
    assert call.raw == body


def test_a_readable_call_has_no_error() -> None:
    [call] = parse_tool_call_text(block('{"name": "a", "arguments": {"k": [1]}}')).calls
    assert call == ParsedToolCall("a", {"k": [1]}, '{"name": "a", "arguments": {"k": [1]}}')


# Text that is likely to contain tags and pieces of tags.
_pieces = st.sampled_from(
    [OPEN_TAG, CLOSE_TAG, "<", "<tool", "_call>", "</", "tool_call", ">", "{", "}", "a", " ", "\n"]
)
_texts = st.lists(st.one_of(_pieces, st.text(max_size=5)), max_size=20).map("".join)


@given(_texts, st.lists(st.integers(min_value=0, max_value=60), max_size=8))
def test_streamed_text_hides_exactly_what_the_whole_parse_removes(
    text: str, cuts: list[int]
) -> None:
    hidden = ToolCallTextFilter()
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    shown = [hidden.feed(text[a:b]) for a, b in itertools.pairwise(bounds)]
    shown.append(hidden.finish())
    assert "".join(shown) == parse_tool_call_text(text).text


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.integers() | st.text(max_size=8)))
def test_arguments_round_trip_through_a_block(arguments: dict[str, object]) -> None:
    text = block(json.dumps({"name": "tool", "arguments": arguments}))
    [call] = parse_tool_call_text(text).calls
    assert (call.name, call.arguments, call.error) == ("tool", arguments, "")


def test_text_that_only_looks_like_a_tag_is_shown_once_the_reply_tells() -> None:
    hidden = ToolCallTextFilter()
    assert hidden.feed("a <tool") == "a "  # could become <tool_call>: held back
    assert hidden.feed("box> b") == "<toolbox> b"
    assert hidden.feed("<tool_c") == ""
    assert hidden.finish() == "<tool_c"
