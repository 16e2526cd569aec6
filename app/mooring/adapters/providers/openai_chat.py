"""The OpenAI chat-completions wire on the official ``openai`` SDK (any compatible endpoint).

Streams with tool calling: tool-call argument fragments are assembled by ``index`` and parsed
once complete (the raw text kept); a reply counts as finished only when a ``finish_reason``
arrived — a stream that ends without one, or breaks, is ``STREAM_BROKEN`` with the partial text.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

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

log = logging.getLogger("mooring.providers.openai")


def _status_failure(exc: openai.APIStatusError) -> StatusFailure:
    body = exc.body
    message = exc.message
    code = exc.code
    error_type = exc.type
    if isinstance(body, Mapping):
        nested = body.get("error")
        inner: Mapping[str, Any] = nested if isinstance(nested, Mapping) else body
        message = str(inner.get("message") or message)
        code = str(inner.get("code")) if inner.get("code") is not None else code
        error_type = str(inner.get("type")) if inner.get("type") is not None else error_type
    elif isinstance(body, str) and body:
        message = body
    return StatusFailure(
        status=exc.status_code,
        message=message,
        code=code,
        error_type=error_type,
        headers=dict(exc.response.headers),
    )


def classify(config: ProviderConfig, exc: BaseException) -> ProviderError | None:
    """A :class:`ProviderError` for an SDK or transport failure before the stream starts."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        return classify_status(config, _status_failure(exc))
    if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
        return classify_transport(config, exc)
    if isinstance(exc, openai.APIError):
        return _stream_error(config, exc, "")
    if isinstance(exc, openai.OpenAIError):
        return ProviderError(
            ProviderFailure.BAD_REQUEST,
            f"The model endpoint {config.name!r} could not be used: {type(exc).__name__}.",
        )
    return None


def _stream_error(config: ProviderConfig, exc: openai.APIError, partial: str) -> ProviderError:
    """An error event inside the stream (the HTTP status was 200)."""
    body = exc.body if isinstance(exc.body, Mapping) else {}
    failure = StatusFailure(
        status=429 if "rate" in str(body.get("type", "")) else 500,
        message=str(body.get("message") or exc.message),
        code=str(body.get("code")) if body.get("code") is not None else None,
        error_type=str(body.get("type")) if body.get("type") is not None else None,
    )
    if partial:
        return broken(config, partial, f"the endpoint reported {failure.error_type or 'an error'}")
    return classify_status(config, failure)


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


def _message(message: ChatTurnMessage) -> dict[str, Any]:
    if message.role is Role.TOOL:
        content = f"ERROR: {message.content}" if message.is_error else message.content
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": content}
    if message.role is Role.ASSISTANT:
        out: dict[str, Any] = {"role": "assistant", "content": message.content or None}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.raw_arguments or json.dumps(call.arguments),
                    },
                }
                for call in message.tool_calls
            ]
        elif not message.content:
            out["content"] = ""
        return out
    if message.images:
        parts: list[dict[str, Any]] = []
        if message.content:
            parts.append({"type": "text", "text": message.content})
        parts.extend(
            {"type": "image_url", "image_url": {"url": data_url(image.mime, image.data)}}
            for image in message.images
        )
        return {"role": message.role.value, "content": parts}
    return {"role": message.role.value, "content": message.content}


def data_url(mime: str, data: bytes) -> str:
    """An image as a ``data:`` URL (base64), as the chat-completions wire takes it."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def request_body(request: ChatRequest) -> dict[str, Any]:
    """The chat-completions parameters for a neutral request (streaming, with usage)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(_message(m) for m in request.messages)
    body: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "max_tokens": request.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": dict(tool.input_schema),
                },
            }
            for tool in request.tools
        ]
    return body


