"""``mooring rules …``: the user's standing approval decisions."""

from __future__ import annotations

import argparse
import json

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.cli.render import by_prefix
from mooring.core.approval.rules import Decision, Scope
from mooring.core.ids import short_id


async def list_rules(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List rules with the server each one is bound to."""
    rows: list[dict[str, str | None]] = [
        {
            "id": v.rule.id,
            "server": v.server_alias,
            "server_identity": v.rule.server_identity.replace("\x1f", " "),
            "tool": v.rule.tool_pattern,
            "decision": v.rule.decision.value,
            "scope": v.rule.scope.value,
        }
        for v in await ctx.host.rule_desk.rules()
    ]
    if ctx.as_json:
        ctx.say(json.dumps(rows, indent=2))
        return ExitCode.OK
    if not rows:
        ctx.say("No rules: every side-effecting call asks first.")
    for row in rows:
        where = row["server"] or f"(no server now: {row['server_identity']})"
        short = short_id(row["id"] or "")
        ctx.say(f"{short}  {where}  {row['tool']}  {row['decision']}  {row['scope']}")
    return ExitCode.OK


async def add_rule(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Add a rule for a server's tools (TOOL may be a pattern such as ``*``)."""
    server = await ctx.host.server(args.server)
    rule = await ctx.host.rule_desk.add(
        server, args.tool, Decision(args.decision), Scope(args.scope)
    )
    if ctx.as_json:
        ctx.say(json.dumps({"id": rule.id}))
    else:
        ctx.say(
            f"Rule {short_id(rule.id)}: {rule.decision.value} {server.alias}/{rule.tool_pattern} "
            f"({rule.scope.value})."
        )
    return ExitCode.OK


async def remove_rule(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Remove a rule by id (or unique prefix)."""
    rule = by_prefix([v.rule for v in await ctx.host.rule_desk.rules()], args.id, "rule")
    await ctx.host.rule_desk.remove(rule.id)
    ctx.say(f"Removed rule {short_id(rule.id)}.")
    return ExitCode.OK
