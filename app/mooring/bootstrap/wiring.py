"""One host over one database: the concrete stores, the lazily loaded MCP gateway, the model
providers and the sign-in port, each built first and passed in (the window's engine, the
engine, a command's own host and the service tests share this)."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mooring.adapters import launcher
from mooring.bootstrap.starting import log
from mooring.settings.paths import Paths
from mooring.settings.store import Settings

if TYPE_CHECKING:
    from mooring.core.chat import ProviderFactory
    from mooring.core.faces import Askers, AskUser
    from mooring.core.ports import Gateway, HttpSessions, SecretStore
    from mooring.core.servers import ServerDefinition
    from mooring.mcp.lazy import LazyGateway
    from mooring.mcp.oauth import OAuthProviders
    from mooring.mcp.transport import TransportOpener
    from mooring.services.chat import ProviderResolver
    from mooring.services.host import Host, HostConfig
    from mooring.services.sampling import InputBroker
    from mooring.storage.db import Database


def demo_server_command(paths: Paths) -> tuple[str, tuple[str, ...]]:
    """How to start the bundled demo server (with this Python, or through this bundle's own
    executable when frozen), on a store in the data folder."""
    return launcher.demo_server_command(paths.demo_store)


@dataclass(frozen=True, slots=True)
class Wiring:
    """A wired host, its gateway and the OAuth providers behind it (for sign-in actions)."""

    host: Host
    gateway: LazyGateway
    """The host's gateway (the real one, and the MCP SDK, load on first use)."""
    oauth: LazyOAuth
    """The OAuth providers (loads the MCP SDK on first use)."""


class ServerSecrets:
    """A server's headers and environment as its connection sends them: the values kept as
    secrets read from the keyring, the variables named read from this process's environment
    (the engine's)."""

    def __init__(self, secrets: SecretStore) -> None:
        self._secrets = secrets

    def headers_for(self, server: ServerDefinition, _profile_id: str | None) -> dict[str, str]:
        """The server's HTTP headers, secret values from the keyring; an empty one is left out."""
        from mooring.services.host import HEADER_SCOPE

        found: dict[str, str] = {}
        for name, value in server.headers.items():
            secret = self._secrets.get(HEADER_SCOPE, f"{server.id}:{name}") or value
            if secret:
                found[name] = secret
            else:  # never send an empty secret: the server's own refusal says the rest
                log.warning(
                    "%s: header %s has no value in the keyring; not sent", server.alias, name
                )
        return found

    def env_for(self, server: ServerDefinition) -> dict[str, str]:
        """The stdio server's environment values, secret ones from the keyring."""
        from mooring.services.host import ENV_SCOPE

        # Environment values kept as secrets (imported API keys) are stored empty; values
        # read from an environment variable are read now, in this process (the engine).
        env = {
            name: value or self._secrets.get(ENV_SCOPE, f"{server.id}:{name}") or ""
            for name, value in server.env.items()
        }
        for name, variable in server.env_refs.items():
            value = os.environ.get(variable)
            if value is None:
                log.warning(
                    "%s: $%s is not set here; %s is not passed", server.alias, variable, name
                )
                continue
            env[name] = value
        return env


class LazyOAuth:
    """The gateway's OAuth providers, built on first call (which loads the MCP SDK): the
    gateway's connections and the sign-in port share the one instance."""

    def __init__(self, secrets: SecretStore, credentials: ServerSecrets) -> None:
        self._secrets = secrets
        self._credentials = credentials
        self._providers: OAuthProviders | None = None

    def __call__(self) -> OAuthProviders:
        if self._providers is None:
            from mooring.mcp.oauth import OAuthProviders

            # Polling and reconciliation never open a browser: sign-in is an explicit action
            # (`mooring accounts login`); until then such tasks show "sign-in needed".
            self._providers = OAuthProviders(
                self._secrets, sign_in=None, headers_for=self._credentials.headers_for
            )
        return self._providers


def _mcp_gateway(
    paths: Paths,
    settings: Settings,
    credentials: ServerSecrets,
    oauth: LazyOAuth,
    inputs: InputBroker,
    open_transport: TransportOpener | None,
    http_sessions: HttpSessions,
) -> Gateway:
    """The real gateway (``LazyGateway``'s factory: called once the SDK is needed)."""
    from mooring.mcp.connection import ConnectionSettings, parse_call_limits
    from mooring.mcp.gateway import McpGateway

    return McpGateway(
        auth_for=oauth(),
        settings=ConnectionSettings(
            request_timeout=int(settings.get("mcp.request_timeout_ms")) / 1000,
            call_timeout=int(settings.get("mcp.call_timeout_ms")) / 1000,
            call_idle_timeout=int(settings.get("mcp.call_idle_timeout_ms")) / 1000,
            server_call_limits=parse_call_limits(
                str(settings.get("mcp.server_call_limits")),
                idle_default=int(settings.get("mcp.call_idle_timeout_ms")) / 1000,
                max_default=int(settings.get("mcp.call_timeout_ms")) / 1000,
            ),
            stderr_dir=paths.log_dir / "servers",
        ),
        headers_for=credentials.headers_for,
        input_handler=inputs.handle,
        env_for=credentials.env_for,
        open_transport=open_transport,
        http_sessions=http_sessions,
    )


