"""Import MCP server definitions from other hosts' configuration files (pure: no I/O).

Understood shapes (the caller parses the JSON):

* Claude Desktop and Cursor: ``{"mcpServers": {name: entry}}``;
* VS Code: ``{"servers": {name: entry}}``, also nested as ``{"mcp": {"servers": ...}}``;

where an entry is ``{command, args?, env?, cwd?}`` (stdio), ``{url, headers?}`` or
``{type: "http" | "streamable-http", url, headers?}`` (Streamable HTTP), or
``{type: "stdio", command, ...}``. Everything that cannot be imported faithfully is skipped
with a reason, never guessed at: the legacy HTTP+SSE transport, ``${input:...}`` and other
``${...}`` variables (Mooring does not expand them), entries without a command or URL, and
duplicates of servers already configured.

Header and environment values are returned apart from the definitions (``header_secrets``,
``env_secrets``): they are usually credentials (API keys, tokens), and secrets belong in the
keyring, not in the server table; the definitions keep only their names.

:func:`known_config_files` says where Claude Desktop, VS Code and Cursor keep their server
lists on each system, and :func:`preview` turns one such file into what an import would do
with each of its entries (new, already present, cannot be imported — with the reason).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import PurePath
from typing import Any

from mooring.core.servers import ServerDefinition, Transport

_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamablehttp", "streamable_http"})
_SSE_TYPES = frozenset({"sse"})


class EntryStatus(StrEnum):
    """What an import would do with one entry of a configuration file."""

    NEW = "new"
    PRESENT = "already present"
    """The same name, command line or URL is configured already."""
    INVALID = "cannot be imported"


@dataclass(frozen=True, slots=True)
class ImportEntry:
    """One entry of a configuration file and what importing it would do."""

    name: str
    status: EntryStatus
    reason: str = ""
    """Why it is not new (empty for a new entry)."""
    server: ServerDefinition | None = None
    """The definition to add (new entries only; secret values are not in it)."""
    header_values: Mapping[str, str] = field(default_factory=dict, repr=False)
    env_values: Mapping[str, str] = field(default_factory=dict, repr=False)
    """The secret values, for the keyring only (never shown, never in the server table)."""


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import produced: new definitions, and what was skipped and why."""

    servers: list[ServerDefinition] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """``(name, reason)`` for every entry that was not imported."""
    header_secrets: dict[str, dict[str, str]] = field(default_factory=dict)
    """Imported HTTP header values by new server id, for the caller to put in the keyring."""
    env_secrets: dict[str, dict[str, str]] = field(default_factory=dict)
    """Imported environment values by new server id, for the caller to put in the keyring."""
    format: str = "unknown"
    """``"mcpServers"`` (Claude Desktop, Cursor), ``"vscode"``, or ``"unknown"``."""
    entries: list[ImportEntry] = field(default_factory=list)
    """Every entry in the document's order, with its status."""


class _Skip(Exception):  # control flow inside this module only
    def __init__(self, reason: str, *, present: bool = False) -> None:
        super().__init__(reason)
        self.present = present


