"""Setting servers up: importing other hosts' configurations, adding and editing a server
(its program or URL checked first), its tools' access, its accounts and signing them in — the
use cases behind the Servers panel, the first-run welcome and ``mooring servers`` /
``mooring accounts`` — and the issue that says a server's connection failed.

Secrets (HTTP header values, environment values such as API keys) go to the keyring only;
the server table keeps their names, stored with an empty value.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from urllib.parse import parse_qsl, urlsplit

from mooring.core.clock import Clock
from mooring.core.errors import KnownError, Remedy
from mooring.core.events import EventBus, ServersDidChange
from mooring.core.ids import new_id
from mooring.core.issues import IssueKind
from mooring.core.ports import (
    AccountBook,
    AccountSignIn,
    ConfigFiles,
    ConnectionState,
    ConnectionStatus,
    IssueBoard,
    OpenUrl,
    SecretStore,
    ServerCatalog,
)
from mooring.core.providers import ENV_NAME
from mooring.core.server_import import (
    ConfigPreview,
    ConfigSource,
    EntryStatus,
    ImportEntry,
    ImportOutcome,
    preview,
)
from mooring.core.server_target import check_target
from mooring.core.servers import CredentialProfile, ServerDefinition, Transport
from mooring.core.views import AccountView
from mooring.services.telling import IssueDesk

log = logging.getLogger("mooring.servers")

HEADER_SCOPE = "server-headers"
"""Keyring scope of HTTP header values: names ``"{server_id}:{header}"``."""
ENV_SCOPE = "server-env"
"""Keyring scope of environment values: names ``"{server_id}:{variable}"``."""


DEFAULT_ACCOUNT = "default"


def secret_values_needed(*values: Mapping[str, str]) -> bool:
    """Whether any of these name → value maps carries a value to keep."""
    return any(v for mapping in values for v in mapping.values())


def no_keyring(headers: Mapping[str, str], env: Mapping[str, str] | None = None) -> KnownError:
    """The refusal when secrets would not outlive this process: environment values can be
    stored as not secret or read from a variable instead; header values only in a keyring."""
    what = (
        "a secret environment value"
        if secret_values_needed(env or {}) and not secret_values_needed(headers)
        else "a header value"
    )
    return KnownError(
        f"No usable keyring: {what} would be lost when Mooring stops, and later calls would "
        "go out without it. Nothing was changed.",
        code="no_keyring",
        remedy=Remedy.KEEP_SECRETS if secret_values_needed(env or {}) else Remedy.UNLOCK_KEYRING,
    )


def server_env(
    secret: Mapping[str, str], plain: Mapping[str, str], refs: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """A server's stored ``env`` (secret names with empty values, plain values as they are)
    and ``env_refs``; a name given twice or a variable that cannot be named is refused."""
    seen: set[str] = set()
    for name in (*secret, *plain, *refs):
        if not name.strip():
            raise KnownError("An environment value needs a name.", code="usage")
        if name in seen:
            raise KnownError(
                f"The environment variable {name!r} is given twice: say once whether it is "
                "secret, not secret or read from another variable.",
                code="usage",
            )
        seen.add(name)
    for name, variable in refs.items():
        if not ENV_NAME.match(variable):
            raise KnownError(
                f"{variable!r} (for {name}) is not an environment variable name.",
                hint="Letters, digits and _, not starting with a digit.",
                code="usage",
            )
    env = {**dict.fromkeys(secret, ""), **plain}
    return env, dict(refs)


class ServerSetup:
    """The server and account use cases (the host exposes them)."""

    def __init__(
        self,
        *,
        catalog: ServerCatalog,
        accounts: AccountBook,
        secrets: SecretStore,
        events: EventBus,
        clock: Clock,
        config_files: ConfigFiles | None = None,
        sign_in: AccountSignIn | None = None,
    ) -> None:
        self.catalog = catalog
        self.accounts = accounts
        self.secrets = secrets
        self.events = events
        self.clock = clock
        self.config_files = config_files
        self.sign_in_port = sign_in

    # -- secrets -----------------------------------------------------------------------------

    def store_secrets(
        self, server_id: str, headers: Mapping[str, str], env: Mapping[str, str]
    ) -> None:
        """Put the non-empty values in the keyring (empty ones: keep what is there)."""
        for name, value in headers.items():
            if value:
                self.secrets.set(HEADER_SCOPE, f"{server_id}:{name}", value)
        for name, value in env.items():
            if value:
                self.secrets.set(ENV_SCOPE, f"{server_id}:{name}", value)

    def forget_secrets(
        self, server_id: str, headers: Iterable[str], env: Iterable[str] = ()
    ) -> None:
        """Delete these values from the keyring."""
        for name in headers:
            self.secrets.delete(HEADER_SCOPE, f"{server_id}:{name}")
        for name in env:
            self.secrets.delete(ENV_SCOPE, f"{server_id}:{name}")

    # -- import ------------------------------------------------------------------------------

    async def find_configs(self) -> list[ConfigPreview]:
        """Other hosts' configuration files on this machine, each with what importing it
        would do (new, already present, cannot be imported — with the reason)."""
        files = self.config_files
        if files is None:
            return []
        sources = await asyncio.to_thread(files.found)
        return [await self._preview(source) for source in sources]

    async def preview_file(self, path: str, app: str = "file") -> ConfigPreview:
        """What importing the file at ``path`` would do (its ``problem`` says when it is not
        a server list); a file that cannot be read is a clear error."""
        return await self._preview(ConfigSource(app, path), strict=True)

    async def _preview(self, source: ConfigSource, *, strict: bool = False) -> ConfigPreview:
        try:
            if self.config_files is not None:
                text = await asyncio.to_thread(self.config_files.read, source.path)
            else:
                text = await asyncio.to_thread(_read_text, source.path)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            if strict:
                raise KnownError(f"Cannot read {source.path}: {reason}.", code="not_found") from exc
            return ConfigPreview(source, problem=f"cannot be read: {reason}")
        return preview(
            source,
            text,
            now=self.clock.now,
            new_id=new_id,
            existing=await self.catalog.list_servers(),
        )

    async def import_entries(self, entries: Sequence[ImportEntry]) -> ImportOutcome:
        """Add the chosen new entries (their secrets to the keyring). An entry that is no
        longer new (a server of that name or command appeared meanwhile), or whose secrets no
        keyring can keep, is skipped with the reason; the others are still added."""
        outcome = ImportOutcome()
        existing = await self.catalog.list_servers()
        aliases = {s.alias.casefold() for s in existing}
        identities = {s.identity for s in existing}
        for entry in entries:
            server = entry.server
            if entry.status is not EntryStatus.NEW or server is None:
                outcome.skipped.append((entry.name, entry.reason or "not importable"))
                continue
            if server.alias.casefold() in aliases:
                outcome.skipped.append((entry.name, "a server of that name exists already"))
                continue
            if server.identity in identities:
                outcome.skipped.append((entry.name, "the same server is configured already"))
                continue
            try:
                await self.add_definition(server, entry.header_values, entry.env_values)
            except KnownError as exc:
                if exc.code != "no_keyring":
                    raise
                what = "headers" if entry.header_values else "environment values"
                outcome.skipped.append(
                    (entry.name, f"its {what} are secrets and no usable keyring can keep them")
                )
                continue
            aliases.add(server.alias.casefold())
            identities.add(server.identity)
            outcome.added.append(server)
        if outcome.added:
            self.events.emit(ServersDidChange(tuple(s.id for s in outcome.added)))
        return outcome

    async def add_definition(
        self,
        server: ServerDefinition,
        header_values: Mapping[str, str],
        env_values: Mapping[str, str] | None = None,
    ) -> None:
        """Store a server, its header and environment values in the keyring only.

        Without a keyring that keeps secrets, a server with such values is refused (code
        ``no_keyring``): nothing is stored then.
        """
        env_values = env_values or {}
        if secret_values_needed(header_values, env_values) and not self.secrets.durable:
            raise no_keyring(header_values, env_values)
        self.store_secrets(server.id, header_values, env_values)
        await self.catalog.add_server(server)

    # -- editing -----------------------------------------------------------------------------

    async def update(
        self,
        current: ServerDefinition,
        *,
        alias: str,
        command: str | None,
        args: tuple[str, ...],
        env: Mapping[str, str],
        cwd: str | None,
        url: str | None,
        headers: Mapping[str, str],
        trusted: bool,
        allowed_tools: tuple[str, ...] | None,
        hidden_tools: tuple[str, ...],
        plain_env: Mapping[str, str] | None = None,
        env_refs: Mapping[str, str] | None = None,
    ) -> ServerDefinition:
        """Store the edited server; see :meth:`Host.update_server`."""
        alias = alias.strip()
        if not alias:
            raise KnownError("A server needs a name.", code="usage")
        taken = {s.alias.casefold() for s in await self.catalog.list_servers()}
        if alias.casefold() != current.alias.casefold() and alias.casefold() in taken:
            raise KnownError(f"A server called {alias!r} exists already.", code="exists")
        if (url, command, cwd) != (current.url, current.command, current.cwd):
            # Only a changed target is checked: a server whose program is missing for now can
            # still be renamed or trusted.
            check_target(url, command, cwd)
        if secret_values_needed(headers, env) and not self.secrets.durable:
            raise no_keyring(headers, env)
        stored_env, refs = server_env(env, plain_env or {}, env_refs or {})
        try:
            edited = ServerDefinition(
                id=current.id,
                alias=alias,
                transport=Transport.HTTP if url else Transport.STDIO,
                command=None if url else command,
                args=() if url else args,
                env={} if url else stored_env,
                env_refs={} if url else refs,
                cwd=None if url else cwd,
                url=url,
                headers=dict.fromkeys(headers, "") if url else {},
                trusted=trusted,
                enabled=current.enabled,
                builtin=current.builtin,
                allowed_tools=allowed_tools,
                hidden_tools=hidden_tools,
                created_at=current.created_at,
            )
        except ValueError as exc:
            raise KnownError(f"The server cannot be saved: {exc}.", code="usage") from exc
        if edited.identity != current.identity and current.trusted:
            # Trust belongs to what the server is: a re-pointed server starts untrusted.
            edited = replace(edited, trusted=False)
        await self.catalog.update_server(edited)
        self.store_secrets(edited.id, headers if url else {}, {} if url else env)
        secret_now = {name for name, value in edited.env.items() if not value}
        self.forget_secrets(
            edited.id,
            set(current.headers) - set(edited.headers),
            set(current.env) - secret_now,
        )
        self.events.emit(ServersDidChange((edited.id,)))
        return edited

    async def set_tool_access(
        self,
        server: ServerDefinition,
        tool: str,
        *,
        enabled: bool | None = None,
        hidden: bool | None = None,
        known_tools: Sequence[str] = (),
    ) -> ServerDefinition:
        """See :meth:`Host.set_tool_access`."""
        allowed = server.allowed_tools
        hidden_tools = server.hidden_tools
        if hidden is True and not matches(tool, hidden_tools):
            hidden_tools = (*hidden_tools, tool)
        elif hidden is False:
            hidden_tools = tuple(p for p in hidden_tools if p != tool)
            if matches(tool, hidden_tools):
                raise KnownError(
                    f"{tool} stays hidden: a pattern in the hidden list matches it.",
                    hint="Edit the server to change its hidden patterns.",
                    code="pattern",
                )
        if enabled is False:
            if allowed is None:
                allowed = tuple(t for t in known_tools if t != tool)
            else:
                allowed = tuple(p for p in allowed if p != tool)
                if matches(tool, allowed):
                    raise KnownError(
                        f"{tool} stays allowed: a pattern in the allowed list matches it.",
                        hint="Edit the server to change its allowed patterns.",
                        code="pattern",
                    )
        elif enabled is True and allowed is not None and not matches(tool, allowed):
            allowed = (*allowed, tool)
            if known_tools and all(matches(t, allowed) for t in known_tools):
                allowed = None  # every tool is allowed again: no list (new tools too)
        changed = replace(server, allowed_tools=allowed, hidden_tools=hidden_tools)
        if changed != server:
            await self.catalog.update_server(changed)
            self.events.emit(ServersDidChange((server.id,)))
        return changed

    # -- accounts ----------------------------------------------------------------------------

    async def accounts_of(self, server: ServerDefinition) -> list[AccountView]:
        """The default account, then the named ones, each with whether it is signed in."""
        port = self.sign_in_port

        def signed(pid: str | None) -> bool:
            return bool(port is not None and port.signed_in(server, pid))

        profiles = await self.accounts.list_profiles(server.id)
        rows: list[tuple[str, str | None]] = [
            (DEFAULT_ACCOUNT, None),
            *((p.label, p.id) for p in profiles),
        ]
        # The keyring may block (D-Bus, an unlock prompt): ask it off the event loop.
        states = await asyncio.to_thread(lambda: [signed(pid) for _label, pid in rows])
        return [
            AccountView(label, pid, state) for (label, pid), state in zip(rows, states, strict=True)
        ]

    async def profile_id(self, server: ServerDefinition, label: str | None) -> str | None:
        """The id of the account called ``label`` (``None`` or "default": the default one)."""
        if label is None or label == DEFAULT_ACCOUNT:
            return None
        for profile in await self.accounts.list_profiles(server.id):
            if profile.label == label:
                return profile.id
        raise KnownError(
            f"{server.alias} has no account called {label!r}.",
            code="not_found",
            remedy=Remedy.ADD_ACCOUNT,
            subject=(server.alias, label),
        )

    async def add_account(self, server: ServerDefinition, label: str) -> CredentialProfile:
        """Add an account to a server."""
        label = label.strip()
        if not label or label == DEFAULT_ACCOUNT:
            raise KnownError(
                f"Choose a name for the account other than {DEFAULT_ACCOUNT!r}.", code="usage"
            )
        if any(p.label == label for p in await self.accounts.list_profiles(server.id)):
            raise KnownError(f"{server.alias} already has an account {label!r}.", code="exists")
        profile = CredentialProfile(
            id=new_id(), server_id=server.id, label=label, created_at=self.clock.now()
        )
        await self.accounts.add_profile(profile)
        return profile

    async def remove_account(self, server: ServerDefinition, label: str) -> None:
        """Remove an account and its tokens (its unfinished tasks become issues on
        reconcile; they are never asked about with another account)."""
        pid = await self.profile_id(server, label)
        if pid is None:
            raise KnownError("The default account cannot be removed.", code="usage")
        await self.accounts.remove_profile(pid)
        if self.sign_in_port is not None:
            port = self.sign_in_port
            await asyncio.to_thread(port.sign_out, server, pid)

    async def sign_in(self, server: ServerDefinition, label: str | None, open_url: OpenUrl) -> None:
        """Sign an account in (OAuth); a clear error when it did not complete."""
        if server.transport is not Transport.HTTP or self.sign_in_port is None:
            raise KnownError(
                f"{server.alias} is not a Streamable HTTP server; nothing to sign in.",
                code="usage",
            )
        pid = await self.profile_id(server, label)
        if not await self.sign_in_port.sign_in(server, pid, open_url):
            raise KnownError(
                f"Signing in to {server.alias} did not complete: the server still refuses "
                "Mooring's tokens (or does not use OAuth).",
                code="sign_in",
            )

    async def sign_out(self, server: ServerDefinition, label: str | None) -> None:
        """Forget an account's tokens (its tasks will show "sign-in needed")."""
        pid = await self.profile_id(server, label)
        if self.sign_in_port is not None:
            port = self.sign_in_port
            await asyncio.to_thread(port.sign_out, server, pid)


