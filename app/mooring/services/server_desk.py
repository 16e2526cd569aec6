"""Setting servers up, as every face does it: adding, editing, importing and removing servers,
their tools and connections (the host's ``server_desk`` part), and their accounts (its
``account_desk`` part).

Secrets (header and environment values, OAuth tokens) go to the keyring only; a removed
server's or account's unfinished tasks become issues at once; each change is told as
``ServersDidChange`` once it is stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mooring.core.clock import Clock
from mooring.core.errors import KnownError
from mooring.core.events import EventBus, ServersDidChange
from mooring.core.ids import new_id
from mooring.core.ports import ConnectionStatus, Gateway, OpenUrl, SecretStore, ServerCatalog
from mooring.core.server_import import ConfigPreview, ImportEntry, ImportOutcome
from mooring.core.server_target import check_target
from mooring.core.servers import CredentialProfile, ServerDefinition, Transport
from mooring.core.tools import ToolInfo
from mooring.core.views import AccountView, ServerSpec, ServerView
from mooring.services.reconciler import Reconciler
from mooring.services.server_setup import (
    ServerReachability,
    ServerSetup,
    no_keyring,
    secret_values_needed,
    server_env,
)
from mooring.services.tool_index import ToolIndex


async def server_called(catalog: ServerCatalog, alias: str) -> ServerDefinition:
    """The configured server called ``alias``, or a clear error (code ``not_found``)."""
    server = await catalog.find_server(alias)
    if server is None:
        raise KnownError(f"No server called {alias!r}.", code="not_found")
    return server


class ServerDesk:
    """Adding, editing, importing and removing servers; their tools and connections."""

    def __init__(
        self,
        *,
        catalog: ServerCatalog,
        secrets: SecretStore,
        gateway: Gateway,
        setup: ServerSetup,
        tools: ToolIndex,
        reachability: ServerReachability,
        reconciler: Reconciler,
        events: EventBus,
        clock: Clock,
    ) -> None:
        self._catalog = catalog
        self._secrets = secrets
        self._gateway = gateway
        self._setup = setup
        self._tools = tools
        self._reachability = reachability
        self._reconciler = reconciler
        self._events = events
        self._clock = clock

    # -- views ---------------------------------------------------------------------------------

    async def servers(self) -> list[ServerView]:
        """Every configured server with its connection state."""
        statuses = {s.server_id: s for s in self._gateway.statuses()}
        return [
            ServerView(server, statuses.get(server.id))
            for server in await self._catalog.list_servers()
        ]

    async def tools(
        self, server: ServerDefinition, *, refresh: bool = False
    ) -> list[ToolInfo] | None:
        """A server's tools from the tool index, read again with ``refresh`` (``None``: it
        cannot be reached now)."""
        return await self._tools.tools(server, refresh=refresh)

    async def connection_status(
        self, server: ServerDefinition, profile_id: str | None = None
    ) -> ConnectionStatus:
        """The state of this host's connection to a server and account (connecting it)."""
        return (await self._gateway.connect(server, profile_id)).status

    # -- actions -------------------------------------------------------------------------------

    async def add(self, spec: ServerSpec) -> ServerDefinition:
        """Add a stdio or Streamable HTTP server; header and environment values go to the
        keyring only (refused, code ``no_keyring``, when no keyring can keep them). A program
        that cannot be found, a missing working folder or a URL without a host is refused
        (code ``usage``), as ``mooring servers add`` refuses it."""
        check_target(spec.url, None if spec.url else spec.command, None if spec.url else spec.cwd)
        if await self._catalog.find_server(spec.alias) is not None:
            raise KnownError(f"A server called {spec.alias!r} exists already.", code="exists")
        env, env_refs = server_env(spec.env, spec.plain_env, spec.env_refs)
        server = ServerDefinition(
            id=new_id(),
            alias=spec.alias,
            transport=Transport.HTTP if spec.url else Transport.STDIO,
            command=spec.command,
            args=spec.args,
            env=env,
            env_refs=env_refs,
            cwd=spec.cwd,
            url=spec.url,
            headers={name: "" for name in spec.headers},
            trusted=spec.trusted,
            allowed_tools=spec.allowed_tools,
            hidden_tools=spec.hidden_tools,
            created_at=self._clock.now(),
        )
        await self._setup.add_definition(server, spec.headers, spec.env)
        self._events.emit(ServersDidChange((server.id,)))
        return server

    async def add_definition(
        self, server: ServerDefinition, header_values: Mapping[str, str]
    ) -> None:
        """Store a server built elsewhere (an import), its header values in the keyring.

        Without a keyring that keeps secrets, a server with header values is refused (code
        ``no_keyring``): the values would be lost when this process ends, and later calls
        would go out without them. Nothing is stored then.
        """
        if secret_values_needed(header_values) and not self._secrets.durable:
            raise no_keyring(header_values)
        await self._setup.add_definition(server, header_values)

    async def update(self, alias: str, spec: ServerSpec) -> ServerDefinition:
        """Edit a server: its name, command or URL, environment, headers, trust and tool lists.

        Header and environment values go to the keyring (an empty value keeps the stored
        one; a name left out is forgotten). A server pointed somewhere else (another command
        or URL) is no longer trusted: trust belongs to what the server is. A new program that
        cannot be found, working folder or URL is refused as :meth:`add` refuses it. Its
        tasks keep pointing at it; its connection is replaced at the next use.
        """
        current = await server_called(self._catalog, alias)
        edited = await self._setup.update(
            current,
            alias=spec.alias,
            command=spec.command,
            args=spec.args,
            env=spec.env,
            cwd=spec.cwd,
            url=spec.url,
            headers=spec.headers,
            trusted=spec.trusted,
            allowed_tools=spec.allowed_tools,
            hidden_tools=spec.hidden_tools,
            plain_env=spec.plain_env,
            env_refs=spec.env_refs,
        )
        if edited.identity != current.identity:
            self._tools.forget(edited.id)
        self._gateway.secrets_changed(edited.id)  # the values may have changed, not the names
        return edited

    async def set_trusted(self, alias: str, trusted: bool) -> ServerDefinition:
        """Trust (or stop trusting) a server: only a trusted server's tool annotations count
        for approvals. Returns the server as it is now."""
        server = await server_called(self._catalog, alias)
        await self._catalog.set_trusted(server.id, trusted)
        self._events.emit(ServersDidChange((server.id,)))
        return await server_called(self._catalog, alias)

    async def set_tool_access(
        self,
        alias: str,
        tool: str,
        *,
        enabled: bool | None = None,
        hidden: bool | None = None,
    ) -> ServerDefinition:
        """Enable or disable one tool (the server's allowed list), hide or show it (hidden:
        the model never sees it and it never runs). Disabling a tool on a server without an
        allowed list starts one with every other known tool; enabling the last one drops the
        list. A tool still matched by a pattern is a clear error. Returns the server now."""
        server = await server_called(self._catalog, alias)
        known = await self._tools.tools(server)
        return await self._setup.set_tool_access(
            server,
            tool,
            enabled=enabled,
            hidden=hidden,
            known_tools=[t.name for t in known or []],
        )

    async def remove(self, alias: str) -> ServerDefinition:
        """Remove a server (its past tasks keep their history) and forget its secrets."""
        server = await server_called(self._catalog, alias)
        await self._catalog.remove_server(server.id)
        self._setup.forget_secrets(server.id, server.headers, server.env)
        self._tools.forget(server.id)
        await self._reconciler.orphan_tasks_of(server, None)
        await self._reachability.forget(server.id)  # nothing left to fix about it
        self._events.emit(ServersDidChange((server.id,)))
        return server

    # -- importing (the Servers panel, the welcome, `mooring servers import`) ------------------

    async def find_configs(self) -> list[ConfigPreview]:
        """Claude Desktop, VS Code and Cursor configuration files found on this machine, each
        with what importing it would do: every entry new, already present or not importable,
        with the reason. Nothing is changed."""
        return await self._setup.find_configs()

    async def preview_file(self, path: str) -> ConfigPreview:
        """What importing one configuration file would do (a file that cannot be read is a
        clear error; one that is not a server list has a ``problem``)."""
        return await self._setup.preview_file(path)

    async def import_entries(self, entries: Sequence[ImportEntry]) -> ImportOutcome:
        """Add the chosen entries of previews; secrets (header and environment values) go to
        the keyring only. What cannot be added is skipped with the reason."""
        return await self._setup.import_entries(entries)


