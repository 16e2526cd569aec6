"""``mooring chat``: one message to a model, the reply streamed to the terminal.

Tool calls the model asks for go through the same approvals as ``mooring call`` (asked on a
terminal, the rules without one). ``--wait`` follows any task the turn started to its end and
continues the conversation with its result — the headless form of "continue automatically".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mooring.cli.assistants import assistant_desk
from mooring.cli.context import CliContext
from mooring.cli.conversations import chat_service, printable
from mooring.cli.exit_codes import ExitCode
from mooring.cli.remedies import remedy_words
from mooring.cli.tasks import follow
from mooring.core.chat import TurnResult, failure_remedy
from mooring.core.chat_export import conversation_json
from mooring.core.conversation import Role
from mooring.core.errors import KnownError
from mooring.core.events import Event, MessageDidAppend, ReplyDidStream
from mooring.core.files import IMAGE_LIMIT, FileAttachment, attach_file, check_total
from mooring.core.host_api import ChatApi
from mooring.core.ids import new_id
from mooring.core.library import ATTACHMENT_LIMIT, Attachment
from mooring.core.tasks.states import LocalState

MAX_WAITED_TURNS = 8
"""Tasks followed and continued from, one after another, in one ``--wait`` at most."""


async def _attachment(ctx: CliContext, given: str) -> Attachment:
    """``SERVER:URI`` read from its server (the URI may hold colons of its own)."""
    server, colon, uri = given.partition(":")
    if not colon or not server or not uri:
        raise KnownError(
            f"--attach {given!r} is not SERVER:URI.",
            hint="For example: --attach demo:mooring-demo://samples",
            code="usage",
        )
    attached = await ctx.host.library.attach(server, uri)
    if attached.truncated and not ctx.as_json:
        ctx.warn(f"{given}: only its first {ATTACHMENT_LIMIT:,} characters are sent")
    return attached


def _read_file(given: str) -> FileAttachment:
    """``--file PATH`` read and checked (a :class:`KnownError` when it cannot be sent)."""
    path = Path(given).expanduser()
    try:
        with path.open("rb") as stream:
            data = stream.read(IMAGE_LIMIT + 1)
    except OSError as exc:
        raise KnownError(
            f"Cannot read --file {given!r}: {exc.strerror or exc}.", code="usage"
        ) from None
    return attach_file(new_id(), path.name, data)


async def chat(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Send a message (in a new conversation unless ``--conversation``) and show the reply."""
    service = chat_service(ctx)
    text = " ".join(args.message).strip()
    if not text:
        raise KnownError("The message is empty.", code="usage")
    if args.conversation and args.assistant:
        raise KnownError(
            "An assistant starts a new conversation: give --assistant or --conversation, not both.",
            code="usage",
        )
    files = [_read_file(given) for given in args.file or []]
    check_total(files)
    if args.conversation:
        conversation = await service.get(args.conversation)
        if args.provider:
            conversation = await service.configure(conversation.id, provider=args.provider)
    elif args.assistant:
        conversation = await assistant_desk(ctx).start(args.assistant)
        if not ctx.as_json:
            ctx.warn(f"conversation {conversation.id} (assistant {printable(args.assistant)})")
    else:
        conversation = await service.create(provider=args.provider)
        if not ctx.as_json:
            ctx.warn(f"conversation {conversation.id}")

    attachments = [await _attachment(ctx, given) for given in args.attach or []]

    turns: list[TurnResult] = []
    waiting = False
    with _shown(ctx, conversation.id), _stop_on_interrupt(ctx, service, conversation.id):
        try:
            turns.append(
                await service.send(conversation.id, text, attachments=attachments, files=files)
            )
        except KnownError:
            if not args.conversation and not await service.messages(conversation.id):
                await service.delete(conversation.id)  # refused: no empty conversation left
            raise
        if args.wait:
            waiting = await _wait_and_continue(
                ctx, service, conversation.id, turns, give_up_after=args.timeout
            )

    return await _report(ctx, service, conversation.id, turns, waited=args.wait, waiting=waiting)


