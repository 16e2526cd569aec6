"""A gateway that loads the MCP SDK only when something first talks to a server.

Commands that only read the ledger (``mooring tasks list``) then start without importing the
SDK at all; listeners registered before that are handed over when the real gateway is built.
The SDK's import (seconds on a busy machine) runs in a worker thread, never on the caller's
loop: a window's GUI thread keeps painting meanwhile.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import logging
import threading
from collections.abc import Callable, Sequence

from mooring.core.ports import ConnectionStatus, Gateway, ServerConnection
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.reconcile import Observation, ServerTask

log = logging.getLogger(__name__)

TaskListener = Callable[[str, str, Observation | None], None]
CoverageListener = Callable[[str, frozenset[str], bool], None]


class LazyGateway:
    """A ``Gateway`` that builds the real one (through ``factory``) on first use."""

    def __init__(self, factory: Callable[[], Gateway], *, modules: Sequence[str] = ()) -> None:
        """``modules``: what ``factory`` imports (imported by :meth:`warm` in a thread)."""
        self._factory = factory
        self._modules = tuple(modules)
        self._loaded: Callable[[], None] | None = None
        self._importing: concurrent.futures.Future[None] | None = None
        self._real: Gateway | None = None
        self._task_listeners: list[TaskListener] = []
        self._status_listeners: list[Callable[[ConnectionStatus], None]] = []
        self._notifications_wanted = False
        self._tools_listeners: list[Callable[[str, str | None], None]] = []
        self._lists_listeners: list[Callable[[str, str | None, str], None]] = []
        self._coverage_listeners: list[CoverageListener] = []
        self._expected: list[tuple[str, str | None, ServerTask]] = []
        self._closed = False

    @property
    def loaded(self) -> bool:
        """Whether the real gateway exists (the SDK is loaded)."""
        return self._real is not None

    def when_loaded(self, then: Callable[[], None]) -> None:
        """Call ``then`` once the real gateway is built (the SDK in memory): at once if it is."""
        if self._real is not None:
            then()
        else:
            self._loaded = then

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
            for coverage_listener in self._coverage_listeners:
                self._real.add_coverage_listener(coverage_listener)
            for lists_listener in self._lists_listeners:
                self._real.add_lists_listener(lists_listener)
            for server_id, profile_id, seen in self._expected:
                self._real.expect_task(server_id, profile_id, seen)
            self._expected.clear()
            if self._loaded is not None:
                self._loaded()
        return self._real

    def warm(self, *, then: Callable[[], None] | None = None) -> None:
        """Start importing the SDK in a worker thread, unless done or under way; ``then``
        runs on that thread after the imports (what the first connection would do on the
        caller's loop otherwise: building the TLS context), before :meth:`wait_warm` returns.
        Its failure is left for the connection that needs it to meet again, and report."""
        if self._real is not None or self._importing is not None or not self._modules:
            return
        importing: concurrent.futures.Future[None] = concurrent.futures.Future()
        importing.set_running_or_notify_cancel()  # a cancelled waiter cannot cancel the import
        self._importing = importing

        def load_modules() -> None:
            try:
                for name in self._modules:
                    importlib.import_module(name)
                if then is not None:
                    then()
            except Exception:  # a head start only: see the docstring
                # The factory's own import (or the connection) meets it again and reports it.
                log.debug("warming the MCP SDK failed", exc_info=True)
            finally:
                importing.set_result(None)

        threading.Thread(target=load_modules, name="mooring-sdk-import", daemon=True).start()

    def wait_warm(self) -> None:
        """Block until :meth:`warm`'s import is over (at once when none is under way). For a
        worker thread: the window's loader waits here, while its shell is all there is to
        paint, rather than let the import compete with the first seconds of a live window."""
        if self._importing is not None:
            self._importing.result()

    async def connect(
        self, server: ServerDefinition, profile_id: str | None = None
    ) -> ServerConnection:
        if self._real is None:
            self.warm()
            if self._importing is not None:
                await asyncio.wrap_future(self._importing)
        real = self.load()
        if self._closed:
            # Closed while the SDK was loading (the window quit at launch): the real gateway
            # is closed before it connects, so its connection answers "not sent" and starts
            # no server process that nothing would stop.
            await real.aclose()
        return await real.connect(server, profile_id)

    def statuses(self) -> list[ConnectionStatus]:
        return self._real.statuses() if self._real is not None else []

    async def disconnect(
        self, server_id: str, profile_id: str | None = None, *, every_account: bool = False
    ) -> None:
        if self._real is not None:  # nothing is connected before the real one exists
            await self._real.disconnect(server_id, profile_id, every_account=every_account)

    def idle_connections(self, idle_after: float) -> list[tuple[str, str | None]]:
        return self._real.idle_connections(idle_after) if self._real is not None else []

    async def end_if_idle(self, server_id: str, profile_id: str | None, idle_after: float) -> bool:
        return self._real is not None and await self._real.end_if_idle(
            server_id, profile_id, idle_after
        )

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

    def task_covered(self, server_id: str, profile_id: str | None, task_id: str) -> bool:
        return self._real is not None and self._real.task_covered(server_id, profile_id, task_id)

    def expect_task(self, server_id: str, profile_id: str | None, seen: ServerTask) -> None:
        if self._real is not None:
            self._real.expect_task(server_id, profile_id, seen)
        else:
            self._expected.append((server_id, profile_id, seen))

    def add_coverage_listener(self, listener: CoverageListener) -> None:
        if self._real is not None:
            self._real.add_coverage_listener(listener)
        else:
            self._coverage_listeners.append(listener)

    def add_tools_listener(self, listener: Callable[[str, str | None], None]) -> None:
        if self._real is not None:
            self._real.add_tools_listener(listener)
        else:
            self._tools_listeners.append(listener)

    def add_lists_listener(self, listener: Callable[[str, str | None, str], None]) -> None:
        if self._real is not None:
            self._real.add_lists_listener(listener)
        else:
            self._lists_listeners.append(listener)

    def secrets_changed(self, server_id: str) -> None:
        if self._real is not None:  # else nothing is connected yet
            self._real.secrets_changed(server_id)

    def signed_in(self, server_id: str, profile_id: str | None) -> None:
        if self._real is not None:  # else nothing is connected yet
            self._real.signed_in(server_id, profile_id)

    async def aclose(self) -> None:
        self._closed = True
        if self._real is not None:
            await self._real.aclose()
