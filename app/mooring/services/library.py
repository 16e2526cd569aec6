"""The prompts and resources servers offer (the host's ``library`` part).

Lists are read once per server and kept until the connection (re)connects or the server says
the list changed (``notifications/prompts/list_changed``, ``notifications/resources/
list_changed``); then :class:`~mooring.core.events.LibraryDidChange` tells the faces to look
again. A server that cannot be reached now offers nothing in a list of every server; asked by
name, it is an error that says why.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from mooring.core.errors import KnownError, NotFound
from mooring.core.events import EventBus, LibraryDidChange
from mooring.core.library import (
    ATTACHMENT_LIMIT,
    PROMPTS,
    RESOURCES,
    Attachment,
    PromptInfo,
    PromptText,
    ResourceInfo,
    Unlisted,
    missing_arguments,
)
from mooring.core.ports import ConnectionState, ConnectionStatus, Gateway, ServerCatalog
from mooring.core.resources import ResourceRead
from mooring.core.servers import ServerDefinition
from mooring.core.text import neutralize

log = logging.getLogger("mooring.library")

T = TypeVar("T", PromptInfo, ResourceInfo)


class Library:
    """Prompts and resources of the configured servers (their default accounts)."""

    def __init__(self, *, catalog: ServerCatalog, gateway: Gateway, events: EventBus) -> None:
        self._catalog = catalog
        self._gateway = gateway
        self._events = events
        self._kept: dict[tuple[str, str], tuple[ServerDefinition, list[PromptInfo | ResourceInfo]]]
        self._kept = {}
        gateway.add_status_listener(self._on_status)
        gateway.add_lists_listener(self._on_list_changed)

    # -- prompts -------------------------------------------------------------------------------

    async def prompts(self, server: str | None = None) -> list[PromptInfo]:
        """The prompts of one server (by alias), or of every enabled server that can be
        reached now; by server, then name."""
        return await self._every(PROMPTS, server, _prompts)

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str] | None = None
    ) -> PromptText:
        """A prompt's messages with these arguments (required ones checked first)."""
        given = dict(arguments or {})
        found = [p for p in await self.prompts(server) if p.name == name]
        if not found:
            raise NotFound(f"prompt of {server}", neutralize(name))
        missing = missing_arguments(found[0], given)
        if missing:
            raise KnownError(
                f"The prompt {found[0].label} needs {', '.join(missing)}.",
                hint="Give each required argument a value.",
            )
        definition = await self._server(server)
        outcome = await (await self._gateway.connect(definition)).get_prompt(name, given)
        if not isinstance(outcome, PromptText):
            raise KnownError(f"{server} could not give the prompt {name!r}: {outcome.reason}")
        return outcome

    # -- resources -----------------------------------------------------------------------------

    async def resources(self, server: str | None = None) -> list[ResourceInfo]:
        """The resources and resource templates of one server (by alias), or of every enabled
        server that can be reached now."""
        return await self._every(RESOURCES, server, _resources)

    async def attach(self, server: str, uri: str) -> Attachment:
        """Read a resource to attach to a message: its text parts, binary parts described, at
        most :data:`ATTACHMENT_LIMIT` characters in all."""
        definition = await self._server(server)
        outcome = await (await self._gateway.connect(definition)).read_resource(uri)
        if not isinstance(outcome, ResourceRead):
            raise KnownError(f"{server} could not give {uri}: {outcome.reason}")
        text = "\n".join(
            part.text
            if part.text is not None
            else f"[{part.mime_type or 'binary'} data, {part.blob_bytes:,} bytes, not included]"
            for part in outcome.contents
        )
        return Attachment(
            server_alias=definition.alias,
            uri=uri,
            text=text[:ATTACHMENT_LIMIT],
            truncated=len(text) > ATTACHMENT_LIMIT,
        )

    # -- lists ---------------------------------------------------------------------------------

    async def _server(self, alias: str) -> ServerDefinition:
        found = await self._catalog.find_server(alias)
        if found is None:
            raise NotFound("server", neutralize(alias))
        return found

    async def _every(
        self,
        kind: str,
        server: str | None,
        read: Callable[[ServerDefinition, Gateway], Awaitable[list[T] | Unlisted]],
    ) -> list[T]:
        if server is not None:
            listed = await self._list(kind, await self._server(server), read)
            if isinstance(listed, Unlisted):
                raise KnownError(f"{server}: its {kind} cannot be listed now: {listed.reason}")
            return listed
        servers = [s for s in await self._catalog.list_servers() if s.enabled]
        every = await asyncio.gather(*(self._list(kind, s, read) for s in servers))
        return [item for listed in every if not isinstance(listed, Unlisted) for item in listed]

    async def _list(
        self,
        kind: str,
        server: ServerDefinition,
        read: Callable[[ServerDefinition, Gateway], Awaitable[list[T] | Unlisted]],
    ) -> list[T] | Unlisted:
        kept = self._kept.get((server.id, kind))
        if kept is not None and kept[0] == server:
            return kept[1]  # type: ignore[return-value]  # kept under its own kind
        listed = await read(server, self._gateway)
        if not isinstance(listed, Unlisted):
            listed.sort(key=lambda item: item.name)
            self._kept[(server.id, kind)] = (server, list(listed))
        return listed

    def _on_status(self, status: ConnectionStatus) -> None:
        if status.state in (ConnectionState.READY, ConnectionState.FAILED):
            for key in [k for k in self._kept if k[0] == status.server_id]:
                del self._kept[key]  # a new session may offer others: read again when asked

    def _on_list_changed(self, server_id: str, profile_id: str | None, kind: str) -> None:
        if profile_id is not None:
            return  # the library lists the default accounts only
        self._kept.pop((server_id, kind), None)
        log.info("%s: the %s list changed", server_id, kind)
        self._events.emit(LibraryDidChange(server_id, kind))


async def _ready(server: ServerDefinition, gateway: Gateway) -> Unlisted | None:
    connection = await gateway.connect(server)
    status = await connection.settled()
    if status.state is not ConnectionState.READY:
        return Unlisted(status.reason or status.state.value)
    return None


async def _prompts(server: ServerDefinition, gateway: Gateway) -> list[PromptInfo] | Unlisted:
    return await _ready(server, gateway) or await (await gateway.connect(server)).list_prompts()


async def _resources(server: ServerDefinition, gateway: Gateway) -> list[ResourceInfo] | Unlisted:
    return await _ready(server, gateway) or await (await gateway.connect(server)).list_resources()
