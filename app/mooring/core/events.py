"""Domain events and a tiny synchronous bus: services tell, the UI and CLI listen.

Events are emitted only *after* the change they describe is persisted ("write, then tell").
Names say what happened: ``TaskDidChange``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState

log = logging.getLogger("mooring.events")


@dataclass(frozen=True, slots=True)
class TaskDidChange:
    """A task record was persisted with new state, metadata or input requests."""

    record: TaskRecord
    previous_state: LocalState
    new_inputs: tuple[TaskInput, ...] = field(default=())
    note: str | None = None

    @property
    def state_changed(self) -> bool:
        """Whether the state moved (not just metadata)."""
        return self.record.state is not self.previous_state


@dataclass(frozen=True, slots=True)
class AnswerDidSettle:
    """An answer to an input request was acknowledged, or could not be delivered."""

    record_id: str
    key: str
    delivered: bool
    detail: str


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """The user is being asked whether a tool call may go out (its record is persisted,
    awaiting approval). Carries no arguments: listeners that need them ask the broker."""

    request_id: str
    server_alias: str
    tool: str
    tool_round_id: str | None
    conversation_id: str | None


Event = TaskDidChange | AnswerDidSettle | ApprovalRequested
Listener = Callable[[Event], None]


class EventBus:
    """Calls every listener for every event, in subscription order; a failing listener is
    logged and does not stop the others (a UI bug must not lose a task update)."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns a function that removes it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: Event) -> None:
        """Tell every listener."""
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed on %s", type(event).__name__)
