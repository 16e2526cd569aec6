"""What a server asks of the user outside a tool's answer: sampling and form elicitation.

``InputBroker.handle`` is what every MCP connection calls when a server sends
``sampling/createMessage`` or ``elicitation/create`` during a plain call (questions inside tasks
go to the ledger and come back through the same prompts, see :meth:`InputBroker.sample`).

Sampling never reaches a model unasked:

1. the request is parsed and shown whole (``ask_sampling``) unless the user's
   "always allow sampling for this server" rule covers it — the only rule that can
   (``SAMPLING_RULE``; a tool rule such as ``*`` never does);
2. the user approves (possibly edited), approves always, or declines; without a model provider
   the user types the reply instead, or declines;
3. with a provider, the (edited) request goes to ``provider``; the reply is shown
   (``review_reply``) and the user may reject it before it goes back;
4. every outcome is audited like a tool approval.

The UI supplies ``ask_sampling``, ``review_reply`` and ``ask_form``; ``provider`` is injected by
whoever owns the model providers. With no one to ask, every request is declined.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mooring.core.approval.request import ApprovalOutcome
from mooring.core.approval.rules import ApprovalAuditEntry, ApprovalRule, Decision, Scope
from mooring.core.chat import (
    ChatProvider,
    ChatRequest,
    ChatTurnMessage,
    ProviderError,
    ProviderFailure,
    ReplyDone,
    StopReason,
)
from mooring.core.clock import Clock
from mooring.core.conversation import Role
from mooring.core.faces import NOBODY, Askers
from mooring.core.ids import argument_digest, new_id
from mooring.core.ports import RuleBook
from mooring.core.sampling import (
    SAMPLING_METHOD,
    SAMPLING_RULE,
    SamplingAnswer,
    SamplingChoice,
    SamplingReply,
    SamplingRequest,
    sampling_request,
)
from mooring.core.servers import ServerDefinition

if TYPE_CHECKING:
    from mooring.core.faces import AskForm, AskSampling, ReviewReply

log = logging.getLogger("mooring.sampling")

ELICIT_METHOD = "elicitation/create"

SamplingProvider = Callable[[SamplingRequest], Awaitable[SamplingReply]]
"""Send an approved request to the user's configured model (the ``ChatProvider`` adapter)."""

DECLINED = {"action": "decline"}

_STOP_REASONS = {StopReason.END: "endTurn", StopReason.MAX_TOKENS: "maxTokens"}


def sampling_provider(chat: ChatProvider, model: str) -> SamplingProvider:
    """A :data:`SamplingProvider` on the user's configured chat model (no tools offered).

    Raises :class:`~mooring.core.chat.ProviderError` as the provider does.
    """

    async def sample(request: SamplingRequest) -> SamplingReply:
        messages = tuple(
            ChatTurnMessage(
                role=Role.ASSISTANT if message.role == "assistant" else Role.USER,
                content=message.text,
            )
            for message in request.messages
        )
        chat_request = ChatRequest(
            model=model,
            messages=messages,
            system=request.system_prompt,
            max_tokens=request.max_tokens,
        )
        async for event in chat.stream(chat_request):
            if isinstance(event, ReplyDone):
                reason = _STOP_REASONS.get(event.stop_reason, "endTurn")
                return SamplingReply(event.text, model=model, stop_reason=reason)
        raise ProviderError(ProviderFailure.STREAM_BROKEN, "the reply ended without finishing")

    return sample


