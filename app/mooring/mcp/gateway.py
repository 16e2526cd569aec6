"""The gateway: every MCP server connection the host holds (implements ``core.ports.Gateway``).

One :class:`~mooring.mcp.connection.McpConnection` per (server id, credential profile id), each
with its own owner task. A task is always queried through the connection that created it, so
two accounts on one server never share a ``Client``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping

import anyio

from mooring.core.ports import ConnectionStatus, HttpSessions
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.reconcile import Observation, ServerTask
from mooring.mcp.connection import ConnectionSettings, InputHandler, McpConnection
from mooring.mcp.task_listen import ReplayBudget
from mooring.mcp.transport import AuthFor, HeadersFor, TransportOpener

logger = logging.getLogger("mooring.mcp.gateway")

EnvFor = Callable[[ServerDefinition], Mapping[str, str]]
"""A stdio server's environment with the values kept in the keyring filled in (blocking)."""

TaskListener = Callable[[str, str, Observation | None], None]
"""Told ``(server_id, task_id, observation)`` of news about a task from a notification;
``None`` when only ``tasks/get`` can say what happened."""

ToolsListener = Callable[[str, str | None], None]
"""Told ``(server_id, profile_id)`` when a server says its tool list changed."""

ListsListener = Callable[[str, str | None, str], None]
"""Told ``(server_id, profile_id, kind)`` when a server says its ``"prompts"`` or
``"resources"`` list changed."""

CoverageListener = Callable[[str, frozenset[str], bool], None]
"""Told ``(server_id, task_ids, covered)`` when a listen stream starts (``True``) or stops
covering tasks: their server reports their changes, or no longer does."""


