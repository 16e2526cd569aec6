"""``mooring tools show SERVER TOOL``: what a tool takes and how to call it.

The tool comes from the host's tool index (``HostApi.server_tools``, what ``tools list`` and the
window's palette read). Its input schema is shown as fields — name, type, required or not,
bounds, default, description and choices (with the titles ``oneOf``/``anyOf`` options or a
legacy enum's ``enumNames`` give them), nested objects' fields under dotted names — then its
annotations (and whether Mooring relies on them: only a trusted server's count), then a
``mooring call`` line with the required fields filled with placeholders.

A schema is a server's: every string in it is hostile, and any shape may come. Nothing in it
is trusted to be well formed (a part that is not what JSON Schema says is skipped), and every
string is made inert before it is shown (one line for names, types and choices, so a line
break cannot forge a field).
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import shlex
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.core.servers import ServerDefinition
from mooring.core.text import neutralize
from mooring.core.tools import ToolInfo

MAX_DEPTH = 4
"""How deep nested objects (and ``$ref`` chains) are followed; deeper ones are shown as one
field of type ``object``."""
NAME_WIDTH = 24
"""Names are padded to the longest, up to this."""
DEFAULT_LIMIT = 80
"""A default longer than this (as JSON) is cut."""
WIDTH = 100
"""Descriptions' lines longer than this are wrapped (shorter ones are kept as the server
broke them)."""

_HINTS = (
    ("read-only", "readOnlyHint", "read_only", False),
    ("destructive", "destructiveHint", "destructive", True),
    ("idempotent", "idempotentHint", "idempotent", False),
    ("open world", "openWorldHint", "open_world", True),
)
"""Each annotation: the words shown, its MCP name, its ``ToolAnnotations`` field, and what MCP
says it is when a server does not say."""


def _line(text: object) -> str:
    return neutralize(str(text), multiline=False)


def _json(value: Any, limit: int = DEFAULT_LIMIT) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _paragraphs(text: str, indent: str) -> list[str]:
    """``text`` made inert, each line indented, and wrapped when longer than :data:`WIDTH`."""
    lines: list[str] = []
    for part in neutralize(text).strip().splitlines():
        wrapped = textwrap.wrap(part, WIDTH - len(indent), break_on_hyphens=False)
        lines += [f"{indent}{piece}" for piece in wrapped] or [""]
    return lines


def _map(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        found: Mapping[str, Any] = value
        return found
    return {}


# -- the schema ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SchemaField:
    """One argument of a tool, as shown."""

    name: str
    """Its path: ``a``, ``a.b`` for a nested object's field, ``a[].b`` for a list's items'."""
    type: str
    required: bool
    description: str = ""
    details: tuple[str, ...] = ()
    """Bounds, lengths, formats, patterns and the default, in words."""
    choices: tuple[tuple[str, str | None], ...] = ()
    """Each allowed value (as JSON, or the string itself) with its title, if it has one."""


