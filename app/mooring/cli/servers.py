"""``mooring servers …`` and ``mooring tools list``."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.cli.server_checks import check_target
from mooring.core.errors import KnownError
from mooring.core.ids import new_id
from mooring.core.servers import ServerDefinition
from mooring.services.host import ServerSpec


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
        "env": server.env,
        "cwd": server.cwd,
        "url": server.url,
        "headers": sorted(server.headers),
        "trusted": server.trusted,
        "builtin": server.builtin,
    }


async def add(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Add a stdio or Streamable HTTP server."""
    check_target(args.url, args.program, args.cwd)
    server = await ctx.host.add_server(
        ServerSpec(
            alias=args.name,
            command=args.program,
            args=tuple(args.arg or ()),
            env=_pairs(args.env, "environment variable"),
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
    servers = await ctx.catalog.list_servers()
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
    server = await ctx.host.remove_server(args.name)
    ctx.say(f"Removed {server.alias}.")
    return ExitCode.OK


async def list_tools(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List the tools of one server, or of every server."""
    servers = await ctx.catalog.list_servers()
    if args.server:
        servers = [s for s in servers if s.alias == args.server]
        if not servers:
            raise KnownError(f"No server called {args.server!r}.", code="not_found")
    code = ExitCode.OK
    listing: list[dict[str, Any]] = []
    for server in servers:
        tools = await ctx.host.tools.tools(server)
        connection = await ctx.gateway.connect(server)
        if tools is None:
            code = ExitCode.PROBLEM
            ctx.warn(f"{server.alias}: {connection.status.state.value}: {connection.status.reason}")
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
                    "tasks": connection.status.supports_tasks,
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
    """Import servers from another host's configuration file, saying what was skipped."""
    from mooring.core.server_import import import_servers

    try:
        data = json.loads(await asyncio.to_thread(Path(args.file).read_text, encoding="utf-8"))
    except OSError as exc:
        raise KnownError(f"Cannot read {args.file}: {exc.strerror}.", code="not_found") from exc
    except ValueError as exc:
        raise KnownError(f"{args.file} is not valid JSON: {exc}", code="bad_file") from exc
    result = import_servers(
        data, now=ctx.clock.now, new_id=new_id, existing=await ctx.catalog.list_servers()
    )
    added: list[ServerDefinition] = []
    skipped = list(result.skipped)
    for server in result.servers:
        try:
            await ctx.host.add_server_definition(server, result.header_secrets.get(server.id, {}))
        except KnownError as exc:
            if exc.code != "no_keyring":
                raise
            skipped.append(
                (server.alias, "its headers are secrets and no usable keyring can keep them")
            )
            continue
        added.append(server)
    if ctx.as_json:
        ctx.say(
            json.dumps(
                {
                    "added": [server_json(s) for s in added],
                    "skipped": [{"name": n, "reason": r} for n, r in skipped],
                },
                indent=2,
            )
        )
    else:
        for s in added:
            ctx.say(f"added    {s.alias} ({s.transport.value}: {s.target})")
        for name, reason in skipped:
            ctx.say(f"skipped  {name}: {reason}")
    return ExitCode.OK
