"""The terminal form (``mooring.cli.form``) on streams: what a hostile schema can and cannot
make it print, and how typed choices are read. (A real form on a real pseudo-terminal is in
``tests/e2e/test_terminal_forms.py``.)"""

from __future__ import annotations

import io

import pytest

from mooring.cli.form import ask_fields, field_lines, prompt_hint, read_value
from mooring.cli.output import Terminal
from mooring.core.elicitation import InvalidAnswer, fields_of

SCHEMA = {
    "type": "object",
    "properties": {
        "hero": {
            "type": "string",
            "title": "Hero",
            "description": "Choose your favorite hero",
            "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "2", "title": "Two"}],
            "default": "h1",
        },
        "pets": {
            "type": "array",
            "title": "Pets",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["p1", "p2", "p3"], "enumNames": ["A", "B", "C"]},
        },
        "evil": {
            "type": "string",
            "title": "Evil\nHero (required)",
            "description": "line one\x1b[2J\nline two\u202e",
            "enum": ["x\ny"],
        },
    },
    "required": ["pets"],
}


def test_choices_are_numbered_with_their_titles_and_hostile_text_is_inert() -> None:
    hero, pets, evil = fields_of(SCHEMA)
    assert field_lines(hero) == [
        "Hero",
        "  Choose your favorite hero",
        "  choose one (its number or value):",
        "    1) Superman (h1)",
        "    2) Two (2)",
    ]
    assert prompt_hint(hero) == "1-2, default Superman"
    assert field_lines(pets)[0] == "Pets (required)"
    assert "    3) C (p3)" in field_lines(pets)
    assert prompt_hint(pets) == "1-3, 1 to 2 of them"
    # A title or a label cannot start a line of its own; a description keeps its lines inert.
    assert field_lines(evil) == [
        "Evil\\x0aHero (required)",
        "  line one\\x1b[2J",
        "  line two<U+202E>",
        "  choose one (its number or value):",
        "    1) x\\x0ay",
    ]


def test_a_choice_is_read_by_value_label_or_number() -> None:
    hero, pets, _ = fields_of(SCHEMA)
    assert read_value(hero, "Superman") == "h1"
    assert read_value(hero, "1") == "h1"
    assert read_value(hero, "2") == "2"  # a value that looks like a number is that value
    assert read_value(pets, "3, A") == ["p3", "p1"]
    with pytest.raises(InvalidAnswer, match="not one of the choices: type a number \\(1-3\\)"):
        read_value(pets, "4")
    with pytest.raises(InvalidAnswer, match="allows at most 2 choices"):
        read_value(pets, "1,2,3")


def test_the_form_asks_again_until_an_answer_fits() -> None:
    out = io.StringIO()
    term = Terminal(out=out, err=io.StringIO(), stdin=io.StringIO("\n9\n2,3\n1\n"))
    reply = ask_fields(term, fields_of(SCHEMA))
    assert reply == {
        "action": "accept",
        "content": {"hero": "h1", "pets": ["p2", "p3"], "evil": "x\ny"},
    }
    shown = out.getvalue()
    assert "  [1-2, default Superman] > " in shown
    assert "pets: '9' is not one of the choices" in shown
    assert "\x1b" not in shown
    assert "\u202e" not in shown
