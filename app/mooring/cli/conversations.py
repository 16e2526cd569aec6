"""``mooring conversations …``: list, show, search, rename, delete, export and set options."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.core.chat_export import conversation_json, export_json
from mooring.core.conversation import Conversation, Message, MessageStatus, Role
from mooring.core.errors import KnownError
from mooring.core.host_api import ChatApi

_ESCAPE = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|.)?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """Text from a model or a server made safe for a terminal: no escape sequences, no
    control or direction-override characters (newlines and tabs stay)."""
    return _CONTROL.sub("", _ESCAPE.sub("", text))


def chat_service(ctx: CliContext) -> ChatApi:
    """The chat service the composition root gave this command."""
    if ctx.chat is None:
        raise KnownError("Conversations are not available in this command.", code="internal")
    return ctx.chat


def _when(conversation: Conversation) -> str:
    return conversation.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")


def _system_words(conversation: Conversation) -> str:
    if conversation.system_prompt is None:
        return "default (Settings)"
    if not conversation.system_prompt.strip():
        return "none"
    return f"its own ({len(conversation.system_prompt):,} characters)"


def read_text_file(path: str, *, what: str) -> str:
    """A UTF-8 text file's content; a clear error when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else exc.strerror
        raise KnownError(
            f"The {what} file {printable(path)!r} cannot be read: {reason}.", code="usage"
        ) from exc


def _flags(conversation: Conversation) -> str:
    flags = [
        name
        for name, on in (
            ("auto-continue", conversation.auto_continue),
            ("muted", conversation.muted),
        )
        if on
    ]
    return f"  [{', '.join(flags)}]" if flags else ""