def import_servers(
    document: Any,
    *,
    now: Callable[[], datetime],
    new_id: Callable[[], str],
    existing: Iterable[ServerDefinition] = (),
) -> ImportResult:
    """Read server definitions out of a parsed configuration document.

    ``existing`` are the servers already configured: an entry with the same alias, or the same
    command line or URL, is skipped as a duplicate (as is a repeat within the document).
    """
    entries, kind = _entries(document)
    if entries is None:
        reason = "no 'mcpServers' or 'servers' object found"
        return ImportResult(
            skipped=[("(file)", reason)],
            format=kind,
            entries=[ImportEntry("(file)", EntryStatus.INVALID, reason)],
        )
    configured = list(existing)
    aliases = {server.alias.casefold(): server.alias for server in configured}
    identities = {server.identity: server.alias for server in configured}
    present_aliases = set(aliases.values())
    result = ImportResult(format=kind)
    for name, entry in entries.items():
        try:
            server, headers, env = _definition(str(name), entry, now=now, new_id=new_id)
            if server.alias.casefold() in aliases:
                same = aliases[server.alias.casefold()]
                raise _Skip(
                    f"a server named {same!r} already exists", present=same in present_aliases
                )
            if server.identity in identities:
                same = identities[server.identity]
                raise _Skip(
                    f"duplicate of server {same!r} "
                    f"(same {'command' if server.transport is Transport.STDIO else 'URL'})",
                    present=same in present_aliases,
                )
        except _Skip as skip:
            result.skipped.append((str(name), str(skip)))
            status = EntryStatus.PRESENT if skip.present else EntryStatus.INVALID
            result.entries.append(ImportEntry(str(name), status, str(skip)))
            continue
        aliases[server.alias.casefold()] = server.alias
        identities[server.identity] = server.alias
        result.servers.append(server)
        if headers:
            result.header_secrets[server.id] = headers
        if env:
            result.env_secrets[server.id] = env
        result.entries.append(
            ImportEntry(
                server.alias,
                EntryStatus.NEW,
                server=server,
                header_values=headers,
                env_values=env,
            )
        )
    return result


def _entries(document: Any) -> tuple[Mapping[str, Any] | None, str]:
    if not isinstance(document, Mapping):
        return None, "unknown"
    if isinstance(document.get("mcpServers"), Mapping):
        return document["mcpServers"], "mcpServers"
    if isinstance(document.get("servers"), Mapping):
        return document["servers"], "vscode"
    nested = document.get("mcp")
    if isinstance(nested, Mapping) and isinstance(nested.get("servers"), Mapping):
        return nested["servers"], "vscode"
    return None, "unknown"


