"""``mooring accounts …``: several accounts (credential profiles) per server, and signing in.

A task is bound to the account it was created under and is only ever asked about with that
account's credentials; removing an account turns its unfinished tasks into explained issues.
The use cases are the host's (the window's Servers panel uses the same ones).
"""

from __future__ import annotations

import argparse
import json

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.core.servers import ServerDefinition
from mooring.core.text import neutralize


async def profile_id_for(
    ctx: CliContext, server: ServerDefinition, label: str | None
) -> str | None:
    """The id of the account called ``label`` on ``server`` (None: the default account)."""
    return await ctx.host.account_desk.account_id(server.alias, label)


async def list_accounts(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """The accounts of a server, and whether each is signed in."""
    shown = [
        {"account": a.label, "id": a.profile_id, "signed_in": a.signed_in}
        for a in await ctx.host.account_desk.accounts(args.server)
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
    server = await ctx.host.server(args.server)
    await ctx.host.account_desk.add(server.alias, args.label)
    ctx.say(f"Added account {args.label!r} to {server.alias}.")
    return ExitCode.OK


async def remove_account(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Remove an account; its secrets go, its unfinished tasks become issues on reconcile."""
    server = await ctx.host.server(args.server)
    await ctx.host.account_desk.remove(server.alias, args.label)
    ctx.say(f"Removed account {args.label!r} of {server.alias}.")
    return ExitCode.OK


async def login(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Sign in to an OAuth-protected HTTP server (the address to open is printed)."""
    server = await ctx.host.server(args.server)
    err = ctx.terminal.err

    async def print_address(url: str) -> None:
        # The address comes from the server's metadata: shown inert, on one line.
        err.write(f"Open this address in a web browser to sign in:\n\n  {neutralize(url)}\n\n")
        err.flush()

    await ctx.host.account_desk.sign_in(server.alias, args.account, print_address)
    ctx.say(f"Signed in to {server.alias}" + (f" as {args.account}." if args.account else "."))
    return ExitCode.OK


async def logout(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Forget this account's tokens (its tasks will show "sign-in needed")."""
    server = await ctx.host.server(args.server)
    await ctx.host.account_desk.sign_out(server.alias, args.account)
    ctx.say(f"Signed out of {server.alias}.")
    return ExitCode.OK
