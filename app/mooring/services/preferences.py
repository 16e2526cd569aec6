"""The user's preferences as use cases every face shares: model providers, approval rules and
the declared settings (the CLI's ``providers``, ``rules`` and ``settings`` commands and the
window's Settings view call these; neither re-implements them).

Secrets (API keys, header values) go to the keyring and nowhere else; a setting is typed by its
declaration before it is stored; nothing here raises for what the user typed except
:class:`~mooring.core.errors.KnownError` with words to show.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace

from mooring.core.approval.rules import ApprovalRule, Decision, Scope
from mooring.core.chat import (
    PROVIDER_SECRET_SCOPE,
    ChatProvider,
    ChatRequest,
    ChatTurnMessage,
    ProviderConfig,
    ProviderError,
    ProviderFactory,
    ProviderFailure,
    ProviderKind,
    ToolOffer,
    failure_remedy,
)
from mooring.core.clock import Clock
from mooring.core.conversation import Role
from mooring.core.errors import KnownError, Remedy
from mooring.core.ids import new_id
from mooring.core.ports import ProviderBook, RuleBook, SecretStore, ServerCatalog
from mooring.core.providers import (
    KeySource,
    ProviderAdded,
    ProviderDraft,
    ProviderView,
    Verdict,
    api_key_name,
    check_env_name,
    header_name,
    local_model_name,
    provider_base_url,
)
from mooring.core.servers import ServerDefinition
from mooring.core.views import RuleView

# -- model providers ---------------------------------------------------------------------------


PING = ToolOffer(
    name="mooring_connection_check",
    description="Checks the connection. Do not call it unless asked to.",
    input_schema={"type": "object", "properties": {}},
)


async def check_provider(config: ProviderConfig, provider: ChatProvider) -> Verdict:
    """List the models, then make one tiny streamed request offering one tool."""
    verdict = Verdict()
    try:
        listed = await provider.list_models()
    except ProviderError as exc:
        if exc.kind is ProviderFailure.UNREACHABLE:
            verdict.reachable = False
            verdict.problems.append(exc.message)
            return verdict
        verdict.reachable = True
        if exc.kind is ProviderFailure.AUTH:
            verdict.key_accepted = False
            verdict.problems.append(exc.message)
            verdict.remedy = failure_remedy(exc.kind)
            return verdict
    else:
        verdict.reachable = verdict.key_accepted = True
        if listed:
            verdict.model_found = config.model in listed
    request = ChatRequest(
        model=config.model,
        messages=(ChatTurnMessage(role=Role.USER, content="Reply with the single word OK."),),
        tools=(PING,),
        max_tokens=16,
    )
    try:
        async for _event in provider.stream(request):
            pass  # the reply's words do not matter: that it arrived does
    except ProviderError as exc:
        kind = exc.kind
        if kind is ProviderFailure.UNREACHABLE:
            verdict.reachable = False
        elif kind is ProviderFailure.AUTH:
            verdict.key_accepted = False
        elif kind is ProviderFailure.MODEL_NOT_FOUND:
            verdict.model_found = False
        elif kind is ProviderFailure.NO_TOOL_SUPPORT:
            verdict.key_accepted = verdict.key_accepted is not False
            verdict.model_found = True
            verdict.tools_supported = False
        verdict.problems.append(exc.message)
        verdict.remedy = verdict.remedy or failure_remedy(exc.kind)
        return verdict
    verdict.reachable = verdict.key_accepted = verdict.model_found = True
    verdict.tools_supported = True
    return verdict


def _model_name(draft: ProviderDraft, base_url: str) -> str:
    """The model to ask for: as given; a local model's file name when none is given."""
    model = draft.model.strip()
    if not model and draft.kind is ProviderKind.LOCAL:
        return local_model_name(base_url)
    if not model:
        raise KnownError("Say which model to use.", code="usage")
    return model


