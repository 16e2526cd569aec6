"""What the monitor keeps between polls instead of reading it again: server definitions and
the records it stored itself."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from mooring.core.clock import Clock
from mooring.core.events import EventBus, ServersDidChange, TaskDidChange
from mooring.core.ports import Gateway, ServerCatalog, ServerConnection
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.record import TaskRecord

RECORD_REREAD = timedelta(seconds=30)
"""How long a poll trusts the record and inputs it last read (and kept up to date with what it
wrote since). A write by another process is caught sooner: a poll's check stored over another
version of the record fails, and the next poll reads it again."""
SERVER_REREAD = timedelta(seconds=30)
"""How long a poll trusts the server definition it last read. A change made in this process
(:class:`ServersDidChange`) is seen at once; one made by another process within this time."""


class ServerDirectory:
    """Server definitions as last read (a read per poll cost ~0.3 ms), and connections."""

    def __init__(
        self, *, catalog: ServerCatalog, gateway: Gateway, events: EventBus, clock: Clock
    ) -> None:
        self._catalog = catalog
        self._gateway = gateway
        self._clock = clock
        self._servers: dict[str, tuple[ServerDefinition, datetime]] = {}
        self._generation = 0
        events.on(ServersDidChange, self._changed)

    async def server(self, server_id: str) -> ServerDefinition | None:
        """The server's definition, read again when older than :data:`SERVER_REREAD`."""
        now = self._clock.now()
        known = self._servers.get(server_id)
        if known is not None and now - known[1] < SERVER_REREAD:
            return known[0]
        generation = self._generation
        server = await self._catalog.get_server(server_id)
        if server is None:
            self._servers.pop(server_id, None)
        elif generation == self._generation:  # else changed while read: read again
            self._servers[server_id] = (server, now)
        return server

    async def connection(self, record: TaskRecord) -> ServerConnection | None:
        """The record's own server and account connection (``None``: its server is gone)."""
        return await self.connect(record.server_id, record.credential_profile_id)

    async def connect(self, server_id: str, account: str | None) -> ServerConnection | None:
        """The connection to the server for the account (``None``: the server is gone)."""
        server = await self.server(server_id)
        if server is None:
            return None
        return await self._gateway.connect(server, account)

    def _changed(self, event: ServersDidChange) -> None:
        self._generation += 1
        for server_id in event.server_ids:
            self._servers.pop(server_id, None)


@dataclass(frozen=True, slots=True)
class Stored:
    """A record and its inputs as stored, and when they were last read from the ledger."""

    record: TaskRecord
    inputs: list[TaskInput]
    read_at: datetime


class StoredRecords:
    """Per record polled here: the record and inputs as stored, so the next poll need not read
    them (a read per poll cost ~0.4 ms of the database thread). A copy is dropped when another
    version of its record is told."""

    def __init__(self, events: EventBus) -> None:
        self._stored: dict[str, Stored] = {}
        events.on(TaskDidChange, self._told)

    def take(self, record_id: str) -> Stored | None:
        """The copy kept of the record, no longer kept (a poll keeps what it stores next)."""
        return self._stored.pop(record_id, None)

    def drop(self, record_id: str) -> None:
        """Forget the copy kept of the record (it is about to change, or changed elsewhere)."""
        self._stored.pop(record_id, None)

    def keep(self, record: TaskRecord, inputs: list[TaskInput], read_at: datetime) -> None:
        """Keep the record and inputs as stored (read from the ledger at ``read_at``)."""
        self._stored[record.id] = Stored(record, inputs, read_at)

    def keys(self) -> set[str]:
        return set(self._stored)

    def _told(self, event: TaskDidChange) -> None:
        """A record was written (here, by anyone in this process): a copy kept of another
        version is dropped. The monitor's own writes are told before it keeps their result."""
        held = self._stored.get(event.record.id)
        if held is not None and held.record.updated_at != event.record.updated_at:
            del self._stored[event.record.id]