def _definition(
    name: str, entry: Any, *, now: Callable[[], datetime], new_id: Callable[[], str]
) -> tuple[ServerDefinition, dict[str, str], dict[str, str]]:
    if not name.strip():
        raise _Skip("the server has no name")
    if not isinstance(entry, Mapping):
        raise _Skip("the entry is not an object")
    _refuse_variables(entry)
    kind = entry.get("type", entry.get("transport"))
    kind = kind.strip().lower() if isinstance(kind, str) else None
    enabled = not bool(entry.get("disabled", False))
    if kind in _SSE_TYPES:
        raise _Skip("legacy HTTP+SSE transport is not supported")
    if kind is not None and kind != "stdio" and kind not in _HTTP_TYPES:
        raise _Skip(f"unknown transport type {kind!r}")
    url = entry.get("url", entry.get("serverUrl"))
    command = entry.get("command")
    if kind in _HTTP_TYPES or (kind is None and url is not None and command is None):
        if not isinstance(url, str) or not url.strip():
            raise _Skip("no url")
        if not url.strip().lower().startswith(("http://", "https://")):
            raise _Skip(f"the url is not http(s): {url!r}")
        headers = _strings(entry.get("headers"), "headers")
        server = ServerDefinition(
            id=new_id(),
            alias=name.strip(),
            transport=Transport.HTTP,
            created_at=now(),
            url=url.strip(),
            # The names are kept (they say what to send); the values go to the keyring.
            headers=dict.fromkeys(headers, ""),
            enabled=enabled,
        )
        return server, headers, {}
    if not isinstance(command, str) or not command.strip():
        raise _Skip("no command or url")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _Skip("'args' must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _Skip("'cwd' must be a string")
    env = _strings(entry.get("env"), "env")
    server = ServerDefinition(
        id=new_id(),
        alias=name.strip(),
        transport=Transport.STDIO,
        created_at=now(),
        command=command.strip(),
        args=tuple(args),
        # As for headers: the names are kept, the values (API keys, tokens) go to the keyring.
        env=dict.fromkeys(env, ""),
        cwd=cwd or None,
        enabled=enabled,
    )
    return server, {}, env


def _strings(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _Skip(f"'{what}' must be an object")
    out: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise _Skip(f"'{what}.{key}' must be a string")
        out[str(key)] = str(item)
    return out


def _refuse_variables(entry: Mapping[str, Any]) -> None:
    for text in _texts(entry):
        for match in _VARIABLE.finditer(text):
            variable = match.group(0)
            if match.group(1).startswith("input:"):
                raise _Skip(
                    f"uses the input variable {variable}, which only VS Code can prompt for"
                )
            raise _Skip(f"uses the variable {variable}, which Mooring does not expand")


def _texts(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


# -- where other hosts keep their configuration ----------------------------------------------


@dataclass(frozen=True, slots=True)
class ConfigSource:
    """One configuration file of another MCP host."""

    app: str
    """``"Claude Desktop"``, ``"VS Code"`` or ``"Cursor"``."""
    path: str


def known_config_files(system: str, home: PurePath, env: Mapping[str, str]) -> list[ConfigSource]:
    """Where Claude Desktop, VS Code and Cursor keep their user-level server lists on
    ``system`` (``sys.platform``: ``"linux"``, ``"darwin"``, ``"win32"``), whether or not the
    files exist. ``env`` supplies ``APPDATA`` and ``XDG_CONFIG_HOME``."""
    if system == "darwin":
        support = home / "Library" / "Application Support"
        claude, code = support / "Claude", support / "Code" / "User"
    elif system.startswith("win"):
        roaming = PurePath(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"
        claude, code = roaming / "Claude", roaming / "Code" / "User"
    else:
        xdg = env.get("XDG_CONFIG_HOME", "")
        config = PurePath(xdg) if xdg and PurePath(xdg).is_absolute() else home / ".config"
        claude, code = config / "Claude", config / "Code" / "User"
    return [
        ConfigSource("Claude Desktop", str(claude / "claude_desktop_config.json")),
        ConfigSource("VS Code", str(code / "mcp.json")),
        ConfigSource("VS Code", str(code / "settings.json")),
        ConfigSource("Cursor", str(home / ".cursor" / "mcp.json")),
    ]


@dataclass(frozen=True, slots=True)
class ConfigPreview:
    """What importing one configuration file would do, entry by entry."""

    source: ConfigSource
    entries: tuple[ImportEntry, ...] = ()
    problem: str | None = None
    """Why the file could not be read at all (then there are no entries)."""

    @property
    def new(self) -> tuple[ImportEntry, ...]:
        """The entries an import would add."""
        return tuple(e for e in self.entries if e.status is EntryStatus.NEW)


def preview(
    source: ConfigSource,
    text: str,
    *,
    now: Callable[[], datetime],
    new_id: Callable[[], str],
    existing: Iterable[ServerDefinition] = (),
) -> ConfigPreview:
    """What importing ``text`` (the file's content) would do. VS Code's files may carry
    comments and trailing commas (JSONC), which are understood."""
    try:
        document = parse_config_text(text)
    except ValueError as exc:
        return ConfigPreview(source, problem=f"not valid JSON: {exc}")
    result = import_servers(document, now=now, new_id=new_id, existing=existing)
    if not result.servers and result.entries and result.entries[0].name == "(file)":
        return ConfigPreview(source, problem=result.entries[0].reason)
    return ConfigPreview(source, tuple(result.entries))


def parse_config_text(text: str) -> Any:
    """Parse JSON, also with ``//`` and ``/* */`` comments and trailing commas (JSONC)."""
    try:
        return json.loads(text)
    except ValueError:
        return json.loads(_strip_jsonc(text))


def _strip_jsonc(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "}]":
            # A trailing comma before a closing bracket: drop it (whitespace may sit between).
            k = len(out) - 1
            while k >= 0 and out[k].isspace():
                k -= 1
            if k >= 0 and out[k] == ",":
                del out[k]
            out.append(c)
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """What an import did."""

    added: list[ServerDefinition] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """``(name, reason)`` of what was chosen or found but not added."""