class _Schema:
    """Reads one tool's input schema (resolving local ``$ref``s against it)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root

    def resolve(self, raw: Any, depth: int = 0) -> Mapping[str, Any]:
        """``raw`` as a mapping, its local ``$ref`` followed (its own keys win)."""
        spec = _map(raw)
        ref = spec.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#") or depth >= MAX_DEPTH:
            return spec
        node: Any = self.root
        for part in ref[1:].strip("/").split("/") if ref != "#" else []:
            node = _map(node).get(part.replace("~1", "/").replace("~0", "~"))
        if not isinstance(node, Mapping):
            return spec
        return {**self.resolve(node, depth + 1), **{k: v for k, v in spec.items() if k != "$ref"}}

    def alternatives(self, spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """The ``anyOf``/``oneOf`` branches that are schemas of their own (not titled constants)."""
        found: list[Mapping[str, Any]] = []
        for key in ("anyOf", "oneOf"):
            items = spec.get(key)
            if isinstance(items, list):
                found += [self.resolve(i) for i in items if isinstance(i, Mapping)]
        return [alt for alt in found if "const" not in alt]

    def choices(self, spec: Mapping[str, Any]) -> tuple[tuple[str, str | None], ...]:
        """The values ``spec`` allows, with their titles (from ``enum`` with ``enumNames``,
        titled ``const`` options, or a branch of ``anyOf``/``oneOf`` that has them)."""
        values = spec.get("enum")
        if isinstance(values, list) and values:
            names = spec.get("enumNames")
            titles = names if isinstance(names, list) and len(names) == len(values) else []
            return tuple(
                (_shown(v), _title(titles[i]) if titles else None) for i, v in enumerate(values)
            )
        for key in ("oneOf", "anyOf"):
            items = spec.get(key)
            if isinstance(items, list):
                options = [self.resolve(i) for i in items if isinstance(i, Mapping)]
                consts = tuple(
                    (_shown(o["const"]), _title(o.get("title"))) for o in options if "const" in o
                )
                if consts:
                    return consts
                for alternative in options:
                    found = self.choices(alternative)
                    if found:
                        return found
        return ()

    def type_words(self, spec: Mapping[str, Any], depth: int = 0) -> str:
        """``spec``'s type in words: ``string``, ``string or null``, ``array of integer``…"""
        kind = spec.get("type")
        if isinstance(kind, list):
            words = [self._one_type(k, spec, depth) for k in kind if isinstance(k, str)]
            return " or ".join(dict.fromkeys(words)) or "any"
        if isinstance(kind, str):
            return self._one_type(kind, spec, depth)
        if "const" in spec:
            return f"constant {_json(spec['const'])}"
        alternatives = self.alternatives(spec)
        if alternatives and depth < MAX_DEPTH:
            words = [self.type_words(alt, depth + 1) for alt in alternatives]
            return " or ".join(dict.fromkeys(words))
        values = spec.get("enum")
        options = spec.get("oneOf") or spec.get("anyOf")
        if isinstance(values, list) and values:
            return " or ".join(dict.fromkeys(_json_type(v) for v in values))
        if isinstance(options, list) and options:
            consts = [self.resolve(o).get("const") for o in options if isinstance(o, Mapping)]
            return " or ".join(dict.fromkeys(_json_type(c) for c in consts))
        if isinstance(spec.get("properties"), Mapping):
            return "object"
        return "any"

    def _one_type(self, kind: str, spec: Mapping[str, Any], depth: int) -> str:
        if kind == "array" and depth < MAX_DEPTH:
            items = spec.get("items")
            if isinstance(items, Mapping):
                return f"array of {self.type_words(self.resolve(items), depth + 1)}"
        return kind

    def details(self, spec: Mapping[str, Any]) -> tuple[str, ...]:
        """Bounds, lengths, format, pattern and default of ``spec`` (and of its one non-null
        ``anyOf`` branch: an optional number keeps its bounds there)."""
        parts: list[str] = []
        branches = [alt for alt in self.alternatives(spec) if alt.get("type") != "null"]
        for source in [spec, *branches[:1]] if len(branches) == 1 else [spec]:
            parts += _bounds(source)
        if "default" in spec:
            parts.append(f"default {_json(spec['default'])}")
        return tuple(dict.fromkeys(parts))

    def fields(
        self, spec: Mapping[str, Any], prefix: str = "", depth: int = 0
    ) -> list[SchemaField]:
        """The fields of an object schema, nested objects' fields after their own."""
        properties = _map(spec.get("properties"))
        required_list = spec.get("required")
        required: set[str] = set()
        if isinstance(required_list, list):
            required = {str(r) for r in required_list}
        found: list[SchemaField] = []
        for name, raw in properties.items():
            field_spec = self.resolve(raw)
            path = f"{prefix}{name}"
            found.append(
                SchemaField(
                    name=path,
                    type=self.type_words(field_spec),
                    required=str(name) in required,
                    description=str(field_spec.get("description") or ""),
                    details=self.details(field_spec),
                    choices=self.choices(_items_if_array(self, field_spec)),
                )
            )
            if depth + 1 < MAX_DEPTH:
                nested, suffix = self._nested(field_spec)
                if nested is not None:
                    found += self.fields(nested, f"{path}{suffix}.", depth + 1)
        return found

    def _nested(self, spec: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, str]:
        """The object schema whose fields are ``spec``'s own (or its items'), if any."""
        if isinstance(spec.get("properties"), Mapping):
            return spec, ""
        items = spec.get("items")
        if isinstance(items, Mapping):
            resolved = self.resolve(items)
            if isinstance(resolved.get("properties"), Mapping):
                return resolved, "[]"
        branches = [alt for alt in self.alternatives(spec) if alt.get("type") != "null"]
        if len(branches) == 1 and isinstance(branches[0].get("properties"), Mapping):
            return branches[0], ""
        return None, ""

    def example(self, spec: Mapping[str, Any], name: str, depth: int = 0) -> Any:
        """A value of ``spec`` to show in an example call: its default, first example or first
        choice, else a placeholder of its type."""
        spec = self.resolve(spec)
        for key in ("default", "const"):
            if key in spec:
                return spec[key]
        examples = spec.get("examples")
        if isinstance(examples, list) and examples:
            return examples[0]
        values = spec.get("enum")
        if isinstance(values, list) and values:
            return values[0]
        for key in ("oneOf", "anyOf"):
            options = spec.get(key)
            if isinstance(options, list):
                consts = [self.resolve(o) for o in options if isinstance(o, Mapping)]
                for option in consts:
                    if "const" in option:
                        return option["const"]
                for option in consts:
                    if option.get("type") != "null" and depth < MAX_DEPTH:
                        return self.example(option, name, depth + 1)
        kind = spec.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), None)
        match kind:
            case "integer" | "number":
                low = spec.get("minimum")
                return low if isinstance(low, int | float) and not isinstance(low, bool) else 0
            case "boolean":
                return True
            case "null":
                return None
            case "array":
                items = spec.get("items")
                count = spec.get("minItems")
                if isinstance(items, Mapping) and isinstance(count, int) and count > 0:
                    return [self.example(items, name, depth + 1)] if depth < MAX_DEPTH else []
                return []
            case "object":
                return self.required_example(spec, depth + 1) if depth < MAX_DEPTH else {}
        if kind == "string" or "format" in spec:
            return _FORMAT_EXAMPLES.get(str(spec.get("format")), f"<{name}>")
        return f"<{name}>"

    def required_example(self, spec: Mapping[str, Any], depth: int = 0) -> dict[str, Any]:
        """The required fields of an object schema, each with an example value."""
        properties = _map(spec.get("properties"))
        required = spec.get("required")
        names = [str(r) for r in required if r in properties] if isinstance(required, list) else []
        return {name: self.example(properties[name], name, depth) for name in names}


