"""How ``mooring tools show`` words schemas no bundled server has: nested objects, ``$ref``s,
titled ``oneOf`` choices, legacy ``enumNames``, and schemas that are not what they claim.

(The command itself runs against real servers in ``tests/e2e/test_tool_show.py``.)
"""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime
from typing import Any

from mooring.cli.tool_show import example_call, tool_json, tool_lines
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tools import ToolAnnotations, ToolInfo

SERVER = ServerDefinition(
    id="s1",
    alias="crm",
    transport=Transport.STDIO,
    created_at=datetime(2025, 1, 1, tzinfo=UTC),
    command="crm-server",
    hidden_tools=("wipe*",),
)

# What pydantic writes for a model with a nested model, an optional literal and a list.
NESTED: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "Address": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
            },
            "required": ["city"],
        },
    },
    "properties": {
        "customer": {"type": "string", "minLength": 1, "maxLength": 40},
        "address": {"$ref": "#/$defs/Address", "description": "Where to ship"},
        "tier": {
            "description": "Service tier",
            "oneOf": [
                {"const": "t1", "title": "Bronze"},
                {"const": "t2", "title": "Silver"},
            ],
        },
        "pet": {
            "type": "string",
            "enum": ["p1", "p2"],
            "enumNames": ["Cats", "Dogs"],
        },
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["new", "vip"]},
            "minItems": 1,
            "uniqueItems": True,
        },
        "when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
        "loop": {"$ref": "#/properties/loop"},
    },
    "required": ["customer", "address", "tier", "when"],
}


def tool(schema: Any, name: str = "create_order", **kwargs: Any) -> ToolInfo:
    return ToolInfo(server_id="s1", name=name, input_schema=schema, **kwargs)


def text_of(info: ToolInfo) -> str:
    return "\n".join(tool_lines(SERVER, info))


def test_nested_objects_refs_and_titled_choices_are_worded() -> None:
    out = text_of(tool(NESTED, annotations=ToolAnnotations(read_only=False, destructive=True)))
    assert "  customer      string, required, 1 to 40 characters" in out
    assert "  address       object, required" in out
    assert "Where to ship" in out
    assert "  address.city  string, required" in out
    assert "  address.zip   string, optional, matching ^[0-9]{5}$" in out
    assert "  tier          string, required" in out
    assert "choices:\n                  t1  Bronze\n                  t2  Silver" in out
    assert "p1  Cats" in out
    assert "p2  Dogs" in out
    assert "  tags          array of string, optional, at least 1 item, no repeats" in out
    assert "choices: new | vip" in out
    assert "  when          string or null, required, format date" in out
    assert "loop" in out  # a $ref to itself is followed a few times, then left
    assert "destructive  yes  (destructiveHint: true)" in out
    assert "idempotent   not said (MCP's default: no)" in out

    words = shlex.split(example_call(SERVER, tool(NESTED)))
    assert words[:5] == ["mooring", "call", "crm", "create_order", "--args"]
    assert json.loads(words[5]) == {
        "customer": "<customer>",
        "address": {"city": "<city>"},
        "tier": "t1",
        "when": "2025-01-31",
    }


def test_a_hidden_tool_says_the_call_would_be_refused() -> None:
    out = text_of(tool({"type": "object"}, name="wipe_all"))
    assert "Note: it is hidden (the server's --hide-tool list): mooring call refuses it." in out
    assert tool_json(SERVER, tool({}, name="wipe_all"))["blocked"] is not None


def test_a_schema_that_is_not_one_is_shown_without_failing() -> None:
    for schema in (
        {},
        {"type": "object", "properties": ["not", "a", "mapping"]},
        {"type": "object", "properties": {"a": "not a schema", "b": {"type": 7}}},
        {"type": "object", "properties": {"c": {"$ref": "#/nowhere"}}, "required": "c"},
    ):
        out = text_of(tool(schema))
        assert "Call it with:" in out
    out = text_of(tool({"type": "object", "properties": {"a": "x", "b": {"type": 7}}}))
    assert "  a  any, optional" in out
    assert "  b  any, optional" in out


def test_field_names_titles_and_choices_cannot_forge_lines() -> None:
    hostile = {
        "type": "object",
        "properties": {
            "x\nArguments:": {
                "type": "string\x1b[2J",
                "description": "ok\x1b]0;pwned\x07",
                "oneOf": [{"const": "a\nb", "title": "\u202eevil"}],
            }
        },
    }
    out = text_of(tool(hostile, title="T\r\nfake", description="D\x1b[31m"))
    assert not any(char in out for char in "\x1b\r\u202e")
    assert "  T\\x0d\\x0afake" in out
    assert "x\\x0aArguments:" in out
    assert "a\\x0ab  <U+202E>evil" in out
