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

Header values are returned apart from the definitions (``header_secrets``): they are usually
credentials, and secrets belong in the keyring, not in the server table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mooring.core.servers import ServerDefinition, Transport

_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamablehttp", "streamable_http"})
_SSE_TYPES = frozenset({"sse"})


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import produced: new definitions, and what was skipped and why."""

    servers: list[ServerDefinition] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """``(name, reason)`` for every entry that was not imported."""
    header_secrets: dict[str, dict[str, str]] = field(default_factory=dict)
    """Imported HTTP header values by new server id, for the caller to put in the keyring."""
    format: str = "unknown"
    """``"mcpServers"`` (Claude Desktop, Cursor), ``"vscode"``, or ``"unknown"``."""


class _Skip(Exception):  # control flow inside this module only
    pass


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
        return ImportResult(
            skipped=[("(file)", "no 'mcpServers' or 'servers' object found")], format=kind
        )
    aliases = {server.alias.casefold(): server.alias for server in existing}
    identities = {server.identity: server.alias for server in existing}
    result = ImportResult(format=kind)
    for name, entry in entries.items():
        try:
            server, headers = _definition(str(name), entry, now=now, new_id=new_id)
            if server.alias.casefold() in aliases:
                raise _Skip(f"a server named {aliases[server.alias.casefold()]!r} already exists")
            if server.identity in identities:
                raise _Skip(
                    f"duplicate of server {identities[server.identity]!r} "
                    f"(same {'command' if server.transport is Transport.STDIO else 'URL'})"
                )
        except _Skip as skip:
            result.skipped.append((str(name), str(skip)))
            continue
        aliases[server.alias.casefold()] = server.alias
        identities[server.identity] = server.alias
        result.servers.append(server)
        if headers:
            result.header_secrets[server.id] = headers
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
) -> tuple[ServerDefinition, dict[str, str]]:
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
        return server, headers
    if not isinstance(command, str) or not command.strip():
        raise _Skip("no command or url")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _Skip("'args' must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _Skip("'cwd' must be a string")
    server = ServerDefinition(
        id=new_id(),
        alias=name.strip(),
        transport=Transport.STDIO,
        created_at=now(),
        command=command.strip(),
        args=tuple(args),
        env=_strings(entry.get("env"), "env"),
        cwd=cwd or None,
        enabled=enabled,
    )
    return server, {}


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