_FORMAT_EXAMPLES = {
    "email": "name@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "date": "2025-01-31",
    "date-time": "2025-01-31T12:00:00Z",
    "time": "12:00:00",
}


def _items_if_array(schema: _Schema, spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """Where a field's choices are: its items' schema for a list, else its own."""
    if spec.get("type") == "array" and isinstance(spec.get("items"), Mapping):
        return schema.resolve(spec["items"])
    return spec


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def _title(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int | float) and str(value) else None


def _json_type(value: Any) -> str:
    match value:
        case bool():
            return "boolean"
        case int():
            return "integer"
        case float():
            return "number"
        case str():
            return "string"
        case None:
            return "null"
        case list():
            return "array"
    return "object"


def _number(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return str(int(value)) if float(value).is_integer() else str(value)


def _count_range(spec: Mapping[str, Any], low_key: str, high_key: str, unit: str) -> str | None:
    low, high = _number(spec.get(low_key)), _number(spec.get(high_key))

    def units(count: str) -> str:
        return unit.removesuffix("s") if count == "1" else unit

    if low is not None and high is not None:
        return f"{low} to {high} {unit}" if low != high else f"exactly {low} {units(low)}"
    if low is not None:
        return f"at least {low} {units(low)}"
    if high is not None:
        return f"at most {high} {units(high)}"
    return None


def _bounds(spec: Mapping[str, Any]) -> list[str]:
    parts: list[str] = []
    low, high = _number(spec.get("minimum")), _number(spec.get("maximum"))
    if low is not None and high is not None:
        parts.append(f"{low}..{high}")
    elif low is not None:
        parts.append(f">= {low}")
    elif high is not None:
        parts.append(f"<= {high}")
    above, below = _number(spec.get("exclusiveMinimum")), _number(spec.get("exclusiveMaximum"))
    if above is not None:
        parts.append(f"> {above}")
    if below is not None:
        parts.append(f"< {below}")
    step = _number(spec.get("multipleOf"))
    if step is not None:
        parts.append(f"a multiple of {step}")
    for low_key, high_key, unit in (
        ("minLength", "maxLength", "characters"),
        ("minItems", "maxItems", "items"),
        ("minProperties", "maxProperties", "keys"),
    ):
        found = _count_range(spec, low_key, high_key, unit)
        if found:
            parts.append(found)
    if spec.get("uniqueItems") is True:
        parts.append("no repeats")
    if isinstance(spec.get("format"), str):
        parts.append(f"format {spec['format']}")
    if isinstance(spec.get("pattern"), str):
        parts.append(f"matching {spec['pattern']}")
    return parts


# -- the tool ------------------------------------------------------------------------------------


def example_call(server: ServerDefinition, tool: ToolInfo) -> str:
    """A ``mooring call`` line for ``tool`` with its required fields (placeholders for what has
    no default, example or choice), quoted for a POSIX shell."""
    schema = _Schema(_map(tool.input_schema))
    arguments = schema.required_example(schema.root)
    line = f"mooring call {shlex.quote(server.alias)} {shlex.quote(tool.name)}"
    if arguments:
        line += " --args " + shlex.quote(json.dumps(arguments, ensure_ascii=False))
    return line


def blocked(server: ServerDefinition, tool: str) -> str | None:
    """Why the server's own settings refuse to run ``tool`` (``None``: they do not)."""
    if any(fnmatch.fnmatchcase(tool, p) for p in server.hidden_tools):
        return "it is hidden (the server's --hide-tool list): mooring call refuses it"
    if server.allowed_tools is not None and not any(
        fnmatch.fnmatchcase(tool, p) for p in server.allowed_tools
    ):
        return "it is not in the server's --allow-tool list: mooring call refuses it"
    return None


def tool_json(server: ServerDefinition, tool: ToolInfo) -> dict[str, Any]:
    """The tool as ``tools show --json`` prints it: every string exactly as the server sent."""
    hints = tool.annotations
    schema = _Schema(_map(tool.input_schema))
    return {
        "server": server.alias,
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "required": list(schema.required_example(schema.root)),
        "annotations": {mcp: getattr(hints, attr) for _, mcp, attr, _ in _HINTS},
        "trusted": server.trusted,
        "blocked": blocked(server, tool.name),
        "example": example_call(server, tool),
    }


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


def tool_lines(server: ServerDefinition, tool: ToolInfo) -> list[str]:
    """The tool for people, line by line (every server string inert)."""
    lines = [f"{_line(server.alias)}/{_line(tool.name)}"]
    if tool.title:
        lines.append(f"  {_line(tool.title)}")
    if tool.description.strip():
        lines.append("")
        lines += _paragraphs(tool.description, "  ")
    why = blocked(server, tool.name)
    if why:
        lines += ["", f"Note: {why}."]

    schema = _Schema(_map(tool.input_schema))
    fields = schema.fields(schema.root)
    lines.append("")
    if not fields:
        lines.append("Arguments: no arguments.")
    else:
        lines.append("Arguments:")
        width = min(NAME_WIDTH, max(len(_line(f.name)) for f in fields))
        for item in fields:
            lines += _field_lines(item, width)

    lines.append("")
    alias = _line(server.alias)
    if server.trusted:
        lines.append(f"Annotations ({alias} is trusted, so Mooring relies on them):")
    else:
        lines.append(f"Annotations ({alias} is not trusted: claims only, approvals ignore them):")
    for words, mcp, attr, default in _HINTS:
        said = getattr(tool.annotations, attr)
        if said is None:
            shown = f"not said (MCP's default: {_yes_no(default)})"
        else:
            shown = f"{_yes_no(said):<4} ({mcp}: {json.dumps(said)})"
        lines.append(f"  {words:<12} {shown}")

    lines += ["", "Call it with:", f"  {_line(example_call(server, tool))}"]
    return lines


def _field_lines(item: SchemaField, width: int) -> list[str]:
    name = _line(item.name)
    words = [_line(item.type), "required" if item.required else "optional"]
    words += [_line(d) for d in item.details]
    lines = [f"  {name:<{width}}  {', '.join(words)}"]
    indent = " " * (width + 4)
    lines += _paragraphs(item.description, indent)
    if item.choices:
        titled = any(title and title != value for value, title in item.choices)
        if titled:
            lines.append(f"{indent}choices:")
            for value, title in item.choices:
                label = f"  {_line(title)}" if title and title != value else ""
                lines.append(f"{indent}  {_line(value)}{label}")
        else:
            lines.append(f"{indent}choices: " + " | ".join(_line(v) for v, _ in item.choices))
    return lines


# -- the command ---------------------------------------------------------------------------------


async def show_tool(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Show one tool: its description, arguments, annotations and an example call."""
    server = await ctx.host.server(args.server)
    tool = await _find_tool(ctx, server, args.tool)
    if ctx.as_json:
        ctx.say(json.dumps(tool_json(server, tool), indent=2))
    else:
        for line in tool_lines(server, tool):
            ctx.say(line)
    return ExitCode.OK


async def _find_tool(ctx: CliContext, server: ServerDefinition, name: str) -> ToolInfo:
    """The server's tool called ``name`` (its list read again once if it is missing: the
    server may have added it since), or a clear error."""
    tools: list[ToolInfo] | None = None
    for refresh in (False, True):
        tools = await ctx.host.server_desk.tools(server, refresh=refresh)
        if tools is None:
            status = await ctx.host.server_desk.connection_status(server)
            raise KnownError(
                f"{server.alias} cannot be reached: {status.state.value}: {status.reason}",
                code="unreachable",
            )
        for tool in tools:
            if tool.name == name:
                return tool
    names = [t.name for t in tools or []]
    close = difflib.get_close_matches(name, names, n=3)
    hint = f"See its tools with: mooring tools list {shlex.quote(server.alias)}"
    if close:
        names_said = ", ".join(close[:-1]) + " or " + close[-1] if len(close) > 1 else close[0]
        hint = f"Did you mean {names_said}? {hint}"
    raise KnownError(f"{server.alias} has no tool called {name!r}.", hint=hint, code="not_found")