def _host_config(paths: Paths, settings: Settings) -> HostConfig:
    from mooring.core.tasks.polling import PollPolicy
    from mooring.services.host import HostConfig

    max_ms = int(settings.get("polling.max_interval_ms"))
    covered_ms = int(settings.get("polling.covered_interval_ms"))
    return HostConfig(
        poll_policy=PollPolicy(
            max_interval_ms=max(max_ms, PollPolicy().default_interval_ms),
            covered_interval_ms=max(covered_ms, PollPolicy().min_interval_ms),
        ),
        per_server=int(settings.get("polling.per_server_concurrency")),
        max_argument_bytes=int(settings.get("approval.max_argument_bytes")),
        capture_content=bool(settings.get("telemetry.capture_content")),
        demo_server=demo_server_command(paths) if settings.get("demo_server.enabled") else None,
    )


def build_host(
    paths: Paths,
    settings: Settings,
    db: Database,
    *,
    ask: AskUser | None = None,
    models: tuple[ProviderResolver | None, ProviderFactory] | None = None,
    open_transport: TransportOpener | None = None,
) -> Host:
    """Wire one host over one database (the GUI, the CLI and the service tests share this).

    ``ask`` is the face's approval prompt (a terminal question, a dialog); without one, a call
    that needs approval is refused, never sent. ``open_transport`` replaces the real MCP
    transports (the in-process test tier serves servers over memory streams).
    """
    from mooring.core.faces import Askers

    askers = Askers(approval=ask)
    wired = wire(paths, settings, db, askers=askers, models=models, open_transport=open_transport)
    return wired.host


def wire(
    paths: Paths,
    settings: Settings,
    db: Database,
    *,
    askers: Askers | None = None,
    models: tuple[ProviderResolver | None, ProviderFactory] | None = None,
    open_transport: TransportOpener | None = None,
) -> Wiring:
    """:func:`build_host`, also handing out the gateway and the OAuth providers.

    ``askers`` are the face's questions (approvals, servers' sampling and form requests: a
    command's terminal); ``None`` asks nobody (the engine asks the face whose call it is).
    ``models`` replaces how the chat finds (``None``: in the provider book, as the product
    does) and builds its model provider (tests and benchmarks give a scripted model here; the
    product reads the provider book and the keyring)."""
    from mooring.adapters.preview import preview_arguments
    from mooring.adapters.process import current_owner, owner_alive
    from mooring.adapters.providers.common import ProviderOptions
    from mooring.adapters.providers.factory import SdkProviderFactory
    from mooring.adapters.providers.local import LocalModelRuntime
    from mooring.adapters.secrets import KeyringSecrets
    from mooring.adapters.server_configs import LocalConfigFiles
    from mooring.core.clock import SystemClock
    from mooring.core.faces import NOBODY
    from mooring.mcp.lazy import LazyGateway
    from mooring.mcp.sign_in import OAuthSignIn
    from mooring.services.host import Host
    from mooring.services.sampling import InputBroker
    from mooring.storage.assistants import SqlAssistants
    from mooring.storage.conversations import SqlConversations
    from mooring.storage.http_sessions import SqlHttpSessions
    from mooring.storage.providers import SqlProviderBook
    from mooring.storage.store import SqlStore

    clock = SystemClock()
    store = SqlStore(db, clock)
    secrets = KeyringSecrets()
    credentials = ServerSecrets(secrets)
    oauth = LazyOAuth(secrets, credentials)
    askers = askers if askers is not None else NOBODY
    inputs = InputBroker(rules=store.rules, clock=clock, askers=askers)
    gateway = LazyGateway(
        functools.partial(
            _mcp_gateway,
            paths,
            settings,
            credentials,
            oauth,
            inputs,
            open_transport,
            SqlHttpSessions(db, clock),
        ),
        # anyio's asyncio backend last: anyio loads it on its first primitive (~70 ms), which
        # would otherwise be on the event loop's thread, in the window the one that paints.
        modules=(
            "mooring.mcp.connection",
            "mooring.mcp.gateway",
            "mooring.mcp.oauth",
            "anyio._backends._asyncio",
        ),
    )
    # Model providers: configurations in SQLite, secrets only in the keyring; the SDKs load
    # only when a provider is first built.
    provider_factory = SdkProviderFactory(
        secrets,
        ProviderOptions(
            connect_timeout=int(settings.get("providers.connect_timeout_ms")) / 1000,
            read_timeout=int(settings.get("providers.read_timeout_ms")) / 1000,
        ),
        local=LocalModelRuntime(
            idle_stop_s=int(settings.get("local_models.idle_stop_s")),
            context_tokens=int(settings.get("local_models.context_tokens")),
            threads=int(settings.get("local_models.threads")),
            log_file=paths.log_dir / "local-model.log",
        ),
    )
    host = Host(
        catalog=store,
        ledger=store,
        issues=store,
        rules=store.rules,
        accounts=store,
        secrets=secrets,
        gateway=gateway,
        clock=clock,
        config=_host_config(paths, settings),
        ask=askers.approval,
        preview=preview_arguments,
        owner=current_owner(),
        owner_alive=owner_alive,
        providers=SqlProviderBook(db, clock),
        provider_factory=models[1] if models else provider_factory,
        resolve_provider=models[0] if models else None,
        conversations=SqlConversations(db, clock),
        assistants=SqlAssistants(db),
        auto_continue=bool(settings.get("chat.continue_automatically")),
        instructions=lambda: str(settings.get("chat.system_prompt")),
        inputs=inputs,
        config_files=LocalConfigFiles(),
        sign_in=OAuthSignIn(oauth),
    )
    return Wiring(host, gateway, oauth)
