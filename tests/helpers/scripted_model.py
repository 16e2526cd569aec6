"""The model, scripted: an in-process ``ChatProvider`` that plays queued replies.

The model is the one thing the chat tests fake. Each ``stream`` call records the request and
plays the next queued step: a reply (streamed in pieces), tool calls, a classified failure, or
a reply that hangs after some text until the consumer stops it. The end-to-end tests through
the real openai/anthropic SDKs swap this for scripted HTTP endpoints behind the same fixture.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from mooring.core.chat import (
    ChatProvider,
    ChatRequest,
    ProviderConfig,
    ProviderError,
    ProviderFailure,
    ProviderKind,
    ReplyDone,
    ReplyEvent,
    StopReason,
    TextDelta,
    ToolCallRequest,
)
from mooring.core.errors import KnownError

CONFIG = ProviderConfig(
    id="scripted",
    name="scripted",
    kind=ProviderKind.OPENAI,
    base_url="http://127.0.0.1:9/v1",
    model="scripted-model",
)


@dataclass(frozen=True, slots=True)
class _Step:
    text: str = ""
    calls: tuple[ToolCallRequest, ...] = ()
    failure: ProviderError | None = None
    hang: bool = False


@dataclass
class ScriptedModel:
    """Queued replies, and every request the model received."""

    steps: list[_Step] = field(default_factory=list)
    requests: list[ChatRequest] = field(default_factory=list)
    configured: bool = True
    closed: int = 0
    built: int = 0
    """Providers built (clients made) so far."""
    on_request: Callable[[], None] | None = None
    """Called as each request arrives (before any reply is streamed)."""
    _counter: int = 0

    # -- the script ------------------------------------------------------------------------

    def reply(self, text: str) -> ScriptedModel:
        """The model answers ``text`` (streamed in a few pieces) and stops."""
        self.steps.append(_Step(text=text))
        return self

    def call(self, name: str, arguments: dict[str, Any], *, text: str = "") -> ScriptedModel:
        """The model asks for one tool call by its model-safe name."""
        return self.calls((name, arguments), text=text)

    def calls(self, *calls: tuple[str, dict[str, Any]], text: str = "") -> ScriptedModel:
        """The model asks for several tool calls in one reply."""
        made = []
        for name, arguments in calls:
            self._counter += 1
            made.append(
                ToolCallRequest(
                    id=f"call_{self._counter}",
                    name=name,
                    arguments=arguments,
                    raw_arguments=json.dumps(arguments),
                )
            )
        self.steps.append(_Step(text=text, calls=tuple(made)))
        return self

    def fail(
        self,
        kind: ProviderFailure,
        message: str,
        *,
        partial: str = "",
        retry_after: float | None = None,
    ) -> ScriptedModel:
        """The model call fails (after streaming ``partial``, if any)."""
        error = ProviderError(kind, message, partial_text=partial, retry_after=retry_after)
        self.steps.append(_Step(text=partial, failure=error))
        return self

    def hang(self, text: str) -> ScriptedModel:
        """The model streams ``text``, then never finishes (until stopped)."""
        self.steps.append(_Step(text=text, hang=True))
        return self

    # -- the provider port -----------------------------------------------------------------

    async def resolve(self, key: str | None) -> ProviderConfig:
        """The provider lookup the chat service is given."""
        if not self.configured:
            raise KnownError("No model provider is configured.", code="no_provider")
        if key not in (None, CONFIG.id, CONFIG.name):
            raise KnownError(f"No provider called {key!r}.", code="not_found")
        return CONFIG

    def factory(self, config: ProviderConfig) -> ChatProvider:
        """The provider factory the chat service is given."""
        assert config == CONFIG
        self.built += 1
        return _Provider(self)


class _Provider:
    def __init__(self, model: ScriptedModel) -> None:
        self._model = model

    async def stream(self, request: ChatRequest) -> AsyncIterator[ReplyEvent]:
        self._model.requests.append(request)
        if self._model.on_request is not None:
            self._model.on_request()
        if not self._model.steps:
            raise AssertionError("the model was called more often than scripted")
        step = self._model.steps.pop(0)
        pieces = [step.text[i : i + 4] for i in range(0, len(step.text), 4)]
        for piece in pieces:
            yield TextDelta(piece)
        if step.hang:
            await asyncio.Event().wait()
        if step.failure is not None:
            raise step.failure
        yield ReplyDone(
            text=step.text,
            tool_calls=step.calls,
            stop_reason=StopReason.TOOL_CALLS if step.calls else StopReason.END,
        )

    async def list_models(self) -> list[str]:
        return [CONFIG.model]

    async def aclose(self) -> None:
        self._model.closed += 1