async def regenerate(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Answer again: the last message of yours, or the one at or before ``--message``; the
    reply it replaces is kept as a version."""
    service = chat_service(ctx)
    conversation = await service.get(args.id)
    message_id = args.message
    if message_id is None:
        stored = await service.messages(conversation.id)
        if not stored:
            raise KnownError("The conversation has no message to answer again.", code="usage")
        message_id = stored[-1].id
    else:
        message_id = await _message_id(service, conversation.id, message_id)
    with _shown(ctx, conversation.id), _stop_on_interrupt(ctx, service, conversation.id):
        turns = [await service.regenerate(conversation.id, message_id)]
    return await _report(ctx, service, conversation.id, turns, waited=False, waiting=False)


async def edit_message(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Send new words in place of a message of yours; it and what followed are kept as a
    version."""
    service = chat_service(ctx)
    conversation = await service.get(args.id)
    message_id = await _message_id(service, conversation.id, args.message)
    text = " ".join(args.text).strip()
    with _shown(ctx, conversation.id), _stop_on_interrupt(ctx, service, conversation.id):
        turns = [await service.edit(conversation.id, message_id, text)]
    return await _report(ctx, service, conversation.id, turns, waited=False, waiting=False)


async def branch(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """A new conversation from a message: copies of the shown messages up to it (tool rounds
    as history, nothing runs again); prints the new conversation."""
    service = chat_service(ctx)
    branches = ctx.host.branches
    if branches is None:
        raise KnownError("Conversations are not available in this command.", code="internal")
    conversation = await service.get(args.id)
    message_id = await _message_id(service, conversation.id, args.from_message)
    made = await branches.branch(conversation.id, message_id)
    copied = len(await service.messages(made.id)) - 1  # its first message is the note
    if ctx.as_json:
        ctx.say(
            json.dumps(
                {
                    **conversation_json(made),
                    "branched_from": {
                        "conversation_id": conversation.id,
                        "message_id": message_id,
                    },
                    "messages_copied": copied,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        ctx.say(
            f"{made.id[:8]} {printable(made.title)!r}: {copied} message"
            f"{'s' if copied != 1 else ''} copied from {conversation.id[:8]} "
            f"up to {message_id[:8]}"
        )
    return ExitCode.OK


async def _message_id(service: ChatApi, conversation_id: str, key: str) -> str:
    """A shown message of the conversation by id or unique id prefix."""
    found = [m.id for m in await service.messages(conversation_id) if m.id.startswith(key)]
    if len(found) != 1:
        raise KnownError(
            f"No single message shown in this conversation starts with {printable(key)!r}.",
            hint="mooring conversations show --json ID lists the message ids.",
            code="usage",
        )
    return found[0]


async def _report(
    ctx: CliContext,
    service: ChatApi,
    conversation_id: str,
    turns: list[TurnResult],
    *,
    waited: bool,
    waiting: bool,
) -> ExitCode:
    """Say how the turns went (the reply itself was shown as it streamed); the exit code."""
    last = turns[-1]
    if not waited and not ctx.as_json:
        for record_id in last.started_tasks:
            ctx.warn(
                f"task {record_id[:8]} runs on; follow it with: mooring tasks watch {record_id}\n"
                "  its result joins the conversation: "
                f"mooring chat --conversation {conversation_id[:8]} …"
            )
    if ctx.as_json:
        ctx.say(json.dumps(await _summary(service, conversation_id, turns), indent=2))
    elif last.error:
        ctx.warn(f"mooring: {last.error}")
        advice = remedy_words(failure_remedy(last.error_kind), (last.provider,))
        if advice:
            ctx.warn(f"  {advice}")
    rounds = await service.rounds(conversation_id)
    made = {r for t in turns for r in t.round_ids}
    aborted = any(r.round.id in made and r.round.approval == "aborted" for r in rounds)
    if aborted and not ctx.as_json:
        ctx.warn(
            "mooring: a tool call needed your approval and there was no terminal to ask on.\n"
            "  Run it in a terminal, or add a rule: mooring rules add SERVER TOOL allow"
        )
    if last.error:
        return ExitCode.PROBLEM
    return ExitCode.WAITING if waiting else ExitCode.OK


async def _wait_and_continue(
    ctx: CliContext,
    service: ChatApi,
    conversation_id: str,
    turns: list[TurnResult],
    *,
    give_up_after: float | None,
) -> bool:
    """Follow the last turn's tasks to their ends and continue with their results; whether
    a task is still running (or waiting for an answer) when following stopped."""
    for _ in range(MAX_WAITED_TURNS):
        started = turns[-1].started_tasks
        if not started or turns[-1].error:
            return False
        records = [r for r in await ctx.host.records(list(started)) if r is not None]
        finals = await follow(ctx, records, give_up_after=give_up_after)
        if not all(r.is_terminal for r in finals.values()):
            if not ctx.as_json:
                still = [r for r in finals.values() if not r.is_terminal]
                for record in still:
                    hint = (
                        "it waits for your answer"
                        if record.state is LocalState.INPUT_REQUIRED
                        else "it is still running"
                    )
                    ctx.warn(
                        f"mooring: task {record.id[:8]}: {hint}; continue later with "
                        f"mooring chat --conversation {conversation_id} …"
                    )
            return True
        continued = await service.idle()  # follow-ups, and the turn "continue automatically" ran
        if not continued:
            continued = [await service.continue_with_result(conversation_id)]
        turns.extend(continued)
    return False


async def _summary(
    service: ChatApi, conversation_id: str, turns: list[TurnResult]
) -> dict[str, Any]:
    made = [r for t in turns for r in t.round_ids]
    rounds = {r.round.id: r for r in await service.rounds(conversation_id)}
    shown = []
    for round_id in made:
        if round_id not in rounds:
            continue
        item = rounds[round_id]
        shown.append(
            {
                "id": item.round.id,
                "server": item.server_alias,
                "tool": item.round.tool,
                "approval": item.round.approval,
                "task_id": item.record.task_id if item.record else None,
                "state": item.record.state.value if item.record else None,
            }
        )
    return {
        "conversation_id": conversation_id,
        "reply": turns[-1].reply,
        "tool_rounds": shown,
        "error": turns[-1].error,
        "interrupted": turns[-1].interrupted,
    }


@contextlib.contextmanager
def _shown(ctx: CliContext, conversation_id: str) -> Iterator[None]:
    """Print the reply as it streams, and each tool call and result as it is stored."""
    if ctx.as_json:
        yield
        return
    at_line_start = [True]

    def write(text: str) -> None:
        ctx.out.write(text)
        ctx.out.flush()
        at_line_start[0] = text.endswith("\n")

    def end_line() -> None:
        if not at_line_start[0]:
            write("\n")

    def show(event: Event) -> None:
        if isinstance(event, ReplyDidStream) and event.conversation_id == conversation_id:
            write(printable(event.delta))
        elif isinstance(event, MessageDidAppend) and event.conversation_id == conversation_id:
            message = event.message
            if message.role is Role.ASSISTANT:
                end_line()
                for call in message.tool_calls:
                    write(f"→ {printable(call.name)} {json.dumps(call.arguments)}\n")
                if message.error:
                    write(f"⚠ {printable(message.error)}\n")
            elif message.role is Role.TOOL:
                end_line()
                first = printable(message.content).strip().splitlines() or [""]
                label = "task result" if message.followup else "tool"
                more = " …" if len(first) > 1 else ""
                write(f"  [{label}] {first[0][:200]}{more}\n")

    unsubscribe = ctx.events.subscribe(show)
    try:
        yield
    finally:
        unsubscribe()
        end_line()


@contextlib.contextmanager
def _stop_on_interrupt(ctx: CliContext, service: ChatApi, conversation_id: str) -> Iterator[None]:
    """On a terminal, the first Ctrl-C stops the reply (its text is kept, marked interrupted);
    a second one interrupts Mooring. A SIGINT ignored from the start stays ignored (see
    ``_ctrl_c_stops_plain_call`` in ``cli/tasks.py``)."""
    if not ctx.interactive or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield
        return
    loop = asyncio.get_running_loop()
    stopping: set[asyncio.Task[None]] = set()

    async def stop() -> None:
        if await service.stop(conversation_id):
            ctx.warn("\n(stopped; press Ctrl-C again to quit)")

    def interrupted() -> None:
        loop.remove_signal_handler(signal.SIGINT)
        task = loop.create_task(stop())
        stopping.add(task)
        task.add_done_callback(stopping.discard)

    try:
        loop.add_signal_handler(signal.SIGINT, interrupted)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
