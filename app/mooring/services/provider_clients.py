"""The model provider clients the chat keeps between turns: one per provider configuration,
reused turn after turn (one connection pool per provider, as a script keeps its SDK client),
replaced after a call that did not end cleanly."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from mooring.core.chat import ChatProvider, ProviderConfig, ProviderFactory


@dataclass(slots=True)
class KeptClient:
    """A provider client kept for its configuration, and the turns using it now."""

    provider: ChatProvider
    users: int = 0
    retired: bool = False


class ProviderClients:
    """Builds, lends and closes the chat's provider clients."""

    def __init__(self, factory: ProviderFactory) -> None:
        self._factory = factory
        self._clients: dict[ProviderConfig, KeptClient] = {}
        self._retired: list[KeptClient] = []

    async def acquire(self, config: ProviderConfig) -> KeptClient:
        """The client kept for this configuration (built on first use), lent to one more
        turn until :meth:`release`."""
        client = self._clients.get(config)
        if client is None:
            # Building one reads the keyring, which may block (D-Bus): off the loop.
            provider = await asyncio.to_thread(self._factory, config)
            client = self._clients.get(config)
            if client is None:
                client = self._clients[config] = KeptClient(provider)
            else:  # another turn built one meanwhile
                await close_provider(provider)
        client.users += 1
        return client

    async def release(self, config: ProviderConfig, client: KeptClient, *, keep: bool) -> None:
        """A turn is done with ``client``. One whose call did not end cleanly (a failure, a
        stop) is not reused: the next call builds a fresh one, reading the keyring again."""
        client.users -= 1
        if not keep and not client.retired:
            client.retired = True
            if self._clients.get(config) is client:
                del self._clients[config]
            self._retired.append(client)
        if client.retired and client.users == 0:
            with contextlib.suppress(ValueError):
                self._retired.remove(client)
            await close_provider(client.provider)

    async def aclose(self) -> None:
        """Close every client kept or still lent (a turn using one has been cancelled)."""
        clients = [*self._clients.values(), *self._retired]
        self._clients.clear()
        self._retired.clear()
        for client in clients:
            await close_provider(client.provider)


async def close_provider(provider: ChatProvider) -> None:
    """Close a provider client; a failure to close is not the caller's problem."""
    with contextlib.suppress(Exception):
        await provider.aclose()