REDACTED = "[redacted]"


class ServerReachability:
    """An open ``SERVER_UNAVAILABLE`` issue for each server whose connection failed, resolved
    when it connects: what the Issues panel and ``mooring issues`` list, whichever face made
    the connection.

    Told every connection status (a gateway status listener), it acts on a server's change
    between failed and ready only: a connection that keeps failing (it retries with backoff)
    does not raise again an issue the user dismissed; an edited server's new connection that
    fails does. An issue open already (reconciliation's, which counts the waiting tasks) is
    left as it is. The reason keeps none of the server's keyring values (header and
    environment values a server may echo on stderr) nor its URL's credentials.
    """

    def __init__(
        self,
        *,
        catalog: ServerCatalog,
        board: IssueBoard,
        desk: IssueDesk,
        secrets: SecretStore,
    ) -> None:
        self._catalog = catalog
        self._board = board
        self._desk = desk
        self._secrets = secrets
        self._told: dict[str, ConnectionState] = {}
        """Per server: the last settled state heard (ready or failed)."""
        self._pending: dict[str, ConnectionStatus] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._open: set[str] = set()
        """The servers this may have an open issue about (raised here, or open at
        :meth:`load`): a server that connects with none writes nothing, so a connection that
        comes up on the way to a model request costs that request no database trip."""

    async def load(self) -> None:
        """Learn which servers have an open issue of this kind already (at start: one left
        by an earlier run is resolved when its server connects)."""
        self._open |= {
            i.subject
            for i in await self._board.open_issues()
            if i.kind is IssueKind.SERVER_UNAVAILABLE
        }

    def on_status(self, status: ConnectionStatus) -> None:
        """A connection's new status (the gateway's listener; never blocks)."""
        server_id = status.server_id
        if status.state is ConnectionState.STOPPED:
            self._told.pop(server_id, None)  # replaced or closed: a new connection starts anew
            return
        if status.state not in (ConnectionState.READY, ConnectionState.FAILED):
            return
        if self._told.get(server_id) is status.state:
            return
        self._told[server_id] = status.state
        self._pending[server_id] = status
        worker = self._workers.get(server_id)
        if worker is not None and not worker.done():
            return  # it takes this change next
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # told outside a loop: nothing can be written now
            return
        worker = loop.create_task(self._work(server_id), name=f"reachability:{server_id}")
        self._workers[server_id] = worker
        worker.add_done_callback(lambda done: self._ended(server_id, done))

    def _ended(self, server_id: str, worker: asyncio.Task[None]) -> None:
        if self._workers.get(server_id) is worker:
            del self._workers[server_id]

    async def _work(self, server_id: str) -> None:
        # One worker per server takes its changes in order: the last one told wins.
        while (status := self._pending.pop(server_id, None)) is not None:
            try:
                await self._apply(status)
            except Exception:  # an issue not written must not stop the next one
                log.exception("keeping the issue of server %s failed", server_id)

    async def _apply(self, status: ConnectionStatus) -> None:
        kind = IssueKind.SERVER_UNAVAILABLE
        if status.state is ConnectionState.READY:
            if status.server_id in self._open:
                self._open.discard(status.server_id)
                await self._desk.resolve(kind, status.server_id)
            return
        server = await self._catalog.get_server(status.server_id)
        if (
            server is None
            or not server.enabled
            or await self._catalog.is_removed(server.id)
            or any(
                i.kind is kind and i.subject == server.id for i in await self._board.open_issues()
            )
        ):
            return
        reason = await self.without_secrets(server, status.reason or "the connection failed")
        self._open.add(server.id)
        await self._desk.raise_issue(
            kind,
            server.id,
            f"{server.alias} cannot be reached",
            f"{reason.rstrip('.')}. Mooring keeps trying; its tools cannot be used until it "
            "connects.",
        )

    async def without_secrets(self, server: ServerDefinition, text: str) -> str:
        """``text`` (what a failing server said) without its header and environment values
        (from the keyring or a variable) or its URL's credentials: ``[redacted]`` instead."""

        def stored() -> list[str | None]:  # the keyring may block: off the event loop
            return [
                *(self._secrets.get(HEADER_SCOPE, f"{server.id}:{n}") for n in server.headers),
                *(self._secrets.get(ENV_SCOPE, f"{server.id}:{n}") for n in server.env),
                *(os.environ.get(variable) for variable in server.env_refs.values()),
            ]

        hidden = [v for v in await asyncio.to_thread(stored) if v]
        if server.url:
            parts = urlsplit(server.url)
            if parts.query or parts.username or parts.password:
                host = parts.netloc.rpartition("@")[2]  # without the user and password
                bare = parts._replace(netloc=host, query="", fragment="").geturl()
                text = text.replace(server.url, bare)
            hidden += [parts.password or "", *(value for _name, value in parse_qsl(parts.query))]
        # Longest first: a secret that contains another is masked whole.
        for secret in sorted({h for h in hidden if len(h) >= 4}, key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        return text

    async def forget(self, server_id: str) -> None:
        """The server was removed: its issue goes (after any change being written)."""
        self._told.pop(server_id, None)
        self._pending.pop(server_id, None)
        await self.settled()
        self._open.discard(server_id)
        await self._desk.resolve(IssueKind.SERVER_UNAVAILABLE, server_id)

    async def settled(self) -> None:
        """Wait until every change told so far is written."""
        while running := [w for w in self._workers.values() if not w.done()]:
            await asyncio.gather(*running, return_exceptions=True)


def matches(tool: str, patterns: Iterable[str]) -> bool:
    """Whether a tool name matches one of the names or patterns."""
    return any(fnmatch.fnmatchcase(tool, p) for p in patterns)


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as file:
        return file.read()