class OpenAIChatProvider:
    """A ``ChatProvider`` for one OpenAI-compatible endpoint."""

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
        self._limit_field = "max_tokens"
        self._client = openai.AsyncOpenAI(
            api_key=api_key or NO_KEY,
            base_url=config.base_url,
            max_retries=0,
            timeout=self.options.timeout(),
            default_headers=dict(headers),
            http_client=openai.DefaultAsyncHttpxClient(
                verify=tls_context(), timeout=self.options.timeout()
            ),
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

        async def open_stream() -> openai.AsyncStream[ChatCompletionChunk]:
            try:
                return await self._post(self._limit(body))
            except openai.BadRequestError as exc:
                # OpenAI's newer models refuse max_tokens and name its successor; others
                # (Ollama, vLLM…) know only max_tokens. Switch once, for this provider.
                if self._limit_field == "max_tokens" and "max_completion_tokens" in exc.message:
                    self._limit_field = "max_completion_tokens"
                    log.info("provider %s: using max_completion_tokens", self.config.id)
                    return await self._post(self._limit(body))
                raise

        stream = await with_one_retry(
            self.config, self.options, open_stream, lambda exc: classify(self.config, exc)
        )
        text: list[str] = []
        calls: dict[int, _PartialCall] = {}
        finish: str | None = None
        usage: dict[str, int] = {}
        try:
            try:
                async for chunk in stream:
                    # Read leniently: compatible servers differ in which fields they send.
                    chunk_usage = getattr(chunk, "usage", None)
                    if chunk_usage is not None:
                        usage = {
                            "input_tokens": getattr(chunk_usage, "prompt_tokens", 0) or 0,
                            "output_tokens": getattr(chunk_usage, "completion_tokens", 0) or 0,
                        }
                    for choice in getattr(chunk, "choices", None) or ():
                        if getattr(choice, "index", 0) not in (0, None):
                            continue
                        delta = getattr(choice, "delta", None)
                        piece = getattr(delta, "content", None) or ""
                        if piece:
                            text.append(piece)
                            yield TextDelta(piece)
                        for fragment in getattr(delta, "tool_calls", None) or ():
                            index = getattr(fragment, "index", None)
                            if not isinstance(index, int):  # one call per new id
                                index = len(calls) - (0 if getattr(fragment, "id", None) else 1)
                            call = calls.setdefault(max(index, 0), _PartialCall())
                            call.id = getattr(fragment, "id", None) or call.id
                            function = getattr(fragment, "function", None)
                            name = getattr(function, "name", None) or ""
                            if name != call.name:  # some servers repeat the whole name
                                call.name += name
                            call.arguments += getattr(function, "arguments", None) or ""
                        finish = getattr(choice, "finish_reason", None) or finish
            except openai.APIConnectionError as exc:
                raise self._broken(text, exc) from None
            except httpx2.TransportError as exc:
                raise self._broken(text, exc) from None
            except openai.APIError as exc:
                raise _stream_error(self.config, exc, "".join(text)) from None
            except ValueError as exc:  # an event that is not JSON
                raise self._broken(text, exc, "the endpoint sent an unreadable event") from None
        finally:
            await stream.close()
        if finish is None:
            raise broken(self.config, "".join(text), "the stream ended without a finish")
        tool_calls = []
        for position, (_, call) in enumerate(sorted(calls.items())):
            arguments, problem = parse_arguments(call.arguments)
            tool_calls.append(
                ToolCallRequest(
                    id=call.id or f"call_{position}",
                    name=call.name,
                    arguments=arguments,
                    raw_arguments=call.arguments,
                    arguments_error=problem,
                )
            )
        log.info(
            "provider %s: reply of %d characters, %d tool calls (%s)",
            self.config.id,
            sum(len(t) for t in text),
            len(tool_calls),
            finish,
        )
        yield ReplyDone(
            text="".join(text),
            tool_calls=tuple(tool_calls),
            stop_reason=stop_reason(finish),
            usage=usage,
        )

    async def _post(self, body: dict[str, Any]) -> openai.AsyncStream[ChatCompletionChunk]:
        """Open the streamed completion for ``body`` (already in wire form).

        What ``chat.completions.create`` sends, through the client's own ``post`` (the SDK's
        way to send a body it does not type): the same path, headers, bearer key, timeout,
        error types and chunk parsing, without ``create``'s parameter transform. That walks
        the typed parameters key by key (~0.6 ms a request here, more with many messages or
        tools) to turn typed values into JSON, which ``request_body`` already built; a test
        holds that the transform leaves such a body unchanged."""
        return await self._client.post(
            "/chat/completions",
            body=body,
            cast_to=ChatCompletion,
            options={"security": {"bearer_auth": True}},
            stream=True,
            stream_cls=openai.AsyncStream[ChatCompletionChunk],
        )

    def _limit(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` with the reply-length limit under the name this endpoint accepts."""
        limited = {k: v for k, v in body.items() if k != "max_tokens"}
        limited[self._limit_field] = body["max_tokens"]
        return limited

    def _broken(
        self, text: list[str], exc: BaseException, why: str = "the connection was lost"
    ) -> ProviderError:
        timeouts = (openai.APITimeoutError, httpx2.TimeoutException)
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
