"""Importing server definitions from Claude Desktop, Cursor and VS Code configuration."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from mooring.core.server_import import (
    ConfigSource,
    EntryStatus,
    ImportResult,
    import_servers,
    known_config_files,
    preview,
)
from mooring.core.servers import ServerDefinition, Transport

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def run(document: Any, existing: list[ServerDefinition] | None = None) -> ImportResult:
    counter = itertools.count(1)
    return import_servers(
        document, now=lambda: NOW, new_id=lambda: f"id-{next(counter)}", existing=existing or []
    )


CLAUDE_DESKTOP = """
{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Documents"],
      "env": {"LOG_LEVEL": "debug", "RETRIES": 3}
    },
    "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer t0k"}},
    "legacy": {"type": "sse", "url": "https://old.example.com/sse"},
    "typed": {"type": "streamable-http", "url": "https://typed.example.com/mcp"},
    "broken": {"args": ["x"]}
  }
}
"""


def test_claude_desktop_servers_are_imported_and_the_rest_skipped_with_reasons() -> None:
    result = run(json.loads(CLAUDE_DESKTOP))

    by_alias = {server.alias: server for server in result.servers}
    assert result.format == "mcpServers"
    assert set(by_alias) == {"filesystem", "remote", "typed"}
    fs = by_alias["filesystem"]
    assert fs.transport is Transport.STDIO
    assert fs.command == "npx"
    assert fs.args == ("-y", "@modelcontextprotocol/server-filesystem", "/home/me/Documents")
    assert fs.env == {"LOG_LEVEL": "", "RETRIES": ""}  # names only: values may be API keys...
    assert result.env_secrets == {fs.id: {"LOG_LEVEL": "debug", "RETRIES": "3"}}  # ...kept here
    assert fs.created_at == NOW
    remote = by_alias["remote"]
    assert remote.transport is Transport.HTTP
    assert remote.url == "https://mcp.example.com/mcp"
    assert remote.headers == {"Authorization": ""}  # the name is kept, not the value...
    assert result.header_secrets == {remote.id: {"Authorization": "Bearer t0k"}}  # ...but here
    assert by_alias["typed"].transport is Transport.HTTP
    assert dict(result.skipped) == {
        "legacy": "legacy HTTP+SSE transport is not supported",
        "broken": "no command or url",
    }


def test_cursor_entries_with_cwd_and_disabled_flag_are_kept_as_given() -> None:
    document = {
        "mcpServers": {
            "local": {"command": "python", "args": ["server.py"], "cwd": "/srv/tools"},
            "off": {"command": "uvx", "args": ["thing"], "disabled": True},
        }
    }

    result = run(document)

    local, off = result.servers
    assert local.cwd == "/srv/tools"
    assert local.enabled
    assert not off.enabled
    assert result.skipped == []


@pytest.mark.parametrize("nested", [False, True])
def test_vscode_servers_are_read_also_when_nested_under_mcp(nested: bool) -> None:
    servers = {
        "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"], "env": {}},
        "api": {"type": "http", "url": "http://127.0.0.1:8000/mcp", "headers": {"X-Team": "a"}},
        "asks": {
            "type": "stdio",
            "command": "node",
            "args": ["server.js"],
            "env": {"API_KEY": "${input:api-key}"},
        },
        "home": {"type": "stdio", "command": "${userHome}/bin/server"},
    }
    document: dict[str, Any] = {"inputs": [{"id": "api-key", "type": "promptString"}]}
    document.update({"mcp": {"servers": servers}} if nested else {"servers": servers})

    result = run(document)

    assert result.format == "vscode"
    assert [s.alias for s in result.servers] == ["git", "api"]
    skipped = dict(result.skipped)
    assert "${input:api-key}" in skipped["asks"]
    assert "VS Code" in skipped["asks"]
    assert "${userHome}" in skipped["home"]


def test_duplicates_of_configured_servers_and_within_the_file_are_skipped() -> None:
    configured = ServerDefinition(
        id="old",
        alias="Git",
        transport=Transport.STDIO,
        created_at=NOW,
        command="uvx",
        args=("mcp-server-git",),
    )
    document = {
        "mcpServers": {
            "git": {"command": "other"},
            "git-again": {"command": "uvx", "args": ["mcp-server-git"]},
            "web": {"url": "https://a.example/mcp"},
            "web-2": {"url": "https://a.example/mcp"},
        }
    }

    result = run(document, existing=[configured])

    assert [s.alias for s in result.servers] == ["web"]
    skipped = dict(result.skipped)
    assert skipped["git"] == "a server named 'Git' already exists"
    assert skipped["git-again"] == "duplicate of server 'Git' (same command)"
    assert skipped["web-2"] == "duplicate of server 'web' (same URL)"


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"command": "x", "args": "not-a-list"}, "'args' must be a list of strings"),
        ({"command": "x", "env": {"A": ["list"]}}, "'env.A' must be a string"),
        ({"type": "http"}, "no url"),
        ({"url": "ftp://files.example"}, "the url is not http(s): 'ftp://files.example'"),
        ({"type": "websocket", "url": "ws://x"}, "unknown transport type 'websocket'"),
        ("just a string", "the entry is not an object"),
    ],
)
def test_bad_entries_are_skipped_with_a_reason(entry: Any, reason: str) -> None:
    result = run({"mcpServers": {"bad": entry}})

    assert result.servers == []
    assert result.skipped == [("bad", reason)]


def test_a_document_without_servers_says_so() -> None:
    result = run({"theme": "dark"})

    assert result.servers == []
    assert result.skipped == [("(file)", "no 'mcpServers' or 'servers' object found")]


@pytest.mark.parametrize(
    ("system", "env", "claude", "code"),
    [
        (
            "linux",
            {},
            "/home/me/.config/Claude/claude_desktop_config.json",
            "/home/me/.config/Code/User",
        ),
        (
            "linux",
            {"XDG_CONFIG_HOME": "/xdg"},
            "/xdg/Claude/claude_desktop_config.json",
            "/xdg/Code/User",
        ),
        (
            "darwin",
            {},
            "/home/me/Library/Application Support/Claude/claude_desktop_config.json",
            "/home/me/Library/Application Support/Code/User",
        ),
        (
            "win32",
            {"APPDATA": "/roaming"},
            "/roaming/Claude/claude_desktop_config.json",
            "/roaming/Code/User",
        ),
    ],
)
def test_other_hosts_config_files_are_looked_for_where_each_system_keeps_them(
    system: str, env: dict[str, str], claude: str, code: str
) -> None:
    found = known_config_files(system, PurePosixPath("/home/me"), env)
    assert [(s.app, Path(s.path).as_posix()) for s in found] == [
        ("Claude Desktop", claude),
        ("VS Code", f"{code}/mcp.json"),
        ("VS Code", f"{code}/settings.json"),
        ("Cursor", "/home/me/.cursor/mcp.json"),
    ]


def test_a_preview_says_for_each_entry_what_an_import_would_do() -> None:
    counter = itertools.count(1)
    existing = run({"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}})
    text = """{
      // VS Code keeps comments and trailing commas in its settings
      "mcp": {"servers": {
        "git": {"command": "other"},
        "web": {"url": "https://example.com/mcp", "headers": {"K": "s3cret-v4lue"}},
        "asks": {"command": "x", "env": {"KEY": "${input:key}"}},
      }},
    }"""
    shown = preview(
        ConfigSource("VS Code", "/settings.json"),
        text,
        now=lambda: NOW,
        new_id=lambda: f"p-{next(counter)}",
        existing=existing.servers,
    )
    assert shown.problem is None
    assert [(e.name, e.status) for e in shown.entries] == [
        ("git", EntryStatus.PRESENT),
        ("web", EntryStatus.NEW),
        ("asks", EntryStatus.INVALID),
    ]
    assert shown.new[0].header_values == {"K": "s3cret-v4lue"}
    assert "s3cret" not in repr(shown.new[0])  # secret values never end up in a repr (or a log)
    broken = preview(ConfigSource("Cursor", "/c.json"), "{", now=lambda: NOW, new_id=str)
    assert broken.problem is not None
    assert broken.problem.startswith("not valid JSON")
