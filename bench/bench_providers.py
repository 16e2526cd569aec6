"""Time to the first streamed token: Mooring's provider adapter versus the SDK alone.

Both go to the same scripted endpoint on 127.0.0.1 (``tests/helpers/model_endpoints``), over
both wires, alternating so drift hits both sides alike; ids ``first_token_adapter_openai`` and
``first_token_adapter_anthropic``.
The harness takes any "start a reply and yield its text" function, so the chat engine can be
measured through it the same way (``first_token_times``).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
from tests.helpers.model_endpoints import ModelEndpoint, Text

from bench.suite import Result, Size, measured
from mooring.adapters.providers.common import ProviderOptions
from mooring.adapters.providers.factory import SdkProviderFactory
from mooring.core.chat import (
    ChatRequest,
    ChatTurnMessage,
    ProviderConfig,
    ProviderKind,
    TextDelta,
)
from mooring.core.conversation import Role

IDS = ("first_token_adapter_openai", "first_token_adapter_anthropic")
REPLY = "The import finished: 40 suppliers added, 2 skipped (duplicate VAT ids). " * 4

TextStream = Callable[[], AsyncIterator[str]]
"""Starts one reply and yields its text pieces as they stream."""


class _NoSecrets:
    def get(self, scope: str, name: str) -> str | None:
        return "sk-bench" if name.endswith(":api_key") else None

    def set(self, scope: str, name: str, value: str) -> None:
        return None

    def delete(self, scope: str, name: str) -> None:
        return None

    @property
    def durable(self) -> bool:
        return True


async def first_token_time(stream: TextStream) -> float:
    """Seconds from starting a reply to its first non-empty text piece (the rest is drained)."""
    start = time.perf_counter()
    first: float | None = None
    async for piece in stream():
        if piece and first is None:
            first = time.perf_counter() - start
    assert first is not None, "the reply had no text"
    return first


async def first_token_times(sides: dict[str, TextStream], rounds: int) -> dict[str, list[float]]:
    """Alternate the sides ``rounds`` times (after one warm-up each); every side's timings."""
    for stream in sides.values():
        await first_token_time(stream)
    times: dict[str, list[float]] = {label: [] for label in sides}
    for _ in range(rounds):
        for label, stream in sides.items():
            times[label].append(await first_token_time(stream))
    return times


def _request() -> ChatRequest:
    return ChatRequest(
        model="model-small",
        messages=(ChatTurnMessage(role=Role.USER, content="How did the import go?"),),
        max_tokens=256,
    )


def _sides(kind: ProviderKind, endpoint: ModelEndpoint) -> tuple[dict[str, TextStream], Any]:
    base_url = endpoint.openai_url if kind is ProviderKind.OPENAI else endpoint.anthropic_url
    config = ProviderConfig(
        id="bench",
        name="bench",
        kind=kind,
        base_url=base_url,
        model="model-small",
        has_api_key=True,
    )
    provider = SdkProviderFactory(_NoSecrets(), ProviderOptions())(config)

    async def through_mooring() -> AsyncIterator[str]:
        async for event in provider.stream(_request()):
            if isinstance(event, TextDelta):
                yield event.text

    if kind is ProviderKind.OPENAI:
        client: Any = openai.AsyncOpenAI(api_key="sk-bench", base_url=base_url, max_retries=0)

        async def sdk_alone() -> AsyncIterator[str]:
            stream = await client.chat.completions.create(
                model="model-small",
                messages=[{"role": "user", "content": "How did the import go?"}],
                max_tokens=256,
                stream=True,
            )
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content

    else:
        client = anthropic.AsyncAnthropic(
            api_key="sk-bench",
            base_url=base_url,
            max_retries=0,
            open_telemetry={"traces": False, "propagation": False},
        )

        async def sdk_alone() -> AsyncIterator[str]:
            stream = await client.messages.create(
                model="model-small",
                messages=[{"role": "user", "content": "How did the import go?"}],
                max_tokens=256,
                stream=True,
            )
            async for event in stream:
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    yield event.delta.text

    async def close() -> None:
        await provider.aclose()
        await client.close()

    return {"sdk": sdk_alone, "mooring": through_mooring}, close


async def _run(kind: ProviderKind, rounds: int) -> dict[str, list[float]]:
    with ModelEndpoint.running() as endpoint:
        endpoint.script(*(Text(REPLY, chunk=8) for _ in range(2 * rounds + 2)))
        sides, close = _sides(kind, endpoint)
        try:
            return await first_token_times(sides, rounds)
        finally:
            await close()


def run(size: Size, folder: Path, wanted: Callable[[str], bool]) -> list[Result]:
    """First-token medians of the provider adapter alone versus the SDK alone, both wires (the
    chat engine's whole path is ``first_token``; this isolates the adapter's share)."""
    results = []
    for kind in (ProviderKind.OPENAI, ProviderKind.ANTHROPIC):
        id_ = f"first_token_adapter_{kind.value}"
        if not wanted(id_):
            continue
        times = asyncio.run(_run(kind, size.chat_rounds))
        sdk, ours = statistics.median(times["sdk"]), statistics.median(times["mooring"])
        results.append(
            measured(
                id_,
                f"first streamed token through Mooring's {kind.value} provider adapter alone",
                value=ours * 1e3,
                baseline=sdk * 1e3,
                unit="ms",
                target="<= 1.2x",
                met=ours / sdk <= 1.2,
            )
        )
    return results
