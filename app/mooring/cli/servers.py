"""``mooring servers …`` and ``mooring tools list``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.core.server_import import EntryStatus
from mooring.core.server_target import check_target
from mooring.core.servers import ServerDefinition
from mooring.core.views import ServerSpec


def _pairs(values: list[str] | None, what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise KnownError(f"{what} {item!r} should look like NAME=VALUE.", code="usage")
        pairs[key] = value
    return pairs


def server_json(server: ServerDefinition) -> dict[str, Any]:
    """A server as shown to scripts (header values are secrets: names only)."""
    return {
        "id": server.id,
        "name": server.alias,
        "transport": server.transport.value,
        "command": server.command,
        "args": list(server.args),
        # Secret values are stored empty (they are in the keyring); plain ones as they are.
        "env": server.env,
        "env_from": server.env_refs,
        "cwd": server.cwd,
        "url": server.url,
        "headers": sorted(server.headers),
        "trusted": server.trusted,
        "builtin": server.builtin,
    }


async def add(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Add a stdio or Streamable HTTP server."""
    check_target(args.url, args.program, args.cwd)
    server = await ctx.host.server_desk.add(
        ServerSpec(
            alias=args.name,
            command=args.program,
            args=tuple(args.arg or ()),
            env=_pairs(args.env, "environment variable"),
            plain_env=_pairs(args.env_plain, "environment variable"),
            env_refs=_pairs(args.env_from, "environment variable"),
            cwd=args.cwd,
            url=args.url,
            # Header values are secrets (tokens): the host puts them in the keyring.
            headers=_pairs(args.header, "header"),
            trusted=args.trusted,
            allowed_tools=tuple(args.allow_tool) if args.allow_tool else None,
            hidden_tools=tuple(args.hide_tool or ()),
        )
    )
    if ctx.as_json:
        ctx.say(json.dumps(server_json(server)))
    else:
        ctx.say(f"Added {server.alias} ({server.transport.value}: {server.target}).")
    return ExitCode.OK


async def list_servers(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List configured servers."""
    servers = await ctx.host.list_servers()
    if ctx.as_json:
        ctx.say(json.dumps([server_json(s) for s in servers], indent=2))
        return ExitCode.OK
    if not servers:
        ctx.say("No servers. Add one with `mooring servers add NAME --command CMD`.")
    for s in servers:
        marks = " [trusted]" if s.trusted else ""
        marks += " [bundled]" if s.builtin else ""
        ctx.say(f"{s.alias:<20} {s.transport.value:<5} {s.target}{marks}")
    return ExitCode.OK


async def remove(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Remove a server (its past tasks keep their history)."""
    server = await ctx.host.server_desk.remove(args.name)
    ctx.say(f"Removed {server.alias}.")
    return ExitCode.OK


async def list_tools(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List the tools of one server, or of every server."""
    servers = await ctx.host.list_servers()
    if args.server:
        servers = [s for s in servers if s.alias == args.server]
        if not servers:
            raise KnownError(f"No server called {args.server!r}.", code="not_found")
    code = ExitCode.OK
    listing: list[dict[str, Any]] = []
    for server in servers:
        tools = await ctx.host.server_desk.tools(server)
        status = await ctx.host.server_desk.connection_status(server)
        if tools is None:
            code = ExitCode.PROBLEM
            ctx.warn(f"{server.alias}: {status.state.value}: {status.reason}")
            continue
        for tool in tools:
            hints = tool.annotations
            listing.append(
                {
                    "server": server.alias,
                    "name": tool.name,
                    "title": tool.title,
                    "description": tool.description,
                    "read_only": hints.read_only,
                    "destructive": hints.destructive,
                    "idempotent": hints.idempotent,
                    "open_world": hints.open_world,
                    "tasks": status.supports_tasks,
                }
            )
    if ctx.as_json:
        ctx.say(json.dumps(listing, indent=2))
    else:
        for item in listing:
            flags = [
                label
                for label, on in (
                    ("read-only", item["read_only"]),
                    ("destructive", item["destructive"]),
                    ("idempotent", item["idempotent"]),
                )
                if on
            ]
            extra = f" [{', '.join(flags)}]" if flags else ""
            first_line = (item["description"] or "").strip().splitlines()[:1]
            ctx.say(f"{item['server']}/{item['name']}{extra}  {''.join(first_line)}")
    return code


async def import_file(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Import servers from another host's configuration file, saying what was skipped; without
    a file, show what the Claude Desktop, VS Code and Cursor files found here would import."""
    if args.file is None:
        return await _show_found(ctx)
    found = await ctx.host.server_desk.preview_file(args.file)
    if found.problem is not None:
        if not found.entries and "JSON" in found.problem:
            raise KnownError(f"{args.file} is {found.problem}", code="bad_file")
        skipped = [("(file)", found.problem)]
        outcome_added: list[ServerDefinition] = []
    else:
        outcome = await ctx.host.server_desk.import_entries(found.new)
        outcome_added = outcome.added
        skipped = [(e.name, e.reason) for e in found.entries if e.status is not EntryStatus.NEW]
        skipped += outcome.skipped
    if ctx.as_json:
        ctx.say(
            json.dumps(
                {
                    "added": [server_json(s) for s in outcome_added],
                    "skipped": [{"name": n, "reason": r} for n, r in skipped],
                },
                indent=2,
            )
        )
    else:
        for s in outcome_added:
            ctx.say(f"added    {s.alias} ({s.transport.value}: {s.target})")
        for name, reason in skipped:
            ctx.say(f"skipped  {name}: {reason}")
    return ExitCode.OK


async def _show_found(ctx: CliContext) -> ExitCode:
    previews = await ctx.host.server_desk.find_configs()
    if ctx.as_json:
        ctx.say(
            json.dumps(
                [
                    {
                        "app": p.source.app,
                        "path": p.source.path,
                        "problem": p.problem,
                        "servers": [
                            {"name": e.name, "status": e.status.value, "reason": e.reason}
                            for e in p.entries
                        ],
                    }
                    for p in previews
                ],
                indent=2,
            )
        )
        return ExitCode.OK
    if not previews:
        ctx.say("No Claude Desktop, VS Code or Cursor configuration was found.")
        return ExitCode.OK
    for found in previews:
        ctx.say(f"{found.source.app}: {found.source.path}")
        if found.problem is not None:
            ctx.say(f"  {found.problem}")
        for entry in found.entries:
            reason = f" ({entry.reason})" if entry.reason else ""
            ctx.say(f"  {entry.status.value:<18} {entry.name}{reason}")
    ctx.say("Import one with: mooring servers import PATH")
    return ExitCode.OK