class AccountDesk:
    """A server's accounts: adding and removing them, signing them in and out."""

    def __init__(
        self,
        *,
        catalog: ServerCatalog,
        gateway: Gateway,
        setup: ServerSetup,
        reconciler: Reconciler,
        events: EventBus,
    ) -> None:
        self._catalog = catalog
        self._gateway = gateway
        self._setup = setup
        self._reconciler = reconciler
        self._events = events

    async def accounts(self, alias: str) -> list[AccountView]:
        """A server's accounts (the default one first) and whether each is signed in."""
        return await self._setup.accounts_of(await server_called(self._catalog, alias))

    async def add(self, alias: str, label: str) -> CredentialProfile:
        """Add an account to a server."""
        return await self._setup.add_account(await server_called(self._catalog, alias), label)

    async def remove(self, alias: str, label: str) -> None:
        """Remove an account and its tokens; its unfinished tasks become issues."""
        server = await server_called(self._catalog, alias)
        profile_id = await self._setup.profile_id(server, label)
        await self._setup.remove_account(server, label)
        if profile_id is not None:
            await self._reconciler.orphan_tasks_of(server, profile_id)

    async def account_id(self, alias: str, label: str | None) -> str | None:
        """The profile id of a server's account (``None``: the default account)."""
        return await self._setup.profile_id(await server_called(self._catalog, alias), label)

    async def sign_in(self, alias: str, label: str | None, open_url: OpenUrl) -> None:
        """Sign an account of a Streamable HTTP server in with OAuth: ``open_url`` shows the
        address (the window opens the browser, the CLI prints it); the redirect comes back on
        loopback. Tokens go to the keyring; a connection waiting with the old credentials
        tries again at once. A clear error when it did not complete."""
        server = await server_called(self._catalog, alias)
        await self._setup.sign_in(server, label, open_url)
        self._gateway.signed_in(server.id, await self._setup.profile_id(server, label))
        self._events.emit(ServersDidChange((server.id,)))

    async def sign_out(self, alias: str, label: str | None) -> None:
        """Forget an account's tokens (its tasks will show "sign-in needed")."""
        server = await server_called(self._catalog, alias)
        await self._setup.sign_out(server, label)
        self._events.emit(ServersDidChange((server.id,)))
