"""The tools each server offers, read once and kept until they may have changed.

Reading ``tools/list`` before every call costs a round trip per call and, for a model turn, per
tool offer. The tool index keeps each server's list per account, and forgets it when the
connection (re)connects (a restarted server may offer other tools), when the server's definition
changes, or when asked to refresh; a server that says its list changed
(``notifications/tools/list_changed``) has it read again at once. Listeners hear
:class:`ToolsDidChange` after a new list was read.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from enum import StrEnum

from mooring.core.events import EventBus, ToolsDidChange
from mooring.core.ports import ConnectionState, ConnectionStatus, Gateway
from mooring.core.servers import ServerDefinition
from mooring.core.tools import ToolInfo

log = logging.getLogger("mooring.tools")


class Availability(StrEnum):
    """Whether a server offers a tool, as far as can be told now."""

    OFFERED = "offered"
    MISSING = "missing"
    """The server answered ``tools/list`` and the tool is not in it."""
    UNKNOWN = "unknown"
    """The server could not be asked (not reachable): it may or may not offer it."""


@dataclass(frozen=True, slots=True)
class ToolLookup:
    """One tool looked up in a server's tool index."""

    availability: Availability
    tool: ToolInfo | None = None
    reason: str = ""


_Key = tuple[str, str | None]


class ToolIndex:
    """Per server and account: the tools from the last ``tools/list``."""

    def __init__(self, *, gateway: Gateway, events: EventBus) -> None:
        self._gateway = gateway
        self._events = events
        self._tools: dict[_Key, tuple[ServerDefinition, list[ToolInfo]]] = {}
        self._reading: dict[_Key, asyncio.Lock] = {}
        self._refreshing: set[asyncio.Task[list[ToolInfo] | None]] = set()
        gateway.add_status_listener(self._on_status)
        gateway.add_tools_listener(self._on_tools_changed)

    async def tools(
        self, server: ServerDefinition, profile_id: str | None = None, *, refresh: bool = False
    ) -> list[ToolInfo] | None:
        """The server's tools (read once, then kept), or ``None`` when it cannot be reached."""
        key = (server.id, profile_id)
        cached = self._tools.get(key)
        if cached is not None and cached[0] == server and not refresh:
            return cached[1]
        lock = self._reading.setdefault(key, asyncio.Lock())
        async with lock:
            cached = self._tools.get(key)
            if cached is not None and cached[0] == server and not refresh:
                return cached[1]
            connection = await self._gateway.connect(server, profile_id)
            status = await connection.settled()
            if status.state is not ConnectionState.READY:
                return None
            tools = await connection.list_tools()
            if connection.status.state is not ConnectionState.READY:
                return None  # the list may be empty only because the connection died
            self._tools[key] = (server, tools)
        log.info("%s offers %d tools", server.alias, len(tools))
        self._events.emit(ToolsDidChange(server.id))
        return tools

    async def lookup(
        self, server: ServerDefinition, tool: str, profile_id: str | None = None
    ) -> ToolLookup:
        """Whether ``server`` offers ``tool`` (reading the list again once if it is missing:
        the server may have added it since)."""
        for refresh in (False, True):
            tools = await self.tools(server, profile_id, refresh=refresh)
            if tools is None:
                connection = await self._gateway.connect(server, profile_id)
                return ToolLookup(Availability.UNKNOWN, reason=connection.status.reason)
            for info in tools:
                if info.name == tool:
                    return ToolLookup(Availability.OFFERED, info)
        return ToolLookup(Availability.MISSING, reason=f"{server.alias} has no tool {tool!r}")

    def forget(self, server_id: str) -> None:
        """Drop what is known of one server's tools (every account)."""
        for key in [k for k in self._tools if k[0] == server_id]:
            del self._tools[key]

    def _on_status(self, status: ConnectionStatus) -> None:
        if status.state in (ConnectionState.READY, ConnectionState.FAILED):
            # A new session may come with other tools; read them again when next needed.
            self.forget(status.server_id)

    def _on_tools_changed(self, server_id: str, profile_id: str | None) -> None:
        cached = self._tools.get((server_id, profile_id))
        if cached is None:
            # Nothing read yet: the next reader gets the new list; views may look again now.
            self._events.emit(ToolsDidChange(server_id))
            return
        # Read in a task of its own: the listener runs inside the connection's message handler.
        refresh = asyncio.get_running_loop().create_task(
            self.tools(cached[0], profile_id, refresh=True),
            name=f"tools-refresh:{cached[0].alias}",
        )
        self._refreshing.add(refresh)
        refresh.add_done_callback(self._refreshed)

    def _refreshed(self, task: asyncio.Task[list[ToolInfo] | None]) -> None:
        self._refreshing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("reading a changed tool list failed", exc_info=task.exception())
