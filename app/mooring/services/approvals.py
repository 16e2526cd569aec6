"""The approval broker: asks the policy, asks the user when needed, remembers and audits.

Qt-free: the GUI and the CLI each supply an ``ask`` coroutine that shows the question. Every
outcome is written to the audit table and the tool round *before* the call goes on or stops.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mooring.core.approval.policy import Allow, Deny, Guards, decide
from mooring.core.approval.request import (
    ApprovalOutcome,
    ApprovalRequest,
    PreviewResult,
)
from mooring.core.approval.rules import ApprovalAuditEntry, ApprovalRule, Decision, Scope
from mooring.core.clock import Clock
from mooring.core.events import ApprovalDidEnd, ApprovalRequested, EventBus
from mooring.core.ids import argument_digest, new_id
from mooring.core.ports import RuleBook
from mooring.core.servers import ServerDefinition
from mooring.core.tools import ToolAnnotations

if TYPE_CHECKING:
    from mooring.core.faces import AskUser

log = logging.getLogger("mooring.approvals")

WITHDRAWN_BY_CANCEL = "The question was withdrawn (interrupted)."

Preview = Callable[[dict[str, Any]], PreviewResult]

PREVIEW_DEADLINE_S = 2.0
"""Looking at local files for the question never holds it up longer than this."""


@dataclass(frozen=True, slots=True)
class Review:
    """The end of an approval: may the call go out, and why (or why not)."""

    proceed: bool
    outcome: ApprovalOutcome
    reason: str
    withdrawn: bool = False
    """The question was interrupted (Ctrl-C, the window closed): audited as aborted, and the
    caller's own cancellation goes on."""
    remembered: Scope | None = None
    """The user asked to remember this decision (for this conversation, or always)."""


