"""The Anthropic Messages wire on the official ``anthropic`` SDK.

The system prompt travels separately; tool results go back as ``tool_result`` blocks (with
``is_error``) in the user turn that follows the ``tool_use``; consecutive same-role turns are
merged, as the API requires alternation. A reply is finished only when a ``stop_reason``
arrived; a stream that ends without one, or breaks, is ``STREAM_BROKEN`` with the partial text.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2

from mooring.adapters.providers.common import (
    NO_KEY,
    ProviderOptions,
    StatusFailure,
    broken,
    broken_stream,
    classify_status,
    classify_transport,
    list_model_ids,
    parse_arguments,
    redact,
    stop_reason,
    tls_context,
    with_one_retry,
)
from mooring.core.chat import (
    ChatRequest,
    ChatTurnMessage,
    ProviderConfig,
    ProviderError,
    ProviderFailure,
    ReplyDone,
    ReplyEvent,
    TextDelta,
    ToolCallRequest,
)
from mooring.core.conversation import Role

log = logging.getLogger("mooring.providers.anthropic")

_STATUS_OF_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


def _failure(exc: anthropic.APIStatusError) -> StatusFailure:
    body = exc.body
    message = exc.message
    error_type: str | None = None
    if isinstance(body, Mapping):
        nested = body.get("error")
        inner: Mapping[str, Any] = nested if isinstance(nested, Mapping) else body
        message = str(inner.get("message") or message)
        error_type = str(inner.get("type")) if inner.get("type") is not None else None
    elif isinstance(body, str) and body:
        message = body
    status = exc.status_code
    if status == 200:  # an error event inside the stream: its type says what it is
        status = _STATUS_OF_TYPE.get(error_type or "", 500)
    return StatusFailure(
        status=status,
        message=message,
        error_type=error_type,
        headers=dict(exc.response.headers),
    )


def classify(config: ProviderConfig, exc: BaseException) -> ProviderError | None:
    """A :class:`ProviderError` for an SDK or transport failure before the stream starts."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, anthropic.APIStatusError):
        return classify_status(config, _failure(exc))
    if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
        return classify_transport(config, exc)
    if isinstance(exc, anthropic.AnthropicError):
        return ProviderError(
            ProviderFailure.BAD_REQUEST,
            f"The model endpoint {config.name!r} could not be used: {type(exc).__name__}.",
        )
    return None


def _content(message: ChatTurnMessage) -> list[dict[str, Any]]:
    if message.role is Role.TOOL:
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.content,
                "is_error": message.is_error,
            }
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for image in message.images:
        blocks.append(
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": image.mime,
                    "data": base64.b64encode(image.data).decode("ascii"),
                },
            }
        )
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.arguments)}
        )
    return blocks


def request_body(request: ChatRequest) -> dict[str, Any]:
    """The Messages parameters for a neutral request (streaming)."""
    system = [request.system] if request.system else []
    turns: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role is Role.SYSTEM:
            system.append(message.content)
            continue
        role = "assistant" if message.role is Role.ASSISTANT else "user"
        blocks = _content(message)
        if not blocks:
            continue  # an empty (interrupted) reply: the API refuses empty text
        if turns and turns[-1]["role"] == role:
            previous = turns[-1]["content"]
            # tool_result blocks must come first in their user turn
            if role == "user" and message.role is Role.TOOL:
                first_text = next(
                    (i for i, b in enumerate(previous) if b["type"] != "tool_result"),
                    len(previous),
                )
                previous[first_text:first_text] = blocks
            else:
                previous.extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": turns,
        "stream": True,
    }
    if system:
        body["system"] = "\n\n".join(system)
    if request.tools:
        body["tools"] = [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": dict(tool.input_schema),
            }
            for tool in request.tools
        ]
    return body


@dataclass
class _Block:
    kind: str
    id: str = ""
    name: str = ""
    json: list[str] = field(default_factory=list)
    start_input: dict[str, Any] = field(default_factory=dict)


