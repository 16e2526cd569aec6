"""Faces: the window and the commands, each a client of one engine, and what each can ask.

A face that can put a question to a person (a terminal, the window) hands the engine its
*askers*: the approval prompt, the sampling review and the form. The engine asks the face on
whose behalf it works: :data:`CURRENT_FACE` names it while a face's request runs (and in every
task that request starts), and long-lived work started on the way (a server connection's own
task) runs with no face (:func:`no_face`), so a question it raises later goes to whoever can
answer then, not to the first face that happened to open the connection.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

# Annotation-only names: a command that reaches the engine (``mooring call --detach``) says
# hello with its askers without loading what they are asked about (docs/architecture.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Any, TypeAlias

    from mooring.core.approval.request import ApprovalAnswer, ApprovalRequest
    from mooring.core.sampling import SamplingAnswer, SamplingReply, SamplingRequest
    from mooring.core.servers import ServerDefinition

    AskUser: TypeAlias = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]
    """Show an approval question; the person's answer."""
    AskSampling: TypeAlias = Callable[[SamplingRequest, bool], Awaitable[SamplingAnswer]]
    """Show a sampling request; the flag says whether a model provider is available (else the
    user types the reply or declines)."""
    ReviewReply: TypeAlias = Callable[[SamplingRequest, SamplingReply], Awaitable[bool]]
    """Show a model's reply before it goes back; ``False`` rejects it."""
    AskForm: TypeAlias = Callable[
        [ServerDefinition, str, dict[str, Any]], Awaitable[dict[str, Any] | None]
    ]
    """Ask the user to fill a form elicitation: ``(server, method, params) -> ElicitResult``."""

HOST_PARTS = frozenset(
    {
        "chat",
        "provider_desk",
        "rule_desk",
        "server_desk",
        "account_desk",
        "library",
        "branches",
        "assistants",
    }
)
"""The host's parts whose public methods a face may call (``"chat.send"``)."""


@dataclass(frozen=True, slots=True)
class Askers:
    """The questions one face can put to a person (``None``: it cannot ask that one)."""

    approval: AskUser | None = None
    sampling: AskSampling | None = None
    review: ReviewReply | None = None
    form: AskForm | None = None


NOBODY = Askers()
"""A face that asks nothing (a script, a pipe)."""

CURRENT_FACE: contextvars.ContextVar[Any] = contextvars.ContextVar("mooring_face", default=None)
"""The face whose request the engine is working on (``None``: its own background work)."""


def no_face() -> contextvars.Context:
    """A copy of the current context with no face: for tasks that outlive the request that
    started them (``loop.create_task(..., context=no_face())``)."""
    context = contextvars.copy_context()
    context.run(CURRENT_FACE.set, None)
    return context
