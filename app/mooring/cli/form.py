"""A server's form (elicitation) asked on a terminal, field by field.

Each field is shown as its title (marked when required), its description under it, and, for a
choice, its options numbered with the labels the server gave them (``oneOf``/``anyOf``
titles, or a legacy enum's ``enumNames``); then a ``>`` prompt that says what may be typed. A
choice is typed by its value, its label or its number (several, for a multi-select, separated
by commas). Every value is checked as it is typed, and asked again until it fits.

Every string of the schema is the server's, so hostile: it is made inert (one line for the
title and the labels, so a line break cannot forge another field) before it is shown.
"""

from __future__ import annotations

from typing import Any

from mooring.cli.output import Terminal
from mooring.core.elicitation import (
    Field,
    FieldKind,
    InvalidAnswer,
    Problem,
    accept,
    decline,
    parse_text,
    validate,
)
from mooring.core.elicitation import cancel as cancel_reply
from mooring.core.text import neutralize

_CHOICE_KINDS = (FieldKind.CHOICE, FieldKind.CHOICES)


def _line(text: object) -> str:
    return neutralize(str(text), multiline=False)


def field_lines(item: Field) -> list[str]:
    """What is shown of ``item`` before its prompt: its title, description and choices."""
    lines = [_line(item.title) + (" (required)" if item.required else "")]
    for part in neutralize(item.description).strip().splitlines():
        lines.append(f"  {part}".rstrip())
    if item.kind in _CHOICE_KINDS:
        if item.kind is FieldKind.CHOICES:
            lines.append("  choose any (numbers or values, separated by commas):")
        else:
            lines.append("  choose one (its number or value):")
        for number, option in enumerate(item.options, start=1):
            label = _line(option.label)
            value = _line(option.value)
            lines.append(f"    {number}) {label}" + (f" ({value})" if label != value else ""))
    return lines


def prompt_hint(item: Field) -> str:
    """What may be typed at ``item``'s prompt (empty: anything)."""
    if item.kind not in _CHOICE_KINDS:
        return _line(item.hint)
    parts = [_numbers(item)]
    low, high = item.min_items, item.max_items
    if low is not None and high is not None:
        parts.append(f"{low} to {high} of them" if low != high else f"{low} of them")
    elif low is not None:
        parts.append(f"at least {low}")
    elif high is not None:
        parts.append(f"at most {high}")
    if item.default is not None:
        defaults = item.default if isinstance(item.default, list) else [item.default]
        parts.append("default " + ", ".join(_label_of(item, d) for d in defaults))
    return ", ".join(parts)


def _numbers(item: Field) -> str:
    return f"1-{len(item.options)}" if len(item.options) > 1 else "1"


def _label_of(item: Field, value: object) -> str:
    for option in item.options:
        if option.value == str(value):
            return _line(option.label)
    return _line(value)


def _choice(item: Field, part: str) -> str:
    """One typed choice as its option's value: by value, label or number (a value or label
    wins over a number: an option may be called "2")."""
    for option in item.options:
        if part in (option.value, option.label):
            return option.value
    if part.isdigit() and 1 <= int(part) <= len(item.options):
        return item.options[int(part) - 1].value
    raise InvalidAnswer(
        [
            Problem(
                item.name,
                f"{_line(part)!r} is not one of the choices: type a number "
                f"({_numbers(item)}) or a value",
            )
        ]
    )


def read_value(item: Field, raw: str) -> Any:
    """What was typed for ``item``, as the value to send; :class:`InvalidAnswer` if it does
    not fit the field."""
    text = raw.strip()
    value: Any
    if item.kind is FieldKind.CHOICE:
        value = _choice(item, text)
    elif item.kind is FieldKind.CHOICES:
        value = [_choice(item, part.strip()) for part in text.split(",") if part.strip()]
    else:
        value = parse_text(item, text)
    validate([item], {item.name: value})
    return value


def ask_fields(term: Terminal, fields: tuple[Field, ...]) -> dict[str, Any]:
    """Ask every field on ``term``; the reply to send (accept with the content, or decline or
    cancel as typed; cancel when the input ends)."""
    term.say("(type !decline or !cancel at any prompt)")
    content: dict[str, Any] = {}
    for item in fields:
        for line in field_lines(item):
            term.say(line)
        hint = prompt_hint(item)
        prompt = f"  [{hint}] > " if hint else "  > "
        while True:
            term.write(prompt)
            raw = term.stdin.readline()
            if not raw:
                return cancel_reply()
            raw = raw.strip()
            if raw == "!decline":
                return decline()
            if raw == "!cancel":
                return cancel_reply()
            if raw == "":
                if item.default is not None:
                    content[item.name] = item.default
                elif item.required:
                    term.say(f"  {_line(item.title)} is required.")
                    continue
                break
            try:
                content[item.name] = read_value(item, raw)
            except InvalidAnswer as exc:
                term.say(f"  {exc}")
                continue
            break
    return accept(content)