class InputBroker:
    """Answers servers' sampling and elicitation requests on the user's behalf, never past them."""

    def __init__(
        self,
        *,
        rules: RuleBook,
        clock: Clock,
        provider: SamplingProvider | None = None,
        askers: Askers = NOBODY,
    ) -> None:
        """``askers``: the face that asks (a command's terminal); its approval is not used
        here."""
        self._rules = rules
        self._clock = clock
        self.provider = provider
        self.ask_sampling: AskSampling | None = askers.sampling
        self.review_reply: ReviewReply | None = askers.review
        self.ask_form: AskForm | None = askers.form
        self.askers_for: Callable[[], Askers] | None = None
        """The askers of whoever the request is for, looked up at each question (the
        engine's faces); ``None``: the three attributes above."""

    def _askers(self) -> Askers:
        if self.askers_for is not None:
            return self.askers_for()
        return Askers(sampling=self.ask_sampling, review=self.review_reply, form=self.ask_form)

    async def handle(
        self, server: ServerDefinition, method: str, params: dict[str, Any]
    ) -> dict[str, Any] | None:
        """A server's request during a plain call; ``None`` declines it."""
        if method == SAMPLING_METHOD:
            return await self.sample(server, params)
        if method == ELICIT_METHOD:
            if params.get("mode") == "url":
                log.info("%s: URL elicitation declined (not supported yet)", server.alias)
                return DECLINED
            ask_form = self._askers().form
            if ask_form is None:
                return DECLINED
            return await ask_form(server, method, params)
        return None

    async def sample(
        self, server: ServerDefinition, params: dict[str, Any], *, task_tool: str | None = None
    ) -> dict[str, Any] | None:
        """The ``CreateMessageResult`` to send back, or ``None`` when declined (by the user, a
        rule, or because no one could be asked)."""
        try:
            request = sampling_request(server.id, server.alias, params, task_tool=task_tool)
        except ValueError as exc:
            log.warning("%s: unusable sampling request declined: %s", server.alias, exc)
            return None
        rule = await self._rule(server)
        if rule is not None and rule.decision is Decision.DENY:
            await self._audit(server, params, ApprovalOutcome.AUTO_DENIED, "rule", rule)
            return None
        reply: SamplingReply | None = None
        if rule is not None and self.provider is not None:
            await self._audit(server, params, ApprovalOutcome.AUTO_ALLOWED, "rule", rule)
        else:
            answer = await self._ask(request)
            if answer.choice is SamplingChoice.DECLINE:
                await self._audit(server, params, ApprovalOutcome.DENIED, "user")
                return None
            if answer.choice is SamplingChoice.APPROVE_ALWAYS:
                await self._remember(server)
            await self._audit(server, params, ApprovalOutcome.APPROVED, "user")
            request = answer.request or request
            if answer.typed_reply is not None:
                reply = SamplingReply(answer.typed_reply, model="typed by the user")
        if reply is None:
            if self.provider is None:
                return None  # approved, but there is no model and nothing was typed
            try:
                reply = await self.provider(request)
            except ProviderError as exc:
                log.warning("sampling for %s: the model failed: %s", server.alias, exc.message)
                await self._audit(server, params, ApprovalOutcome.ABORTED, "program")
                return None
            review = self._askers().review
            if review is not None and not await review(request, reply):
                await self._audit(server, params, ApprovalOutcome.DENIED, "user (reply)")
                return None
        return reply.result()

    async def _ask(self, request: SamplingRequest) -> SamplingAnswer:
        ask_sampling = self._askers().sampling
        if ask_sampling is None:
            return SamplingAnswer(SamplingChoice.DECLINE)
        try:
            return await ask_sampling(request, self.provider is not None)
        except EOFError:
            return SamplingAnswer(SamplingChoice.DECLINE)

    async def _rule(self, server: ServerDefinition) -> ApprovalRule | None:
        found = [
            r
            for r in await self._rules.list_rules()
            if r.server_identity == server.identity
            and r.tool_pattern == SAMPLING_RULE
            and r.scope is Scope.ALWAYS
        ]
        denying = [r for r in found if r.decision is Decision.DENY]
        allowing = [r for r in found if r.decision is Decision.ALLOW]
        ranked = denying + allowing  # a standing refusal wins
        return ranked[0] if ranked else None

    async def _remember(self, server: ServerDefinition) -> None:
        await self._rules.add_rule(
            ApprovalRule(
                id=new_id(),
                server_identity=server.identity,
                tool_pattern=SAMPLING_RULE,
                decision=Decision.ALLOW,
                scope=Scope.ALWAYS,
                created_at=self._clock.now(),
            )
        )

    async def _audit(
        self,
        server: ServerDefinition,
        params: dict[str, Any],
        outcome: ApprovalOutcome,
        actor: str,
        rule: ApprovalRule | None = None,
    ) -> None:
        await self._rules.record_approval(
            ApprovalAuditEntry(
                id=new_id(),
                at=self._clock.now(),
                server_id=server.id,
                tool=SAMPLING_METHOD,
                argument_digest=argument_digest(params),
                outcome=outcome.value,
                actor=actor,
                rule_id=rule.id if rule is not None else None,
            )
        )
        log.info("sampling for %s: %s (%s)", server.alias, outcome, actor)
