"""Asking for approval on a terminal (``mooring call`` when the policy says Ask)."""

from __future__ import annotations

import json

from mooring.cli.output import Terminal
from mooring.cli.terminal import in_daemon_thread
from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome, ApprovalRequest
from mooring.core.approval.rules import Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mooring.core.faces import AskUser

CHOICES = {
    "y": ApprovalAnswer(ApprovalOutcome.APPROVED),
    "a": ApprovalAnswer(ApprovalOutcome.APPROVED, Scope.ALWAYS),
    "n": ApprovalAnswer(ApprovalOutcome.DENIED),
    "never": ApprovalAnswer(ApprovalOutcome.DENIED, Scope.ALWAYS),
    "": ApprovalAnswer(ApprovalOutcome.CANCELLED),
    "q": ApprovalAnswer(ApprovalOutcome.CANCELLED),
}


def terminal_asker(ctx: Terminal) -> AskUser:
    """An ``ask`` coroutine that shows the request on the terminal and reads the decision."""

    def prompt(request: ApprovalRequest) -> ApprovalAnswer:
        ctx.say(f"\n{request.server_alias} wants to run {request.tool}")
        if request.destructive:
            ctx.say("  ⚠ the server says this tool may delete or overwrite data")
        ctx.say(f"  why you are asked: {request.reason}")
        for line in request.preview:
            ctx.say(f"  touches: {line}")
        pretty = json.dumps(request.arguments, indent=2, ensure_ascii=False)
        ctx.say("  arguments:\n" + "\n".join("    " + ln for ln in pretty.splitlines()))
        while True:
            ctx.write(
                "Approve? [y] once, [a] always for this tool, [n] deny, "
                "[never] deny always, [q] cancel: "
            )
            line = ctx.stdin.readline()
            if not line:
                return ApprovalAnswer(ApprovalOutcome.CANCELLED)
            choice = line.strip()
            if choice in CHOICES:
                return CHOICES[choice]

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        return await in_daemon_thread(prompt, request)

    return ask