def argument_size(arguments: dict[str, Any]) -> int:
    """Bytes of the arguments as they would go on the wire (compact JSON)."""
    return len(json.dumps(arguments, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


class ApprovalBroker:
    """Decides, for each call, whether it may be sent — before anything is sent."""

    def __init__(
        self,
        *,
        rules: RuleBook,
        clock: Clock,
        guards_for: Callable[[ServerDefinition], Guards],
        ask: AskUser | None = None,
        preview: Preview | None = None,
        actor: str = "user",
        events: EventBus | None = None,
    ) -> None:
        self._events = events
        self._rules = rules
        self._clock = clock
        self._guards_for = guards_for
        self.ask = ask
        """The question's prompt (the face's); see also :attr:`ask_for`."""
        self.ask_for: Callable[[], AskUser | None] | None = None
        """The prompt of whoever the call is for, looked up at each question (the engine's
        faces); ``None``: always :attr:`ask`."""
        self._preview = preview
        self._actor = actor
        self._events = events

    async def review(
        self,
        *,
        server: ServerDefinition,
        tool: str,
        annotations: ToolAnnotations,
        arguments: dict[str, Any],
        tool_round_id: str,
        conversation_id: str | None = None,
        digest: str | None = None,
        remembered: bool = True,
    ) -> Review:
        """Apply the policy (asking the user if it says so), audit, and say whether to send.
        Without ``remembered``, decisions the user remembered for this conversation do not
        count (a regenerated or edited turn asks again; the user's standing rules still do)."""
        verdict = decide(
            server=server,
            tool=tool,
            annotations=annotations,
            argument_bytes=argument_size(arguments),
            rules=await self._rules.list_rules(),
            guards=self._guards_for(server),
            conversation_id=conversation_id if remembered else None,
        )
        rule = verdict.rule
        consumed = rule.id if rule is not None and rule.scope is Scope.ONCE else None
        if isinstance(verdict, Allow):
            review = Review(True, ApprovalOutcome.AUTO_ALLOWED, verdict.reason)
            actor = "policy"
        elif isinstance(verdict, Deny):
            review = Review(False, ApprovalOutcome.AUTO_DENIED, verdict.reason)
            actor = "policy"
        else:
            review, actor = await self._ask(
                server,
                tool,
                annotations,
                arguments,
                verdict.reason,
                conversation_id,
                tool_round_id,
            )
            consumed = None
        await self._rules.record_approval(
            ApprovalAuditEntry(
                id=new_id(),
                at=self._clock.now(),
                server_id=server.id,
                tool=tool,
                argument_digest=digest or argument_digest(arguments),
                outcome=review.outcome.value,
                actor=actor,
                rule_id=rule.id if rule is not None else None,
                tool_round_id=tool_round_id,
                # Why the policy decided, or why it asked (a guard's refusal says its own why).
                reason=review.reason
                if review.outcome is ApprovalOutcome.AUTO_DENIED
                else verdict.reason,
                remembered=review.remembered.value if review.remembered is not None else None,
            ),
            consumed_rule_id=consumed,
        )
        log.info("approval %s/%s: %s (%s)", server.alias, tool, review.outcome, review.reason)
        if review.withdrawn:
            raise asyncio.CancelledError  # Ctrl-C, window closed: audited, now let it go on
        return review

    async def _ask(
        self,
        server: ServerDefinition,
        tool: str,
        annotations: ToolAnnotations,
        arguments: dict[str, Any],
        reason: str,
        conversation_id: str | None,
        tool_round_id: str | None = None,
    ) -> tuple[Review, str]:
        ask = self.ask_for() if self.ask_for is not None else self.ask
        if ask is None:
            return (
                Review(
                    False, ApprovalOutcome.ABORTED, f"Approval needed ({reason}); no one to ask."
                ),
                "program",
            )
        preview = await self._look(arguments)
        if preview.refusal is not None:
            return Review(False, ApprovalOutcome.AUTO_DENIED, preview.refusal), "policy"
        request = ApprovalRequest(
            id=new_id(),
            server_id=server.id,
            server_alias=server.alias,
            tool=tool,
            arguments=arguments,
            reason=reason,
            destructive=annotations.destructive is True,
            preview=preview.lines,
            conversation_id=conversation_id,
            tool_round_id=tool_round_id,
        )
        review, actor = await self._put(request, server, ask)
        if self._events is not None:
            self._events.emit(ApprovalDidEnd(request.id, review.outcome, review.reason))
        return review, actor

    async def _look(self, arguments: dict[str, Any]) -> PreviewResult:
        """The preview, computed off the event loop and within a deadline."""
        if self._preview is None:
            return PreviewResult([])
        try:
            async with asyncio.timeout(PREVIEW_DEADLINE_S):
                return await asyncio.to_thread(self._preview, arguments)
        except TimeoutError:
            return PreviewResult(["(looking at the files took too long; not shown)"])

    async def _put(
        self, request: ApprovalRequest, server: ServerDefinition, ask: AskUser
    ) -> tuple[Review, str]:
        """Ask the user ``request`` and turn the answer into a review (remembering a rule)."""
        conversation_id = request.conversation_id
        tool = request.tool
        if self._events is not None:
            self._events.emit(ApprovalRequested(request))
        try:
            answer = await ask(request)
        except EOFError:
            return Review(False, ApprovalOutcome.ABORTED, "The question was withdrawn."), "program"
        except asyncio.CancelledError:
            # Audited as aborted by review(), which then lets the cancellation go on.
            review = Review(False, ApprovalOutcome.ABORTED, WITHDRAWN_BY_CANCEL, withdrawn=True)
            return review, "program"
        if answer.remember is not None and answer.outcome in (
            ApprovalOutcome.APPROVED,
            ApprovalOutcome.DENIED,
        ):
            await self._rules.add_rule(
                ApprovalRule(
                    id=new_id(),
                    server_identity=server.identity,
                    tool_pattern=tool,
                    decision=Decision.ALLOW
                    if answer.outcome is ApprovalOutcome.APPROVED
                    else Decision.DENY,
                    scope=answer.remember,
                    conversation_id=conversation_id
                    if answer.remember is Scope.CONVERSATION
                    else None,
                    created_at=self._clock.now(),
                )
            )
        words = {
            ApprovalOutcome.APPROVED: "Approved by the user.",
            ApprovalOutcome.DENIED: "The user denied this call.",
            ApprovalOutcome.CANCELLED: "The user dismissed the question.",
        }
        text = words.get(answer.outcome, "The question was withdrawn.")
        remembered = (
            answer.remember
            if answer.outcome in (ApprovalOutcome.APPROVED, ApprovalOutcome.DENIED)
            else None
        )
        review = Review(
            answer.outcome is ApprovalOutcome.APPROVED, answer.outcome, text, remembered=remembered
        )
        return review, "user"
