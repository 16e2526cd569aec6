"""Servers' sampling and form requests on a terminal (``mooring call``, ``tasks watch``).

A sampling request is shown whole — who asks (and from which task), every message, the model
preferences and the token limit — then the person approves (possibly editing the last user
message or the token limit), approves always for this server, or declines. Without a model
provider they type the reply instead. Server text is made printable before it is shown.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mooring.cli.approval import terminal_asker
from mooring.cli.output import Terminal
from mooring.cli.terminal import in_daemon_thread
from mooring.core.faces import Askers
from mooring.core.sampling import (
    SampledMessage,
    SamplingAnswer,
    SamplingChoice,
    SamplingReply,
    SamplingRequest,
)
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.inputs import TaskInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass


def printable(text: str, limit: int = 2000) -> str:
    """Server or model text made safe for a terminal: no control sequences, bounded length."""
    cleaned = "".join(c if c.isprintable() or c == "\n" else " " for c in text)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."


def describe(request: SamplingRequest) -> list[str]:
    """The request as lines for people."""
    asker = printable(request.server_alias, 100)
    if request.task_tool:
        asker += f" (task of {printable(request.task_tool, 100)})"
    lines = [f"\n{asker} asks for a model reply (sampling)."]
    if request.system_prompt:
        lines.append(f"  system prompt: {printable(request.system_prompt)}")
    for message in request.messages:
        body = printable(message.text).replace("\n", "\n      ")
        lines.append(f"  [{printable(message.role, 20)}] {body}")
    prefs = []
    if request.model_hints:
        prefs.append("hints " + ", ".join(printable(h, 60) for h in request.model_hints))
    for name, value in (
        ("cost", request.cost_priority),
        ("speed", request.speed_priority),
        ("intelligence", request.intelligence_priority),
    ):
        if value is not None:
            prefs.append(f"{name} {value:g}")
    if prefs:
        lines.append("  model preferences: " + "; ".join(prefs))
    lines.append(f"  at most {request.max_tokens} tokens")
    if request.include_context and request.include_context != "none":
        lines.append(f"  asks to include context: {printable(request.include_context, 40)}")
    return lines


def terminal_askers(term: Terminal) -> Askers:
    """The questions a person at this terminal answers: approvals, sampling requests (and
    the model's replies to them) and forms."""

    def ask_sampling(request: SamplingRequest, has_provider: bool) -> SamplingAnswer:
        for line in describe(request):
            term.say(line)
        while True:
            if has_provider:
                term.out.write(
                    "Send to your model? [y] once, [a] always for this server, "
                    "[e] edit first, [t] type the reply yourself, [n] decline: "
                )
            else:
                term.out.write(
                    "No model is configured. [t] type the reply yourself, "
                    "[a] and allow this server from now on, [n] decline: "
                )
            term.out.flush()
            line = term.stdin.readline()
            if not line:
                return SamplingAnswer(SamplingChoice.DECLINE)
            choice = line.strip().lower()
            if choice in ("n", "", "q"):
                return SamplingAnswer(SamplingChoice.DECLINE)
            if has_provider and choice == "y":
                return SamplingAnswer(SamplingChoice.APPROVE, request)
            if has_provider and choice == "e":
                return SamplingAnswer(SamplingChoice.APPROVE, edit(request))
            if choice == "a" and has_provider:
                return SamplingAnswer(SamplingChoice.APPROVE_ALWAYS, request)
            if choice in ("t", "a"):
                term.out.write("Reply: ")
                term.out.flush()
                typed = term.stdin.readline()
                if not typed.strip():
                    return SamplingAnswer(SamplingChoice.DECLINE)
                picked = SamplingChoice.APPROVE_ALWAYS if choice == "a" else SamplingChoice.APPROVE
                return SamplingAnswer(picked, request, typed_reply=typed.rstrip("\n"))

    def edit(request: SamplingRequest) -> SamplingRequest:
        messages = list(request.messages)
        last = next(
            (i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None
        )
        if last is not None:
            term.out.write("New text of the last user message (empty: keep it): ")
            term.out.flush()
            text = term.stdin.readline().rstrip("\n")
            if text:
                messages[last] = SampledMessage("user", text)
        term.out.write(f"Token limit (empty: keep {request.max_tokens}): ")
        term.out.flush()
        raw = term.stdin.readline().strip()
        limit = int(raw) if raw.isdigit() and int(raw) > 0 else None
        return request.edited(messages=messages, max_tokens=limit)

    def review(request: SamplingRequest, reply: SamplingReply) -> bool:
        term.say(f"\nThe model ({printable(reply.model, 80)}) replied:")
        term.say("  " + printable(reply.text).replace("\n", "\n  "))
        term.out.write(f"Send this reply to {printable(request.server_alias, 100)}? [y/N] ")
        term.out.flush()
        return term.stdin.readline().strip().lower() == "y"

    def ask_form(server: ServerDefinition, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from mooring.cli.tasks import _prompt  # the same form as a task's input request

        item = TaskInput(
            record_id="", key="", method=method, params=params, created_at=datetime.now(UTC)
        )
        return _prompt(term, item, printable(server.alias, 100))

    async def sampling(request: SamplingRequest, has_provider: bool) -> SamplingAnswer:
        return await in_daemon_thread(ask_sampling, request, has_provider)

    async def reviewing(request: SamplingRequest, reply: SamplingReply) -> bool:
        return await in_daemon_thread(review, request, reply)

    async def form(
        server: ServerDefinition, method: str, params: dict[str, Any]
    ) -> dict[str, Any] | None:
        return await in_daemon_thread(ask_form, server, method, params)

    return Askers(approval=terminal_asker(term), sampling=sampling, review=reviewing, form=form)
