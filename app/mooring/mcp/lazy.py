"""A gateway that loads the MCP SDK only when something first talks to a server.

Commands that only read the ledger (``mooring tasks list``) then start without importing the
SDK at all; listeners registered before that are handed over when the real gateway is built.
"""

from __future__ import annotations

from collections.abc import Callable

from mooring.core.ports import ConnectionStatus, Gateway, ServerConnection
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.reconcile import Observation

TaskListener = Callable[[str, str, Observation | None], None]


class LazyGateway:
    """A ``Gateway`` that builds the real one (through ``factory``) on first use."""

    def __init__(self, factory: Callable[[], Gateway]) -> None:
        self._factory = factory
        self._real: Gateway | None = None
        self._task_listeners: list[TaskListener] = []
        self._status_listeners: list[Callable[[ConnectionStatus], None]] = []
        self._notifications_wanted = False
        self._tools_listeners: list[Callable[[str, str | None], None]] = []

    @property
    def loaded(self) -> bool:
        """Whether the real gateway exists (the SDK is loaded)."""
        return self._real is not None

    def load(self) -> Gateway:
        """Build the real gateway now (idempotent) and return it."""
        if self._real is None:
            self._real = self._factory()
            for listener in self._task_listeners:
                self._real.add_task_listener(listener)
            for status_listener in self._status_listeners:
                self._real.add_status_listener(status_listener)
            self._real.want_task_notifications(self._notifications_wanted)
            for tools_listener in self._tools_listeners:
                self._real.add_tools_listener(tools_listener)
        return self._real

    async def connect(
        self, server: ServerDefinition, profile_id: str | None = None
    ) -> ServerConnection:
        return await self.load().connect(server, profile_id)

    def statuses(self) -> list[ConnectionStatus]:
        return self._real.statuses() if self._real is not None else []

    def add_task_listener(self, listener: TaskListener) -> None:
        if self._real is not None:
            self._real.add_task_listener(listener)
        else:
            self._task_listeners.append(listener)

    def add_status_listener(self, listener: Callable[[ConnectionStatus], None]) -> None:
        if self._real is not None:
            self._real.add_status_listener(listener)
        else:
            self._status_listeners.append(listener)

    def want_task_notifications(self, wanted: bool) -> None:
        self._notifications_wanted = wanted
        if self._real is not None:
            self._real.want_task_notifications(wanted)

    def add_tools_listener(self, listener: Callable[[str, str | None], None]) -> None:
        if self._real is not None:
            self._real.add_tools_listener(listener)
        else:
            self._tools_listeners.append(listener)

    async def aclose(self) -> None:
        if self._real is not None:
            await self._real.aclose()
