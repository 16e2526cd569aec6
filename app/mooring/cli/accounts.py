"""``mooring accounts …``: several accounts (credential profiles) per server, and signing in.

A task is bound to the account it was created under and is only ever asked about with that
account's credentials; removing an account turns its unfinished tasks into explained issues.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.core.ids import new_id
from mooring.core.servers import CredentialProfile, ServerDefinition, Transport


@dataclass(frozen=True, slots=True)
class SignInActions:
    """What the composition root offers for OAuth (so the CLI needs no MCP import)."""

    sign_in: Callable[[ServerDefinition, str | None], Awaitable[bool]]
    sign_out: Callable[[ServerDefinition, str | None], None]
    signed_in: Callable[[ServerDefinition, str | None], bool]


async def _server(ctx: CliContext, name: str) -> ServerDefinition:
    server = await ctx.catalog.find_server(name)
    if server is None:
        raise KnownError(f"No server called {name!r}.", code="not_found")
    return server


async def profile_id_for(
    ctx: CliContext, server: ServerDefinition, label: str | None
) -> str | None:
    """The id of the account called ``label`` on ``server`` (None: the default account)."""
    if label is None:
        return None
    for profile in await ctx.accounts.list_profiles(server.id):
        if profile.label == label:
            return profile.id
    raise KnownError(
        f"{server.alias} has no account called {label!r}.",
        hint=f"Add it with: mooring accounts add {server.alias} {label}",
        code="not_found",
    )


async def list_accounts(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """The accounts of a server, and whether each is signed in."""
    server = await _server(ctx, args.server)
    profiles = await ctx.accounts.list_profiles(server.id)
    rows = [("default", None), *((p.label, p.id) for p in profiles)]
    shown = [
        {
            "account": label,
            "id": pid,
            "signed_in": server.transport is Transport.HTTP
            and ctx.sign_in is not None
            and ctx.sign_in.signed_in(server, pid),
        }
        for label, pid in rows
    ]
    if ctx.as_json:
        ctx.say(json.dumps(shown, indent=2))
    else:
        for row in shown:
            state = "signed in" if row["signed_in"] else "not signed in"
            ctx.say(f"{row['account']:<20} {state}")
    return ExitCode.OK


async def add_account(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Add an account to a server."""
    server = await _server(ctx, args.server)
    if any(p.label == args.label for p in await ctx.accounts.list_profiles(server.id)):
        raise KnownError(f"{server.alias} already has an account {args.label!r}.")
    profile = CredentialProfile(
        id=new_id(), server_id=server.id, label=args.label, created_at=ctx.clock.now()
    )
    await ctx.accounts.add_profile(profile)
    ctx.say(f"Added account {args.label!r} to {server.alias}.")
    return ExitCode.OK


async def remove_account(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Remove an account; its secrets go, its unfinished tasks become issues on reconcile."""
    server = await _server(ctx, args.server)
    pid = await profile_id_for(ctx, server, args.label)
    assert pid is not None
    await ctx.accounts.remove_profile(pid)
    if ctx.sign_in is not None:
        ctx.sign_in.sign_out(server, pid)
    ctx.say(f"Removed account {args.label!r} of {server.alias}.")
    return ExitCode.OK


async def login(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Sign in to an OAuth-protected HTTP server (the address to open is printed)."""
    server = await _server(ctx, args.server)
    if server.transport is not Transport.HTTP or ctx.sign_in is None:
        raise KnownError(f"{server.alias} is not a Streamable HTTP server; nothing to sign in.")
    pid = await profile_id_for(ctx, server, args.account)
    if not await ctx.sign_in.sign_in(server, pid):
        raise KnownError(f"Signing in to {server.alias} did not complete.", code="sign_in")
    ctx.say(f"Signed in to {server.alias}" + (f" as {args.account}." if args.account else "."))
    return ExitCode.OK


async def logout(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Forget this account's tokens (its tasks will show "sign-in needed")."""
    server = await _server(ctx, args.server)
    pid = await profile_id_for(ctx, server, args.account)
    if ctx.sign_in is not None:
        ctx.sign_in.sign_out(server, pid)
    ctx.say(f"Signed out of {server.alias}.")
    return ExitCode.OK