class AnthropicChatProvider:
    """A ``ChatProvider`` for one Anthropic Messages endpoint."""

    def __init__(
        self,
        config: ProviderConfig,
        *,
        api_key: str | None,
        headers: Mapping[str, str],
        options: ProviderOptions | None = None,
    ) -> None:
        self.config = config
        self.options = options or ProviderOptions()
        self._secrets = tuple(v for v in (api_key or "", *headers.values()) if v)
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key or NO_KEY,
            base_url=config.base_url,
            max_retries=0,
            timeout=self.options.timeout(),
            default_headers=dict(headers),
            http_client=anthropic.DefaultAsyncHttpxClient(
                verify=tls_context(), timeout=self.options.timeout()
            ),
            # Mooring traces its own work; the SDK neither records spans nor propagates context
            # to a third-party endpoint.
            open_telemetry={"traces": False, "propagation": False},
        )

    async def stream(self, request: ChatRequest) -> AsyncIterator[ReplyEvent]:
        """Stream one reply: text deltas, then one :class:`ReplyDone` (or a ProviderError).

        Cancelling the consumer (or closing this generator) closes the HTTP response.
        """
        try:
            async with aclosing(self._stream(request)) as events:
                async for event in events:
                    yield event
        except ProviderError as exc:
            raise redact(exc, self._secrets) from None

    async def _stream(self, request: ChatRequest) -> AsyncGenerator[ReplyEvent, None]:
        body = request_body(request)
        log.info(
            "provider %s: request with %d messages, %d tools",
            self.config.id,
            len(request.messages),
            len(request.tools),
        )

        async def open_stream() -> Any:
            return await self._client.messages.create(**body)

        stream = await with_one_retry(
            self.config, self.options, open_stream, lambda exc: classify(self.config, exc)
        )
        text: list[str] = []
        blocks: dict[int, _Block] = {}
        stop: str | None = None
        usage: dict[str, int] = {}
        try:
            try:
                async for event in stream:
                    # Read leniently: proxies (LiteLLM, gateways) may leave fields out.
                    kind = getattr(event, "type", None)
                    index = getattr(event, "index", None)
                    if kind == "message_start":
                        message_usage = getattr(getattr(event, "message", None), "usage", None)
                        usage["input_tokens"] = getattr(message_usage, "input_tokens", 0) or 0
                    elif kind == "content_block_start":
                        block = getattr(event, "content_block", None)
                        started = _Block(kind=str(getattr(block, "type", "")))
                        if started.kind == "tool_use":
                            started.id = str(getattr(block, "id", "") or "")
                            started.name = str(getattr(block, "name", "") or "")
                            given = getattr(block, "input", None)
                            if isinstance(given, dict):
                                started.start_input = dict(given)
                        elif started.kind == "text":
                            first = getattr(block, "text", "") or ""
                            if first:
                                text.append(first)
                                yield TextDelta(first)
                        blocks[index if isinstance(index, int) else len(blocks)] = started
                    elif kind == "content_block_delta":
                        delta = getattr(event, "delta", None)
                        delta_type = getattr(delta, "type", None)
                        if delta_type == "text_delta":
                            piece = getattr(delta, "text", "") or ""
                            if piece:
                                text.append(piece)
                                yield TextDelta(piece)
                        elif delta_type == "input_json_delta":
                            key = index if isinstance(index, int) else max(blocks, default=0)
                            target = blocks.setdefault(key, _Block(kind="tool_use"))
                            target.json.append(getattr(delta, "partial_json", "") or "")
                    elif kind == "message_delta":
                        stop = getattr(getattr(event, "delta", None), "stop_reason", None) or stop
                        out = getattr(getattr(event, "usage", None), "output_tokens", None)
                        if isinstance(out, int):
                            usage["output_tokens"] = out
            except anthropic.APIStatusError as exc:  # an error event inside the stream
                partial = "".join(text)
                if partial:
                    raise broken(self.config, partial, "the endpoint reported an error") from None
                raise classify_status(self.config, _failure(exc)) from None
            except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
                raise self._broken(text, exc) from None
            except ValueError as exc:  # an event that is not JSON
                raise self._broken(text, exc, "the endpoint sent an unreadable event") from None
        finally:
            await stream.close()
        if stop is None:
            raise broken(self.config, "".join(text), "the stream ended without a stop reason")
        tool_calls = []
        for _, block in sorted(blocks.items()):
            if block.kind != "tool_use":
                continue
            raw = "".join(block.json)
            if raw or not block.start_input:
                arguments, problem = parse_arguments(raw)
            else:
                arguments, problem = block.start_input, ""
            tool_calls.append(
                ToolCallRequest(
                    id=block.id,
                    name=block.name,
                    arguments=arguments,
                    raw_arguments=raw,
                    arguments_error=problem,
                )
            )
        log.info(
            "provider %s: reply of %d characters, %d tool calls (%s)",
            self.config.id,
            sum(len(t) for t in text),
            len(tool_calls),
            stop,
        )
        yield ReplyDone(
            text="".join(text),
            tool_calls=tuple(tool_calls),
            stop_reason=stop_reason(stop),
            usage=usage,
        )

    def _broken(
        self, text: list[str], exc: BaseException, why: str = "the connection was lost"
    ) -> ProviderError:
        timeouts = (anthropic.APITimeoutError, httpx2.TimeoutException)
        return broken_stream(self.config, self.options, text, exc, why, timeouts=timeouts)

    async def list_models(self) -> list[str]:
        """The endpoint's model ids; empty when it has no model list (404)."""

        async def fetch() -> list[str]:
            return [model.id async for model in self._client.models.list()]

        return await list_model_ids(
            self.config,
            self.options,
            self._secrets,
            fetch,
            lambda exc: classify(self.config, exc),
        )

    async def aclose(self) -> None:
        await self._client.close()
