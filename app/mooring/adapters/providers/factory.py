"""Building a provider from its stored configuration and its secrets in the keyring."""

from __future__ import annotations

import logging
import os

from mooring.adapters.providers.common import ProviderOptions
from mooring.adapters.providers.local import LocalChatProvider, LocalModelRuntime
from mooring.core.chat import (
    PROVIDER_SECRET_SCOPE,
    ChatProvider,
    ProviderConfig,
    ProviderKind,
)
from mooring.core.ports import SecretStore
from mooring.core.providers import api_key_name, header_name

log = logging.getLogger("mooring.providers")


class SdkProviderFactory:
    """``ProviderFactory`` on the official SDKs.

    Calling it reads the API key and header values from the keyring (blocking: from async code
    call it through ``asyncio.to_thread``) and builds the client; the SDK is imported then.
    """

    def __init__(
        self,
        secrets: SecretStore,
        options: ProviderOptions | None = None,
        *,
        local: LocalModelRuntime | None = None,
    ) -> None:
        self._secrets = secrets
        self.options = options or ProviderOptions()
        self.local = local or LocalModelRuntime()
        """Runs the ``local`` providers' models (one process per model file, on first use)."""

    async def aclose(self) -> None:
        """Stop the local models' processes (the host is stopping)."""
        await self.local.aclose()

    def __call__(self, config: ProviderConfig) -> ChatProvider:
        if config.kind is ProviderKind.LOCAL:
            return LocalChatProvider(config, self.local, options=self.options)
        api_key: str | None = None
        if config.api_key_env:
            # Read at each use, in this process's environment (Mooring's engine): no secret
            # is stored anywhere.
            api_key = os.environ.get(config.api_key_env, "").strip() or None
            if api_key is None:
                log.warning(
                    "provider %r: its API key is read from $%s, which is not set here; "
                    "requests go without it",
                    config.name,
                    config.api_key_env,
                )
        elif config.has_api_key:
            api_key = self._secrets.get(PROVIDER_SECRET_SCOPE, api_key_name(config.id))
            if api_key is None:
                log.warning(
                    "provider %r: its API key is not in the keyring (it was kept for one "
                    "session only, or removed); requests go without it",
                    config.name,
                )
        headers: dict[str, str] = {}
        for name in config.header_names:
            value = self._secrets.get(PROVIDER_SECRET_SCOPE, header_name(config.id, name))
            if value is None:
                log.warning("provider %r: header %s has no value in the keyring", config.name, name)
                continue
            headers[name] = value
        if config.kind is ProviderKind.ANTHROPIC:
            from mooring.adapters.providers.anthropic_chat import AnthropicChatProvider

            return AnthropicChatProvider(
                config, api_key=api_key, headers=headers, options=self.options
            )
        from mooring.adapters.providers.openai_chat import OpenAIChatProvider

        return OpenAIChatProvider(config, api_key=api_key, headers=headers, options=self.options)