class ProviderDesk:
    """Add, list, test and remove model providers; keys go to the keyring only."""

    def __init__(self, *, book: ProviderBook, factory: ProviderFactory, secrets: SecretStore):
        self.book = book
        self._factory = factory
        self._secrets = secrets

    async def providers(self) -> list[ProviderView]:
        """Every provider, the default marked, with where its key comes from now."""
        configs = await self.book.list_providers()
        default = await self.book.default_provider()
        sources = await asyncio.to_thread(lambda: [self.key_source(c) for c in configs])
        return [
            ProviderView(c, default is not None and c.id == default.id, source)
            for c, source in zip(configs, sources, strict=True)
        ]

    def key_source(self, config: ProviderConfig) -> KeySource:
        """Where the key of ``config`` comes from now (blocking: it may read the keyring)."""
        if config.api_key_env:
            return (
                KeySource.ENV
                if os.environ.get(config.api_key_env, "").strip()
                else (KeySource.ENV_UNSET)
            )
        if not config.has_api_key:
            return KeySource.NONE
        if self._secrets.get(PROVIDER_SECRET_SCOPE, api_key_name(config.id)) is None:
            return KeySource.LOST
        return KeySource.KEYRING if self._secrets.durable else KeySource.SESSION

    async def _key_choice(self, draft: ProviderDraft, name: str) -> tuple[str | None, str | None]:
        """The key to store and the variable to read it from (at most one of them)."""
        key = (draft.api_key or "").strip() or None
        variable = (draft.api_key_env or "").strip() or None
        if key is not None and variable is not None:
            raise KnownError(
                "Give either the key or the environment variable to read it from, not both.",
                code="usage",
            )
        if variable is not None:
            variable = check_env_name(variable)
        if key is not None and not draft.keep_for_session:
            durable = await asyncio.to_thread(lambda: self._secrets.durable)
            if not durable:
                raise KnownError(
                    f"No keyring on this machine can keep the API key of {name!r}: it would "
                    "be lost when Mooring stops, and later requests would go without it. "
                    "Nothing was changed.",
                    code="no_keyring",
                    remedy=Remedy.KEY_FROM_ENV,
                    subject=(name,),
                )
        return key, variable

    async def add(self, draft: ProviderDraft) -> ProviderAdded:
        """Store a provider: its secrets in the keyring first, then its configuration (the
        secrets are taken back if that fails). The first provider becomes the default."""
        name = draft.name.strip()
        if not name:
            raise KnownError("A provider needs a name.", code="usage")
        base_url = provider_base_url(draft.kind, draft.base_url)
        model = _model_name(draft, base_url)
        for header in draft.headers:
            if not header or any(c.isspace() or c == ":" for c in header):
                raise KnownError(f"{header!r} is not a header name.", code="usage")
        if await self.book.find_provider(name) is not None:
            raise KnownError(f"A provider called {name!r} exists already.", code="exists")
        key, variable = await self._key_choice(draft, name)
        config = ProviderConfig(
            id=new_id(),
            name=name,
            kind=draft.kind,
            base_url=base_url,
            model=model,
            header_names=tuple(draft.headers),
            has_api_key=key is not None,
            api_key_env=variable,
        )

        def store_secrets() -> None:
            if key is not None:
                self._secrets.set(PROVIDER_SECRET_SCOPE, api_key_name(config.id), key)
            for header, value in draft.headers.items():
                self._secrets.set(PROVIDER_SECRET_SCOPE, header_name(config.id, header), value)

        await asyncio.to_thread(store_secrets)
        try:
            became_default = await self.book.add_provider(config)
        except BaseException:
            await asyncio.to_thread(self._forget_secrets, config)
            raise
        return ProviderAdded(config, became_default, self._secrets.durable)

    async def edit(self, config: ProviderConfig, draft: ProviderDraft) -> ProviderConfig:
        """Store an edited provider: its name, kind, address and model; a new key (to the
        keyring, refused as :meth:`add` refuses it with no keyring), a variable to read it
        from, or neither (the key in the keyring is kept). Its headers are kept."""
        name = draft.name.strip()
        if not name:
            raise KnownError("A provider needs a name.", code="usage")
        base_url = provider_base_url(draft.kind, draft.base_url)
        model = _model_name(draft, base_url)
        key, variable = await self._key_choice(draft, name)
        edited = replace(
            config,
            name=name,
            kind=draft.kind,
            base_url=base_url,
            model=model,
            has_api_key=key is not None or (variable is None and config.has_api_key),
            api_key_env=variable,
        )
        if key is not None:
            await asyncio.to_thread(
                self._secrets.set, PROVIDER_SECRET_SCOPE, api_key_name(config.id), key
            )
        await self.book.update_provider(edited)
        if config.has_api_key and not edited.has_api_key:
            await asyncio.to_thread(
                self._secrets.delete, PROVIDER_SECRET_SCOPE, api_key_name(config.id)
            )
        return edited

    async def find(self, name: str | None) -> ProviderConfig:
        """A provider by name (``None``: the default), or a clear error."""
        if name is None:
            config = await self.book.default_provider()
            if config is None:
                raise KnownError(
                    "No model provider is configured.",
                    code="not_found",
                    remedy=Remedy.ADD_PROVIDER,
                )
            return config
        found = await self.book.find_provider(name)
        if found is None:
            raise KnownError(f"No provider called {name!r}.", code="not_found")
        return found

    async def remove(self, config: ProviderConfig) -> ProviderConfig | None:
        """Remove a provider and its secrets; the default afterwards (if any)."""
        await self.book.remove_provider(config.id)
        await asyncio.to_thread(self._forget_secrets, config)
        return await self.book.default_provider()

    async def set_default(self, config: ProviderConfig) -> None:
        """Make a provider the default for new conversations."""
        await self.book.set_default_provider(config.id)

    async def models(self, config: ProviderConfig) -> list[str]:
        """The models the endpoint lists (may be empty); a failure is a :class:`KnownError`."""
        provider = await self._build(config)
        try:
            return await provider.list_models()
        except ProviderError as exc:
            raise KnownError(
                exc.message,
                code=exc.kind.value,
                remedy=failure_remedy(exc.kind),
                subject=(config.name,),
            ) from None
        finally:
            await provider.aclose()

    async def test(self, config: ProviderConfig) -> Verdict:
        """One tiny request: what works, in plain terms (see :func:`check_provider`)."""
        provider = await self._build(config)
        try:
            return await check_provider(config, provider)
        finally:
            await provider.aclose()

    async def _build(self, config: ProviderConfig) -> ChatProvider:
        # Reading the keyring may block (D-Bus): off the event loop.
        return await asyncio.to_thread(self._factory, config)

    def _forget_secrets(self, config: ProviderConfig) -> None:
        self._secrets.delete(PROVIDER_SECRET_SCOPE, api_key_name(config.id))
        for header in config.header_names:
            self._secrets.delete(PROVIDER_SECRET_SCOPE, header_name(config.id, header))


