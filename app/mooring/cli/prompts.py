"""``mooring prompts list [SERVER]``, ``mooring prompts get SERVER NAME --arg k=v`` and
``mooring resources list [SERVER]``."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError


async def list_prompts(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """The prompts of one server, or of every server that can be reached now."""
    prompts = await ctx.host.library.prompts(args.server)
    if ctx.as_json:
        ctx.say(json.dumps([asdict(p) for p in prompts], indent=2))
        return ExitCode.OK
    if not prompts:
        ctx.say("No prompts." if args.server else "No server that can be reached has prompts.")
    for prompt in prompts:
        first_line = (prompt.description or prompt.title).strip().splitlines()[:1]
        ctx.say(f"{prompt.label}  {''.join(first_line)}")
        for argument in prompt.arguments:
            needed = "required" if argument.required else "optional"
            ctx.say(f"    {argument.name} ({needed})  {argument.description}".rstrip())
    return ExitCode.OK


async def get_prompt(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """A prompt's messages, with the arguments given as ``--arg name=value``."""
    arguments: dict[str, str] = {}
    for given in args.arg or []:
        name, equals, value = given.partition("=")
        if not equals or not name:
            raise KnownError(
                f"--arg {given!r} is not NAME=VALUE.", hint="For example: --arg path=data.csv"
            )
        arguments[name] = value
    text = await ctx.host.library.get_prompt(args.server, args.name, arguments)
    if ctx.as_json:
        ctx.say(json.dumps(asdict(text), indent=2))
        return ExitCode.OK
    for message in text.messages:
        ctx.say(f"[{message.role}]")
        ctx.say(message.text)
    return ExitCode.OK


async def list_resources(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """The resources and resource templates of one server, or of every server reachable."""
    resources = await ctx.host.library.resources(args.server)
    if ctx.as_json:
        ctx.say(json.dumps([asdict(r) for r in resources], indent=2))
        return ExitCode.OK
    if not resources:
        ctx.say("No resources." if args.server else "No server that can be reached has resources.")
    for resource in resources:
        kind = " (template)" if resource.template else ""
        about = (resource.description or resource.title or resource.name).strip().splitlines()
        ctx.say(f"{resource.label}{kind}  {''.join(about[:1])}")
    return ExitCode.OK
