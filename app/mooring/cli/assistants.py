"""``mooring assistants …``: saved presets for new conversations (``mooring chat --assistant``).

An assistant's settings are copied into a conversation when it starts: editing or removing the
assistant later changes no conversation already started.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from mooring.cli.context import CliContext
from mooring.cli.conversations import printable, read_text_file
from mooring.cli.exit_codes import ExitCode
from mooring.core.assistants import AssistantDraft, AssistantEdit, AssistantView
from mooring.core.errors import KnownError
from mooring.core.host_api import AssistantDeskApi


def assistant_desk(ctx: CliContext) -> AssistantDeskApi:
    """The host's assistants, or a clear error when this host keeps none."""
    desk = ctx.host.assistants
    if desk is None:
        raise KnownError("Assistants are not available in this command.", code="internal")
    return desk


def assistant_json(view: AssistantView) -> dict[str, Any]:
    """An assistant as shown to scripts."""
    a = view.assistant
    return {
        "id": a.id,
        "name": a.name,
        "system_prompt": a.system_prompt,
        "provider": view.provider_name,
        "provider_missing": view.provider_missing,
        "model": a.model,
        "servers": list(view.servers) if view.servers is not None else None,
        "tools": list(view.tools) if view.tools is not None else None,
        "created_at": a.created_at.isoformat(),
        "updated_at": a.updated_at.isoformat(),
    }


def offered_words(view: AssistantView) -> str:
    """Which tools an assistant offers, in a few words."""
    if view.offers_everything:
        return "every tool"
    parts = [f"all of {', '.join(view.servers)}" if view.servers else ""]
    parts.append(", ".join(view.tools or ()))
    shown = "; ".join(p for p in parts if p)
    return shown or "no tools"


def _provider_words(view: AssistantView) -> str:
    if view.provider_missing:
        return "a removed provider"
    name = view.provider_name or "the default provider"
    return f"{name}, model {view.assistant.model}" if view.assistant.model else name


def _show(ctx: CliContext, view: AssistantView, verb: str) -> None:
    if ctx.as_json:
        ctx.say(json.dumps(assistant_json(view), indent=2))
        return
    prompt = view.assistant.system_prompt.strip()
    ctx.say(
        f"{verb} assistant {printable(view.name)!r}: {printable(_provider_words(view))}; "
        f"tools: {printable(offered_words(view))}; system prompt: "
        + (f"{len(prompt):,} characters" if prompt else "none")
    )


def _split(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _prompt(args: argparse.Namespace) -> str | None:
    if args.system_prompt_file is not None:
        return read_text_file(args.system_prompt_file, what="system prompt")
    value: str | None = args.system_prompt
    return value


async def list_assistants(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Every assistant, by name."""
    found = await assistant_desk(ctx).assistants()
    if ctx.as_json:
        ctx.say(json.dumps([assistant_json(v) for v in found], indent=2))
        return ExitCode.OK
    if not found:
        ctx.say("No assistants. Add one with: mooring assistants add NAME --system-prompt …")
    for view in found:
        ctx.say(
            f"{printable(view.name)}  [{printable(_provider_words(view))}; "
            f"tools: {printable(offered_words(view))}]"
        )
    return ExitCode.OK


async def add(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Save a new assistant."""
    view = await assistant_desk(ctx).add(
        AssistantDraft(
            name=args.name,
            system_prompt=_prompt(args) or "",
            provider=args.provider,
            model=args.model,
            servers=_split(args.servers),
            tools=_split(args.tools),
        )
    )
    _show(ctx, view, "Added")
    return ExitCode.OK


async def edit(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Change an assistant; conversations already started keep their settings."""
    view = await assistant_desk(ctx).edit(
        args.name,
        AssistantEdit(
            name=args.rename,
            system_prompt=_prompt(args),
            provider=args.provider,
            model=args.model,
            servers=_split(args.servers),
            tools=_split(args.tools),
            all_tools=args.all_tools,
        ),
    )
    _show(ctx, view, "Changed")
    return ExitCode.OK


async def remove(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Remove an assistant; its conversations keep their settings."""
    removed = await assistant_desk(ctx).remove(args.name)
    if ctx.as_json:
        ctx.say(json.dumps({"id": removed.id, "name": removed.name, "removed": True}))
    else:
        ctx.say(f"Removed assistant {printable(removed.name)!r}.")
    return ExitCode.OK