# -- approval rules ----------------------------------------------------------------------------


class RuleDesk:
    """List, add and remove the user's standing approval decisions."""

    def __init__(self, *, rules: RuleBook, catalog: ServerCatalog, clock: Clock) -> None:
        self._rules = rules
        self._catalog = catalog
        self._clock = clock

    async def rules(self) -> list[RuleView]:
        """Every rule, with its server's name."""
        rules = await self._rules.list_rules()
        servers = {s.identity: s.alias for s in await self._catalog.list_servers()}
        return [RuleView(r, servers.get(r.server_identity)) for r in rules]

    async def servers(self) -> list[ServerDefinition]:
        """The servers a rule can be made for."""
        return await self._catalog.list_servers()

    async def add(
        self, server: ServerDefinition, tool_pattern: str, decision: Decision, scope: Scope
    ) -> ApprovalRule:
        """Add a rule for a server's tools (the pattern may be ``*`` or ``list_*``)."""
        pattern = tool_pattern.strip()
        if not pattern:
            raise KnownError("Say which tool (or a pattern such as * or list_*).", code="usage")
        if scope is Scope.CONVERSATION:
            raise KnownError(
                "Conversation rules are made from a conversation in the app.", code="usage"
            )
        rule = ApprovalRule(
            id=new_id(),
            server_identity=server.identity,
            tool_pattern=pattern,
            decision=decision,
            scope=scope,
            created_at=self._clock.now(),
        )
        await self._rules.add_rule(rule)
        return rule

    async def remove(self, rule_id: str) -> bool:
        """Remove a rule; whether it was there."""
        return await self._rules.remove_rule(rule_id)


# -- declared settings -------------------------------------------------------------------------
