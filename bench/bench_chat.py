"""Time to the first streamed token: through Mooring's chat service versus the provider alone.

The same provider answers both: consumed directly, and through ``ChatService.send`` (which
first stores the user's message, lists the tools and reads the conversation back). Prints both
medians and their ratio. ``make_provider`` is the seam for the provider SDKs: once the
adapters exist, pass one built on a scripted OpenAI/Anthropic endpoint on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from mooring.bootstrap import build_host
from mooring.core.chat import (
    ChatProvider,
    ChatRequest,
    ChatTurnMessage,
    ProviderConfig,
    ProviderFactory,
    ProviderKind,
    ReplyDone,
    ReplyEvent,
    TextDelta,
)
from mooring.core.conversation import Role
from mooring.core.events import Event, ReplyDidStream
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database

TURNS = 200
CONFIG = ProviderConfig(
    id="bench", name="bench", kind=ProviderKind.OPENAI, base_url="http://127.0.0.1:9", model="m"
)


class _InstantProvider:
    """Streams a short reply with no network at all (the floor of any real provider)."""

    async def stream(self, request: ChatRequest) -> AsyncIterator[ReplyEvent]:
        for word in ("Hello", " there", "."):
            yield TextDelta(word)
        yield ReplyDone(text="Hello there.")

    async def list_models(self) -> list[str]:
        return [CONFIG.model]

    async def aclose(self) -> None:
        return None


async def _direct(make_provider: ProviderFactory) -> list[float]:
    times = []
    request = ChatRequest(
        model=CONFIG.model, messages=(ChatTurnMessage(role=Role.USER, content="hi"),)
    )
    for _ in range(TURNS):
        provider = make_provider(CONFIG)
        start = time.perf_counter()
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                times.append(time.perf_counter() - start)
                break
        await provider.aclose()
    return times


async def _through_mooring(root: Path, make_provider: ProviderFactory) -> list[float]:
    paths = Paths(data_dir=root, config_dir=root / "config", log_dir=root / "logs")
    db = Database.open(root / "mooring.sqlite3")

    async def resolve(_key: str | None) -> ProviderConfig:
        return CONFIG

    host = build_host(paths, Settings({}), db, models=(resolve, make_provider))
    chat = host.chat
    assert chat is not None
    conversation = await chat.create()
    times: list[float] = []
    first: list[float] = []

    def on_event(event: Event) -> None:
        if isinstance(event, ReplyDidStream) and not first:
            first.append(time.perf_counter())

    host.events.subscribe(on_event)
    try:
        for _ in range(TURNS):
            first.clear()
            start = time.perf_counter()
            await chat.send(conversation.id, "hi")
            times.append(first[0] - start)
    finally:
        await host.stop()
        db.close()
    return times


def main(make_provider: ProviderFactory | None = None) -> None:
    """Measure both paths and print the ratio of their medians."""

    def instant(config: ProviderConfig) -> ChatProvider:
        return _InstantProvider()

    factory = make_provider or instant
    with tempfile.TemporaryDirectory() as tmp:
        direct = asyncio.run(_direct(factory))
        through = asyncio.run(_through_mooring(Path(tmp), factory))
    d, m = statistics.median(direct), statistics.median(through)
    print(f"first token: provider alone {d * 1e3:.3f} ms, through Mooring {m * 1e3:.3f} ms")
    print(f"ratio Mooring/alone: {m / d:.1f}x over {TURNS} turns (median)")


if __name__ == "__main__":
    main()