async def list_conversations(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Conversations, most recently active first."""
    found = await chat_service(ctx).list_conversations(limit=args.limit)
    if ctx.as_json:
        ctx.say(json.dumps([conversation_json(c) for c in found], indent=2))
        return ExitCode.OK
    if not found:
        ctx.say("No conversations.")
    for c in found:
        ctx.say(f"{c.id[:8]}  {_when(c)}  {printable(c.title)}{_flags(c)}")
    return ExitCode.OK


_WHO = {Role.USER: "you", Role.ASSISTANT: "assistant", Role.TOOL: "tool", Role.SYSTEM: "system"}


def _who(message: Message) -> str:
    if message.followup:
        return "task result"
    return {
        Role.USER: "you",
        Role.ASSISTANT: "assistant",
        Role.TOOL: "tool",
        Role.SYSTEM: "system",
    }[message.role]


async def show(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """One conversation: its messages and tool rounds."""
    service = chat_service(ctx)
    conversation = await service.get(args.id)
    messages = await service.messages(conversation.id)
    rounds = await service.rounds(conversation.id)
    if ctx.as_json:
        data = export_json(conversation, messages, rounds, exported_at=ctx.clock.now())
        ctx.say(json.dumps(data, indent=2, ensure_ascii=False))
        return ExitCode.OK
    by_round = {r.round.id: r for r in rounds}
    ctx.say(f"{printable(conversation.title)}  ({conversation.id}){_flags(conversation)}")
    for m in messages:
        head = _who(m)
        if m.tool_round_id in by_round:
            item = by_round[m.tool_round_id]
            state = item.record.state.value if item.record else item.round.outcome.value
            head += f" ({item.server_alias}/{item.round.tool}, {state})"
        if m.status is MessageStatus.INTERRUPTED:
            head += " [interrupted]"
        ctx.say(f"\n{head}:")
        if m.content:
            ctx.say(printable(m.content))
        for call in m.tool_calls:
            ctx.say(f"→ calls {printable(call.name)} {json.dumps(call.arguments)}")
        if m.error:
            ctx.say(f"⚠ {printable(m.error)}")
    return ExitCode.OK


async def search(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Conversations with a title or a message that contains every word."""
    words = " ".join(args.text)
    hits = await chat_service(ctx).search(words, limit=args.limit)
    if ctx.as_json:
        ctx.say(
            json.dumps(
                [
                    {
                        "conversation_id": h.conversation.id,
                        "title": h.conversation.title,
                        "message_id": h.message_id,
                        "snippet": h.snippet,
                    }
                    for h in hits
                ],
                indent=2,
                ensure_ascii=False,
            )
        )
        return ExitCode.OK
    if not hits:
        ctx.say(f"No conversation mentions {words!r}.")
    for h in hits:
        snippet = " ".join(printable(h.snippet).split())
        ctx.say(f"{h.conversation.id[:8]}  {printable(h.conversation.title)} — {snippet}")
    return ExitCode.OK


async def rename(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Give a conversation a new title."""
    conversation = await chat_service(ctx).rename(args.id, " ".join(args.title))
    if ctx.as_json:
        ctx.say(json.dumps(conversation_json(conversation), indent=2))
    else:
        ctx.say(f"{conversation.id[:8]} is now {printable(conversation.title)!r}")
    return ExitCode.OK


async def delete(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Delete a conversation (the task ledger keeps what ran)."""
    conversation = await chat_service(ctx).delete(args.id)
    if ctx.as_json:
        ctx.say(json.dumps({"deleted": conversation.id}))
    else:
        ctx.say(f"Deleted {conversation.id[:8]} ({printable(conversation.title)}).")
    return ExitCode.OK


async def export(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Write a conversation's record as Markdown or JSON (to a file, or stdout)."""
    text = await chat_service(ctx).export(args.id, args.format)
    if args.output is None:
        ctx.out.write(text)
        ctx.out.flush()
        return ExitCode.OK
    target = Path(args.output)
    try:
        await asyncio.to_thread(target.write_text, text, encoding="utf-8")
    except OSError as exc:
        raise KnownError(
            f"Cannot write {target}: {exc.strerror or exc}.", code="export_failed"
        ) from exc
    if ctx.as_json:
        ctx.say(json.dumps({"path": str(target), "format": args.format, "bytes": len(text)}))
    else:
        ctx.say(f"Wrote {target}")
    return ExitCode.OK


def _on_off(value: str | None) -> bool | None:
    return None if value is None else value == "on"


async def configure(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Change a conversation's options: continue automatically, mute, model, provider,
    system prompt."""
    system_prompt = args.system_prompt
    if args.system_prompt_file is not None:
        system_prompt = read_text_file(args.system_prompt_file, what="system prompt")
    conversation = await chat_service(ctx).configure(
        args.id,
        auto_continue=_on_off(args.auto_continue),
        muted=_on_off(args.mute),
        model=args.model,
        provider=args.provider,
        system_prompt=system_prompt,
        default_system_prompt=args.default_system_prompt,
    )
    if ctx.as_json:
        ctx.say(json.dumps(conversation_json(conversation), indent=2))
    else:
        ctx.say(
            f"{conversation.id[:8]}: continue automatically "
            f"{'on' if conversation.auto_continue else 'off'}, "
            f"{'muted' if conversation.muted else 'not muted'}, "
            f"model {printable(conversation.model or 'default')}, "
            f"system prompt {_system_words(conversation)}"
        )
    return ExitCode.OK


async def versions(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """The places with more than one version (an edited message, a regenerated reply)."""
    service = chat_service(ctx)
    conversation = await service.get(args.id)
    points = await service.versions(conversation.id)
    if ctx.as_json:
        ctx.say(
            json.dumps(
                [
                    {
                        "after_message_id": p.after_message_id,
                        "first_message_id": p.first_message_id,
                        "versions": p.count,
                        "shown": p.shown,
                    }
                    for p in points
                ],
                indent=2,
            )
        )
        return ExitCode.OK
    if not points:
        ctx.say("Every message has one version.")
    shown = {m.id: m for m in await service.messages(conversation.id)}
    for p in points:
        first = shown.get(p.first_message_id)
        words = printable(first.content[:60]) if first is not None else ""
        where = "the start" if p.after_message_id is None else p.after_message_id[:8]
        ctx.say(f"after {where}: version {p.shown} of {p.count} shown  ({_who_of(first)}: {words})")
    return ExitCode.OK


async def show_version(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Show another version of a place (``--after MESSAGE`` or ``--start``)."""
    service = chat_service(ctx)
    conversation = await service.get(args.id)
    after: str | None = None
    if not args.start:
        matches = [
            p.after_message_id
            for p in await service.versions(conversation.id)
            if p.after_message_id is not None and p.after_message_id.startswith(args.after)
        ]
        if len(matches) != 1:
            raise KnownError(
                "No single place with versions follows a message starting "
                f"{printable(args.after)!r}.",
                hint="mooring conversations versions ID lists them.",
                code="usage",
            )
        after = matches[0]
    changed = await service.show_version(conversation.id, after, args.number)
    ctx.say(
        f"Version {args.number} shown." if changed else f"Version {args.number} was shown already."
    )
    return ExitCode.OK


def _who_of(message: Message | None) -> str:
    return _who(message) if message is not None else "?"
