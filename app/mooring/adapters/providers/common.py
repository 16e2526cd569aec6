"""What both provider adapters share: options, failure classification, argument parsing.

Every string that comes from a model endpoint (error messages, reply text, tool arguments) is
hostile: it is cleaned and shortened before it goes into a user-facing message, and it is never
logged — logs carry kinds, statuses and sizes only.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import logging
import os
import re
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mooring.core.chat import ProviderConfig, ProviderError, ProviderFailure, StopReason

if TYPE_CHECKING:
    import ssl

    import httpx2

log = logging.getLogger("mooring.providers")

T = TypeVar("T")

NO_KEY = "none"
"""Sent as the key when none is configured: local servers (Ollama, LM Studio) ignore it."""


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """Timeouts and retry limits of every provider (Mooring controls retries; the SDKs' own
    retries are off)."""

    connect_timeout: float = 10.0
    read_timeout: float = 180.0
    """Longest silence between two pieces of a reply (a local model may load first)."""
    write_timeout: float = 30.0
    max_retry_after: float = 60.0
    """A 429 asking to wait longer than this is reported at once instead of waited for."""
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep)
    """How to wait for ``retry-after`` (tests pass a recorder)."""

    def timeout(self) -> httpx2.Timeout:
        """The SDK clients' timeouts."""
        import httpx2  # with the SDKs, not at start-up

        return httpx2.Timeout(
            connect=self.connect_timeout,
            read=self.read_timeout,
            write=self.write_timeout,
            pool=self.connect_timeout,
        )


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The verifying TLS context every provider client shares (the environment's CA settings
    honoured, as the SDKs' own default). Building one loads the CA bundle, ~25 ms: once per
    process, not on every model call (each call builds its client)."""
    import httpx2

    return httpx2.create_ssl_context()


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]+")


def clean(text: object, limit: int = 240) -> str:
    """A hostile string made safe to show in one line: control and bidi characters removed,
    whitespace collapsed, at most ``limit`` characters."""
    flat = " ".join(_CONTROL.sub(" ", str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def parse_arguments(raw: str) -> tuple[dict[str, Any], str]:
    """Tool-call arguments as an object, and why not when they are not one ("" when fine).

    An empty text is an empty object (models send "" for tools without parameters).
    """
    if not raw.strip():
        return {}, ""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else "unreadable"
        return {}, f"the arguments are not valid JSON ({detail})"
    if not isinstance(value, dict):
        return {}, "the arguments are not a JSON object"
    return value, ""


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_NO_TOOLS = (
    "does not support tools",
    "does not support tool",
    "tools is not supported",
    "tools are not supported",
    "tool use is not supported",
    "tool calling is not supported",
    "function calling is not supported",
    "does not support function calling",
    "tool_use is not supported",
    "--jinja",  # llama.cpp: "tools param requires --jinja flag"
)
_TOO_LONG = (
    "context_length_exceeded",
    "prompt is too long",
    "maximum context length",
    "context length",
    "context window",
    "too many tokens",
    "input is too long",
    "request_too_large",
)


@dataclass(frozen=True, slots=True)
class StatusFailure:
    """An HTTP error answer from an endpoint, in SDK-neutral terms."""

    status: int
    message: str
    code: str | None = None
    error_type: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


def classify_status(config: ProviderConfig, failure: StatusFailure) -> ProviderError:
    """A user-readable :class:`ProviderError` for an HTTP error answer."""
    where = f"The model endpoint {config.name!r}"
    status = failure.status
    said = " ".join(
        part.lower() for part in (failure.message, failure.code or "", failure.error_type or "")
    )
    detail = clean(failure.message)
    if status in (400, 404, 422, 500, 501) and any(text in said for text in _NO_TOOLS):
        return ProviderError(
            ProviderFailure.NO_TOOL_SUPPORT,
            f"The model {config.model!r} at {config.name!r} cannot call tools. Choose a model "
            "that supports tool calling, or chat without tools.",
            status=status,
        )
    if status in (400, 413, 422) and any(text in said for text in _TOO_LONG):
        return ProviderError(
            ProviderFailure.CONTEXT_TOO_LONG,
            f"The conversation is too long for {config.model!r}. Start a new conversation "
            "or choose a model with a larger context.",
            status=status,
        )
    if status in (401, 403):
        why = "refused the API key" if status == 401 else "denied access with this API key"
        # What to do about it is each face's to say (core.chat.failure_remedy): only the
        # facts here.
        if config.api_key_env:
            variable = config.api_key_env
            known = (
                f" Its key is read from ${variable}, which is not set where Mooring runs."
                if not os.environ.get(variable, "").strip()
                else f" Its key is read from ${variable}."
            )
        elif not config.has_api_key:
            known = " No API key is configured for it."
        else:
            known = ""
        return ProviderError(
            ProviderFailure.AUTH, f"{where} {why} (HTTP {status}).{known}", status=status
        )
    model_missing = "model_not_found" in said or (
        "model" in said and ("not found" in said or "does not exist" in said)
    )
    if status == 404 or (status in (400, 422) and model_missing):
        return ProviderError(
            ProviderFailure.MODEL_NOT_FOUND,
            f"{where} has no model {config.model!r} (HTTP {status}). Check the model name "
            f"and the base URL {clean(config.base_url, 120)}.",
            status=status,
        )
    if status == 429:
        wait = retry_after(failure.headers)
        if "quota" in said:
            return ProviderError(
                ProviderFailure.RATE_LIMITED,
                f"{where} says this account is out of quota (HTTP 429). Check the plan or "
                "billing of the key.",
                status=status,
            )
        when = f" It asked to wait {wait:.0f} s." if wait is not None else ""
        return ProviderError(
            ProviderFailure.RATE_LIMITED,
            f"{where} is rate limiting requests (HTTP 429).{when} Try again in a moment.",
            retry_after=wait,
            status=status,
        )
    if status >= 500 or status == 408:
        return ProviderError(
            ProviderFailure.SERVER_ERROR,
            f"{where} had a problem (HTTP {status}): {detail}. Try again later.",
            status=status,
        )
    return ProviderError(
        ProviderFailure.BAD_REQUEST,
        f"{where} rejected the request (HTTP {status}): {detail}",
        status=status,
    )


def classify_transport(config: ProviderConfig, exc: BaseException) -> ProviderError:
    """An endpoint that could not be reached or did not answer in time."""
    import httpx2

    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    where = clean(config.base_url, 120)
    if any(isinstance(e, httpx2.TimeoutException | TimeoutError) for e in chain):
        return ProviderError(
            ProviderFailure.UNREACHABLE,
            f"The model endpoint {config.name!r} ({where}) did not answer in time. Check that "
            "it is running and reachable.",
        )
    texts = " ".join(str(e).lower() for e in chain)
    if any(isinstance(e, socket.gaierror) for e in chain) or "name or service not known" in texts:
        why = "its host name could not be resolved"
    elif any(isinstance(e, ConnectionRefusedError) for e in chain) or "refused" in texts:
        why = "the connection was refused"
    else:
        why = "the connection failed"
    return ProviderError(
        ProviderFailure.UNREACHABLE,
        f"Cannot reach the model endpoint {config.name!r} at {where}: {why}. Check that it is "
        "running and that the base URL is right.",
    )


def broken(config: ProviderConfig, partial: str, why: str = "") -> ProviderError:
    """A reply that stopped halfway; what arrived is kept in ``partial_text``."""
    reason = f": {why}" if why else ""
    return ProviderError(
        ProviderFailure.STREAM_BROKEN,
        f"The reply from {config.name!r} stopped halfway{reason}. What arrived is kept.",
        partial_text=partial,
    )


def broken_stream(
    config: ProviderConfig,
    options: ProviderOptions,
    text: list[str],
    exc: BaseException,
    why: str,
    *,
    timeouts: tuple[type[BaseException], ...],
) -> ProviderError:
    """A stream that ended early because of ``exc``: logged by size only, classified (a read
    timeout says how long nothing arrived), what arrived kept."""
    log.info(
        "provider %s: stream broke after %d characters (%s)",
        config.id,
        sum(len(t) for t in text),
        type(exc).__name__,
    )
    if isinstance(exc, timeouts):
        why = f"nothing arrived for {options.read_timeout:.0f} s"
    return broken(config, "".join(text), why)


async def list_model_ids(
    config: ProviderConfig,
    options: ProviderOptions,
    secrets: tuple[str, ...],
    fetch: Callable[[], Awaitable[list[str]]],
    classify: Callable[[BaseException], ProviderError | None],
) -> list[str]:
    """The endpoint's model ids (one retry after a 429); empty when it has no list (404)."""
    try:
        return await with_one_retry(config, options, fetch, classify)
    except ProviderError as exc:
        if exc.status == 404:
            return []
        raise redact(exc, secrets) from None


async def with_one_retry(
    config: ProviderConfig,
    options: ProviderOptions,
    attempt: Callable[[], Awaitable[T]],
    classify: Callable[[BaseException], ProviderError | None],
) -> T:
    """Run ``attempt``; on a 429 that says when to come back, wait that long once and retry.

    Any failure comes out classified; a second 429 is reported with its ``retry_after``.
    """
    try:
        return await attempt()
    except Exception as exc:
        error = classify(exc)
        if error is None:
            raise
    if (
        error.kind is not ProviderFailure.RATE_LIMITED
        or error.retry_after is None
        or error.retry_after > options.max_retry_after
    ):
        raise error
    log.info("provider %s rate limited: retrying once after %.1f s", config.id, error.retry_after)
    await options.sleep(error.retry_after)
    try:
        return await attempt()
    except Exception as exc:
        again = classify(exc)
        if again is None:
            raise
        again.waited = True
        raise again from None


STOP_REASONS = {
    "stop": StopReason.END,
    "end_turn": StopReason.END,
    "stop_sequence": StopReason.END,
    "tool_calls": StopReason.TOOL_CALLS,
    "function_call": StopReason.TOOL_CALLS,
    "tool_use": StopReason.TOOL_CALLS,
    "length": StopReason.MAX_TOKENS,
    "max_tokens": StopReason.MAX_TOKENS,
}


def stop_reason(value: str | None) -> StopReason:
    """The neutral stop reason for a wire's ``finish_reason`` / ``stop_reason``."""
    return STOP_REASONS.get(value or "", StopReason.OTHER)


def redact(error: ProviderError, secrets: tuple[str, ...]) -> ProviderError:
    """The same failure with any of ``secrets`` (an endpoint may echo the key) masked."""
    message = error.message
    for secret in secrets:
        if len(secret) >= 4:
            message = message.replace(secret, "[redacted]")
    if message == error.message:
        return error
    return ProviderError(
        error.kind,
        message,
        retry_after=error.retry_after,
        partial_text=error.partial_text,
        status=error.status,
    )
