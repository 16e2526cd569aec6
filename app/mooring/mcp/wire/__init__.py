"""The two Tasks wires a connection speaks, one strategy each.

A server negotiates one of them when the connection is made (``ConnectionStatus.task_wire``):
the 2026-07-28 extension (:class:`~mooring.mcp.wire.extension.ExtensionWire`) or the 2025-11-25
Tasks (:class:`~mooring.mcp.wire.legacy.LegacyWire`). Calls go out on the negotiated one;
``tasks/get``, ``tasks/update`` and ``tasks/cancel`` on the one that created the task (the
record remembers it), so a connection holds both. Each builds its protocol's requests and hands
them to the connection's queue (:class:`WireHost`); neither owns a session or a transport.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import mcp.types as types
from mcp.client import Client
from mcp.client.session import ClientSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mooring.core.servers import ServerDefinition
from mooring.core.tasks.calls import AckOutcome, CallOutcome
from mooring.core.tasks.reconcile import Observation
from mooring.core.tasks.wire import TaskWire
from mooring.mcp import tasks_ext, tasks_legacy
from mooring.mcp.requests import Abandoned, ConnectionSettings, PlainCalls, ProgressListener, Work
from mooring.mcp.task_listen import TaskSubscription

R = TypeVar("R")


def negotiated(capabilities: types.ServerCapabilities, version: str) -> TaskWire | None:
    """The Tasks wire a server offers on a session (``None``: no Tasks): the 2026 extension
    where the server lists it under a 2026 protocol, else the 2025-11-25 Tasks where it offers
    them for ``tools/call`` under that protocol."""
    if tasks_ext.TASKS_EXTENSION in (capabilities.extensions or {}) and (
        version in MODERN_PROTOCOL_VERSIONS
    ):
        return TaskWire.EXTENSION
    if version == tasks_legacy.LEGACY_VERSION and tasks_legacy.supports_tool_tasks(
        capabilities.model_dump(by_alias=True, exclude_none=True)
    ):
        return TaskWire.LEGACY
    return None


class WireHost(Protocol):
    """What a wire uses of its connection: the queue, the plain calls and the task bookkeeping."""

    @property
    def server(self) -> ServerDefinition: ...

    @property
    def settings(self) -> ConnectionSettings: ...

    @property
    def calls(self) -> PlainCalls: ...

    @property
    def subscription(self) -> TaskSubscription: ...

    async def submit(self, work: Work[R]) -> R:
        """Queue ``work`` for the owner task and wait for its outcome."""
        ...

    def observed(self, task_id: str, seen: Observation) -> Observation:
        """Note what a reply said about a task (every wire's bookkeeping, the listen stream)."""
        ...


class TaskWireStrategy(Protocol):
    """The requests and notifications of one Tasks wire on one connection."""

    @property
    def wire(self) -> TaskWire: ...

    async def call(
        self,
        client: Client,
        tool: str,
        arguments: dict[str, Any],
        on_progress: ProgressListener | None,
        call_key: str | None,
    ) -> CallOutcome | Abandoned:
        """Send ``tools/call`` on this wire (in the owner's request task): the outcome, or
        :class:`~mooring.mcp.requests.Abandoned` past the call's limits or the user's stop."""
        ...

    async def get_task(self, task_id: str) -> Observation:
        """``tasks/get``: a snapshot, or why there is none."""
        ...

    async def update_task(self, task_id: str, responses: dict[str, dict[str, Any]]) -> AckOutcome:
        """Deliver the user's answers by input-request key."""
        ...

    async def cancel_task(self, task_id: str) -> AckOutcome:
        """``tasks/cancel``: a request; the next ``tasks/get`` shows the outcome."""
        ...

    async def follow(self, session: ClientSession, over: Callable[[], bool]) -> None:
        """Hear of the tasks' changes while the session lasts, if this wire needs a stream for
        that (the caller runs it only when someone is told of notifications)."""
        ...

    def observed(self, task_id: str, seen: Observation) -> None:
        """What a reply or a poll said about a task, whichever wire it came on."""
        ...

    @property
    def busy(self) -> bool:
        """Whether a request of this wire is held open (the connection is not idle)."""
        ...

    def session_ended(self) -> None:
        """The session is gone, and with it every request the server had sent on it."""
        ...
