"""Domain events and a small synchronous bus: services tell, the faces listen.

Events are emitted only *after* the change they describe is persisted ("write, then tell").
Names say what happened (``TaskDidChange``) or what is about to (``*_will_*``). The window, the
CLI and the notifier subscribe to the event types they care about with :meth:`EventBus.on`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# Not typing's TYPE_CHECKING, and no logging until a listener fails: a command's narrow client
# (mooring.cli.calling) unpickles events without loading either (docs/architecture.md).
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a face loads what an event carries when one arrives
    from typing import TypeVar

    from mooring.core.approval.request import ApprovalOutcome, ApprovalRequest
    from mooring.core.conversation import Message
    from mooring.core.issues import Issue
    from mooring.core.tasks.inputs import TaskInput
    from mooring.core.tasks.record import TaskRecord
    from mooring.core.tasks.states import LocalState


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
class ToolRoundDidFinish:
    """A tool round's outcome (result, error, refusal, loss) was stored: the final word on it."""

    record: TaskRecord


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """The user is asked whether a call may be sent (a question is open)."""

    request: ApprovalRequest


@dataclass(frozen=True, slots=True)
class ApprovalDidEnd:
    """An approval question was decided (or withdrawn), and the decision audited."""

    request_id: str
    outcome: ApprovalOutcome
    reason: str


@dataclass(frozen=True, slots=True)
class IssueDidChange:
    """A persistent issue was raised, updated or resolved."""

    issue: Issue
    resolved: bool = False


@dataclass(frozen=True, slots=True)
class ConnectionDidChange:
    """A server connection changed state (connecting, ready, failed, stopped)."""

    server_id: str
    state: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ToolsDidChange:
    """The tools a server offers changed (or were read for the first time)."""

    server_id: str


@dataclass(frozen=True, slots=True)
class LibraryDidChange:
    """A server said its prompts or resources changed (``kind``: ``"prompts"`` or
    ``"resources"``): read them again."""

    server_id: str
    kind: str


@dataclass(frozen=True, slots=True)
class MessageDidAppend:
    """A message was stored in a conversation (a user's, a reply, a tool result, a follow-up)."""

    conversation_id: str
    message: Message


@dataclass(frozen=True, slots=True)
class ReplyDidStream:
    """A piece of the model's reply arrived (not stored yet: the whole reply is stored when it
    ends, and announced by :class:`MessageDidAppend` with the same ``message_id``)."""

    conversation_id: str
    message_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class TurnDidStart:
    """A model turn began in a conversation (a reply is being written until its
    :class:`TurnDidEnd`)."""

    conversation_id: str


@dataclass(frozen=True, slots=True)
class TurnDidEnd:
    """A model turn is over: its messages are stored. ``error`` says in words why it ended
    early (``None`` when it ended normally); ``started_tasks`` are operation ids of background
    tasks the turn started."""

    conversation_id: str
    reply_message_id: str | None
    error: str | None = None
    started_tasks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class VersionsDidChange:
    """What a conversation shows changed as a whole. ``forked``: a message was edited or a
    reply regenerated — what followed ``after_message_id`` (``None``: the start) is now a
    hidden version and a new turn follows (a face drops those rows; the new ones arrive as
    usual). Else another version is shown: a face showing it reads it again."""

    conversation_id: str
    after_message_id: str | None = None
    forked: bool = False


@dataclass(frozen=True, slots=True)
class ServersDidChange:
    """A server was added, imported, edited, trusted or removed (read the list again)."""

    server_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EngineDidStop:
    """The engine stopped on its own for a reason the user must hear (its database file was
    deleted or replaced); ``saved_to`` is where what it held was copied, if anywhere."""

    reason: str
    saved_to: str | None = None


def stopped_words(event: EngineDidStop) -> str:
    """Why the engine stopped, and where what it held went, for people."""
    saved = (
        f" What it held is saved in {event.saved_to}."
        if event.saved_to
        else " What it held could not be saved."
    )
    return f"Mooring's engine stopped: {event.reason}.{saved}"


Event = (
    TaskDidChange
    | AnswerDidSettle
    | ToolRoundDidFinish
    | ApprovalRequested
    | ApprovalDidEnd
    | IssueDidChange
    | ConnectionDidChange
    | ToolsDidChange
    | LibraryDidChange
    | MessageDidAppend
    | ReplyDidStream
    | TurnDidStart
    | TurnDidEnd
    | VersionsDidChange
    | ServersDidChange
    | EngineDidStop
)
Listener = Callable[[Event], None]
if TYPE_CHECKING:
    E = TypeVar("E", bound=Event)


class EventBus:
    """Calls every listener for every event, in subscription order; a failing listener is
    logged and does not stop the others (a UI bug must not lose a task update)."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener of every event; returns a function that removes it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def on(self, kind: type[E], handler: Callable[[E], None]) -> Callable[[], None]:
        """Call ``handler`` with every event of type ``kind``; returns the unsubscribe."""

        def listener(event: Event) -> None:
            if isinstance(event, kind):
                handler(event)

        return self.subscribe(listener)

    def emit(self, event: Event) -> None:
        """Tell every listener."""
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                import logging

                logging.getLogger("mooring.events").exception(
                    "event listener failed on %s", type(event).__name__
                )