class McpGateway:
    """Owns every server connection; ``aclose()`` stops them all.

    ``headers_for`` supplies extra HTTP headers per server and profile (secret values come from
    the keyring through it); ``auth_for`` supplies an ``httpx2.Auth`` such as the SDK's OAuth
    provider. Neither is called for stdio servers; ``env_for`` fills in a stdio server's
    environment values kept in the keyring (those stored empty). ``input_handler`` answers a
    server's sampling and elicitation requests during plain calls (declined without one).
    ``open_transport`` replaces the real transports (stdio, HTTP): the in-process test tier.
    ``http_sessions`` remembers each HTTP connection's session until it is ended, so that one a
    crashed engine left open is resumed, with the tasks the server keeps in it.
    """

    def __init__(
        self,
        *,
        settings: ConnectionSettings | None = None,
        headers_for: HeadersFor | None = None,
        auth_for: AuthFor | None = None,
        input_handler: InputHandler | None = None,
        env_for: EnvFor | None = None,
        open_transport: TransportOpener | None = None,
        http_sessions: HttpSessions | None = None,
    ) -> None:
        self._open_transport = open_transport
        self._http_sessions = http_sessions
        self.settings = settings or ConnectionSettings()
        self._replay_budget = ReplayBudget(self.settings.listen_replay_per_second)
        """Shared by every connection's listen stream (see ``ConnectionSettings``)."""
        self._env_for = env_for
        self._input_handler = input_handler
        self._headers_for = headers_for
        self._auth_for = auth_for
        self._connections: dict[tuple[str, str | None], McpConnection] = {}
        self._defined: dict[tuple[str, str | None], ServerDefinition] = {}
        """Per connection: the definition it was asked for, before secrets were filled in."""
        self._secrets_changed: set[tuple[str, str | None]] = set()
        """Connections whose server's secrets were edited: replaced at their next use."""
        self._listeners: list[TaskListener] = []
        self._tools_listeners: list[ToolsListener] = []
        self._lists_listeners: list[ListsListener] = []
        self._coverage_listeners: list[CoverageListener] = []
        self._expected: dict[tuple[str, str | None], dict[str, ServerTask]] = {}
        """Running tasks from the ledger to watch on a connection not made yet."""
        self._status_listeners: list[Callable[[ConnectionStatus], None]] = []
        self._notifications_wanted = False
        self._closed = False
        self._stopping: set[McpConnection] = set()
        """Connections taken out (replaced or disconnected) whose stop is under way."""

    async def connect(
        self, server: ServerDefinition, profile_id: str | None = None
    ) -> McpConnection:
        """The connection for this server and account, started if needed (never raises).

        A changed definition (command, URL, headers, ...) replaces the old connection. After
        :meth:`aclose` the returned connection is stopped and answers every request "not sent".
        """
        key = (server.id, profile_id)
        live = self._live(key)
        if live is not None and self._defined.get(key) == server:
            return live  # as it was: no need to read its secrets again
        defined = server
        if self._env_for is not None and ("" in server.env.values() or server.env_refs):
            # Environment values kept as secrets (imported API keys) come from the keyring,
            # which may block: ask it off the event loop (with those read from variables).
            env = await anyio.to_thread.run_sync(self._env_for, server)
            server = dataclasses.replace(server, env=dict(env))
        live = self._live(key)  # another connect may have replaced it meanwhile
        if live is not None and live.server == server:
            self._defined[key] = defined
            return live
        self._secrets_changed.discard(key)
        existing = self._connections.pop(key, None)
        if existing is not None:
            await self._stop(existing)
        connection = McpConnection(
            server,
            profile_id,
            settings=self.settings,
            headers_for=self._headers_for,
            auth_for=self._auth_for,
            on_task_notification=self._notifier(server.id),
            on_status=self._status_changed,
            input_handler=self._input_handler,
            open_transport=self._open_transport,
            on_tools_changed=self._tools_notifier(server.id, profile_id),
            on_coverage=self._coverage_notifier(server.id),
            replay_budget=self._replay_budget,
            on_lists_changed=self._lists_notifier(server.id, profile_id),
            http_sessions=self._http_sessions,
        )
        connection.want_task_notifications(self._notifications_wanted)
        for seen in self._expected.pop(key, {}).values():
            connection.subscription.observed(seen.task_id, seen)
        if self._closed:
            await connection.aclose()
            return connection
        self._connections[key] = connection
        self._defined[key] = defined
        connection.start()
        return connection

    def _live(self, key: tuple[str, str | None]) -> McpConnection | None:
        """The connection held for ``key``, unless it is to be replaced (the gateway closed,
        or the server's secrets edited)."""
        if self._closed or key in self._secrets_changed:
            return None
        return self._connections.get(key)

    def connection(self, server_id: str, profile_id: str | None = None) -> McpConnection | None:
        """The connection already held for this server and account, if any."""
        return self._connections.get((server_id, profile_id))

    def statuses(self) -> list[ConnectionStatus]:
        """Every held connection's status."""
        return [connection.status for connection in self._connections.values()]

    def add_task_listener(self, listener: TaskListener) -> None:
        """Be told ``(server_id, task_id, observation)`` when a notification brings news.

        A ``notifications/tasks`` frame that repeats the last state seen is not passed on.
        """
        self._listeners.append(listener)

    def want_task_notifications(self, wanted: bool) -> None:
        """Hold one ``subscriptions/listen`` stream per connection (now and for connections
        made later) for its running tasks, or none. Off by default: one-shot commands poll."""
        self._notifications_wanted = wanted
        for connection in self._connections.values():
            connection.want_task_notifications(wanted)

    def task_covered(self, server_id: str, profile_id: str | None, task_id: str) -> bool:
        """Whether this server and account's open listen stream covers ``task_id`` (the server
        reports its changes: polling it is only a safety net)."""
        connection = self._connections.get((server_id, profile_id))
        return connection is not None and connection.subscription.covers(task_id)

    def expect_task(self, server_id: str, profile_id: str | None, seen: ServerTask) -> None:
        """Watch a running task from the ledger on this server and account's listen stream
        (now, or once the connection is made), its last known state ``seen``."""
        connection = self._connections.get((server_id, profile_id))
        if connection is not None:
            connection.subscription.observed(seen.task_id, seen)
        else:
            self._expected.setdefault((server_id, profile_id), {})[seen.task_id] = seen

    def add_coverage_listener(self, listener: CoverageListener) -> None:
        """Be told ``(server_id, task_ids, covered)`` when a listen stream starts or stops
        covering tasks."""
        self._coverage_listeners.append(listener)

    def add_tools_listener(self, listener: ToolsListener) -> None:
        """Be told ``(server_id, profile_id)`` when a server's tool list changed."""
        self._tools_listeners.append(listener)

    def add_lists_listener(self, listener: ListsListener) -> None:
        """Be told ``(server_id, profile_id, kind)`` when a server's prompt or resource list
        changed."""
        self._lists_listeners.append(listener)

    def add_status_listener(self, listener: Callable[[ConnectionStatus], None]) -> None:
        """Be told every connection's new status when it changes."""
        self._status_listeners.append(listener)

    def _status_changed(self, status: ConnectionStatus) -> None:
        for listener in list(self._status_listeners):
            try:
                listener(status)
            except Exception:  # one broken listener must not starve the others
                logger.exception("status listener failed for %s", status.server_id)

    def secrets_changed(self, server_id: str) -> None:
        """The server's header or environment values in the keyring were edited: its
        connections are replaced at their next use (a secret's value is not part of the
        definition, so an edit of one alone leaves the definition as it was)."""
        self._secrets_changed.update(key for key in self._connections if key[0] == server_id)

    def signed_in(self, server_id: str, profile_id: str | None) -> None:
        """This account has just signed in: its connection tries again now."""
        connection = self._connections.get((server_id, profile_id))
        if connection is not None:
            connection.credentials_changed()

    async def disconnect(
        self, server_id: str, profile_id: str | None = None, *, every_account: bool = False
    ) -> None:
        """Stop and forget one connection, or with ``every_account`` each of the server's
        (no-op when there is none)."""
        keys = (
            [key for key in self._connections if key[0] == server_id]
            if every_account
            else [(server_id, profile_id)]
        )
        for key in keys:
            self._defined.pop(key, None)
            connection = self._connections.pop(key, None)
            if connection is not None:
                await self._stop(connection)

    def idle_connections(self, idle_after: float) -> list[tuple[str, str | None]]:
        """``(server_id, profile_id)`` of each connection nothing has used for ``idle_after``
        seconds (no request queued or under way, no task stream or listen stream open)."""
        return [
            key
            for key, connection in self._connections.items()
            if connection.idle_for() >= idle_after
        ]

    async def end_if_idle(self, server_id: str, profile_id: str | None, idle_after: float) -> bool:
        """End this connection if it is still idle for ``idle_after`` seconds (a stdio server
        stopped, an HTTP session ended with ``DELETE``); whether it was ended. A request that
        comes later opens a new connection."""
        key = (server_id, profile_id)
        connection = self._connections.get(key)
        if connection is None or connection.idle_for() < idle_after:
            return False
        del self._connections[key]  # no await since the check: nothing can have used it
        self._defined.pop(key, None)
        await self._stop(connection)
        return True

    async def _stop(self, connection: McpConnection) -> None:
        # Stopping a stdio server may take the SDK's grace period and escalation (seconds): a
        # close meanwhile (the window quitting just after a server was edited) waits for it
        # too, or the loop would end under it and leave the server process running. The
        # window cancels its jobs (this connect among them) before it closes the gateway: a
        # connection whose stop was cancelled stays here until it has stopped.
        self._stopping.add(connection)
        try:
            await connection.aclose()
        finally:
            self._stopping = {c for c in self._stopping if not c.stopped}

    async def aclose(self) -> None:
        """Stop every connection (their owner tasks exit and stdio servers end), those being
        replaced or disconnected included."""
        self._closed = True
        connections = [*self._connections.values(), *self._stopping]
        self._connections.clear()
        async with anyio.create_task_group() as tg:
            for connection in connections:
                tg.start_soon(connection.aclose)

    def _notifier(self, server_id: str) -> Callable[[str, Observation | None], Awaitable[None]]:
        async def notify(task_id: str, seen: Observation | None) -> None:
            for listener in list(self._listeners):
                try:
                    listener(server_id, task_id, seen)
                except Exception:  # one broken listener must not starve the others
                    logger.exception("task listener failed for %s/%s", server_id, task_id)

        return notify

    def _coverage_notifier(self, server_id: str) -> Callable[[frozenset[str], bool], None]:
        def notify(task_ids: frozenset[str], covered: bool) -> None:
            for listener in list(self._coverage_listeners):
                try:
                    listener(server_id, task_ids, covered)
                except Exception:  # one broken listener must not starve the others
                    logger.exception("coverage listener failed for %s", server_id)

        return notify

    def _tools_notifier(
        self, server_id: str, profile_id: str | None
    ) -> Callable[[], Awaitable[None]]:
        async def notify() -> None:
            for listener in list(self._tools_listeners):
                try:
                    listener(server_id, profile_id)
                except Exception:  # one broken listener must not starve the others
                    logger.exception("tools listener failed for %s", server_id)

        return notify

    def _lists_notifier(
        self, server_id: str, profile_id: str | None
    ) -> Callable[[str], Awaitable[None]]:
        async def notify(kind: str) -> None:
            for listener in list(self._lists_listeners):
                try:
                    listener(server_id, profile_id, kind)
                except Exception:  # one broken listener must not starve the others
                    logger.exception("%s listener failed for %s", kind, server_id)

        return notify
