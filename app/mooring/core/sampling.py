"""A server's request for a model reply (``sampling/createMessage``), as the user sees it.

Sampling lets a server spend the user's model (and money) with text of its choosing, so nothing
reaches a model unasked: the request is shown whole — which server asks, the messages, the model
preferences, the token limit — and goes out only after the user approves it (possibly edited).
Without a model provider the user types the reply or declines. Pure values and parsing only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from mooring.core.elicitation import SAMPLING_METHOD

__all__ = ["SAMPLING_METHOD", "SAMPLING_RULE", "SamplingAnswer", "SamplingRequest"]

SAMPLING_RULE: Final = "@sampling"
"""The ``tool_pattern`` of "always allow sampling for this server" rules. Not a valid tool name,
and only ever compared exactly, so no tool rule (not even ``*``) lets sampling through."""


@dataclass(frozen=True, slots=True)
class SampledMessage:
    """One message of the conversation the server wants continued."""

    role: str
    text: str
    """The text content; other content kinds are named in brackets (``[image]``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingRequest:
    """What the server asks a model to do (everything shown to the user before approval)."""

    server_id: str
    server_alias: str
    messages: tuple[SampledMessage, ...]
    max_tokens: int
    system_prompt: str | None = None
    model_hints: tuple[str, ...] = ()
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None
    temperature: float | None = None
    include_context: str | None = None
    task_tool: str | None = None
    """The tool whose task asks, when the request comes from inside a task."""

    def edited(
        self,
        *,
        messages: Sequence[SampledMessage] | None = None,
        max_tokens: int | None = None,
        system_prompt: str | None = None,
    ) -> SamplingRequest:
        """The request as the user changed it before approving."""
        return dataclasses.replace(
            self,
            messages=tuple(messages) if messages is not None else self.messages,
            max_tokens=max_tokens if max_tokens is not None else self.max_tokens,
            system_prompt=system_prompt if system_prompt is not None else self.system_prompt,
        )


@dataclass(frozen=True, slots=True)
class SamplingReply:
    """What a model (or the user, typing) answered."""

    text: str
    model: str
    stop_reason: str = "endTurn"

    def result(self) -> dict[str, Any]:
        """The ``CreateMessageResult`` sent back to the server."""
        return {
            "role": "assistant",
            "content": {"type": "text", "text": self.text},
            "model": self.model,
            "stopReason": self.stop_reason,
        }


class SamplingChoice(StrEnum):
    """What the user decided about a sampling request."""

    APPROVE = "approve"
    APPROVE_ALWAYS = "approve_always"
    """Approve, and remember it for this server (a ``@sampling`` allow rule)."""
    DECLINE = "decline"


@dataclass(frozen=True, slots=True)
class SamplingAnswer:
    """The user's decision; ``request`` is what to send (edited or not), ``typed_reply`` the
    reply the user wrote instead of asking a model."""

    choice: SamplingChoice
    request: SamplingRequest | None = None
    typed_reply: str | None = None


def _text(content: Any) -> str:
    if isinstance(content, Mapping):
        if content.get("type") == "text":
            return str(content.get("text", ""))
        return f"[{content.get('type', 'content')}]"
    if isinstance(content, list):
        return "\n".join(_text(part) for part in content)
    return str(content)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def sampling_request(
    server_id: str, server_alias: str, params: Mapping[str, Any], *, task_tool: str | None = None
) -> SamplingRequest:
    """Read ``sampling/createMessage`` params. Raises ``ValueError`` when they make no sense."""
    raw_messages = params.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise ValueError("the request has no messages")
    messages = []
    for item in raw_messages:
        if not isinstance(item, Mapping):
            raise ValueError("a message is not an object")
        messages.append(SampledMessage(str(item.get("role", "user")), _text(item.get("content"))))
    max_tokens = params.get("maxTokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens <= 0:
        raise ValueError("maxTokens is missing or not a positive integer")
    prefs = params.get("modelPreferences")
    prefs = prefs if isinstance(prefs, Mapping) else {}
    raw_hints = prefs.get("hints")
    hints: list[Any] = raw_hints if isinstance(raw_hints, list) else []
    system = params.get("systemPrompt")
    context = params.get("includeContext")
    return SamplingRequest(
        server_id=server_id,
        server_alias=server_alias,
        messages=tuple(messages),
        max_tokens=max_tokens,
        system_prompt=str(system) if system is not None else None,
        model_hints=tuple(
            str(h["name"]) for h in hints if isinstance(h, Mapping) and h.get("name")
        ),
        cost_priority=_number(prefs.get("costPriority")),
        speed_priority=_number(prefs.get("speedPriority")),
        intelligence_priority=_number(prefs.get("intelligencePriority")),
        temperature=_number(params.get("temperature")),
        include_context=str(context) if context is not None else None,
        task_tool=task_tool,
    )
