"""Local task states, flags and the explicit transition table.

Local states are Mooring's normalised view of one tool call that may become an MCP task. Five
mirror the server's ``status`` (working, input_required, completed, failed, cancelled); the rest
are ours: the approval gate, the create request in flight, the outcomes only the host can know.

``cancel_requested`` is deliberately *not* a state: it is what the user asked for, while the state
is what the server last reported. A cancel can lose the race ("completed — the cancel arrived too
late"), so the state must stay free to follow the server. It is a boolean on the record.

Self-edges are not transitions: a poll that reports the same status updates the record's metadata,
not its state.
"""

from __future__ import annotations

from enum import StrEnum

from mooring.core.errors import IllegalTransition


class LocalState(StrEnum):
    """Where one tool call stands, as far as Mooring knows."""

    AWAITING_APPROVAL = "awaiting_approval"
    """The policy asked the user; nothing has been sent."""
    DENIED = "denied"
    """The user (or a rule) refused; nothing was sent. Terminal."""
    CREATING = "creating"
    """Intent persisted; ``tools/call`` sent or about to be; no answer yet."""
    UNKNOWN_OUTCOME = "unknown_outcome"
    """The request may have reached the server but no answer came: never replayed blindly."""
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    """Terminal. Includes tool results with ``isError: true`` (the tool ran and said no)."""
    FAILED = "failed"
    """Terminal. A JSON-RPC error: the call itself failed."""
    CANCELLED = "cancelled"
    """Terminal. The server confirmed the cancellation."""
    EXPIRED = "expired"
    """Terminal. The server no longer knows the task (``-32602`` or its TTL passed)."""
    ABANDONED = "abandoned"
    """Terminal. The user gave up on an unknown outcome instead of retrying it."""


class TaskFlag(StrEnum):
    """Conditions beside the state; none of them is an outcome."""

    STATUS_UNAVAILABLE = "status_unavailable"
    """The last status request failed; the last known state is kept."""
    AUTH_REQUIRED = "auth_required"
    """The credentials were refused: the user must sign in again. Not a failure."""
    MONITORING_STOPPED = "monitoring_stopped"
    """The user chose to stop polling this task."""


S = LocalState

TERMINAL_STATES: frozenset[LocalState] = frozenset(
    {S.DENIED, S.COMPLETED, S.FAILED, S.CANCELLED, S.EXPIRED, S.ABANDONED}
)
"""States that never change once reached."""

SERVER_STATES: frozenset[LocalState] = frozenset(
    {S.WORKING, S.INPUT_REQUIRED, S.COMPLETED, S.FAILED, S.CANCELLED}
)
"""States that mirror a server-reported ``status``."""

MONITORED_STATES: frozenset[LocalState] = frozenset({S.WORKING, S.INPUT_REQUIRED})
"""States in which the host polls the server for news."""

TRANSITIONS: dict[LocalState, frozenset[LocalState]] = {
    S.AWAITING_APPROVAL: frozenset({S.CREATING, S.DENIED}),
    S.CREATING: frozenset(
        {S.WORKING, S.INPUT_REQUIRED, S.COMPLETED, S.FAILED, S.CANCELLED, S.UNKNOWN_OUTCOME}
    ),
    # An unknown outcome is never resolved by replaying the call: a retry is a new operation.
    S.UNKNOWN_OUTCOME: frozenset({S.ABANDONED}),
    S.WORKING: frozenset({S.INPUT_REQUIRED, S.COMPLETED, S.FAILED, S.CANCELLED, S.EXPIRED}),
    S.INPUT_REQUIRED: frozenset({S.WORKING, S.COMPLETED, S.FAILED, S.CANCELLED, S.EXPIRED}),
    S.DENIED: frozenset(),
    S.COMPLETED: frozenset(),
    S.FAILED: frozenset(),
    S.CANCELLED: frozenset(),
    S.EXPIRED: frozenset(),
    S.ABANDONED: frozenset(),
}


def is_terminal(state: LocalState) -> bool:
    """Whether ``state`` is absorbing."""
    return state in TERMINAL_STATES


def can_transition(current: LocalState, target: LocalState) -> bool:
    """Whether the table has the edge ``current → target``."""
    return target in TRANSITIONS[current]


def check_transition(current: LocalState, target: LocalState) -> None:
    """Raise :class:`IllegalTransition` unless ``current → target`` is in the table."""
    if not can_transition(current, target):
        if is_terminal(current):
            raise IllegalTransition(f"{current} is terminal; it cannot become {target}")
        raise IllegalTransition(f"no transition {current} → {target}")


def state_for_server_status(status: str) -> LocalState | None:
    """The local state mirroring a server ``status`` string, or ``None`` if it is not one."""
    try:
        state = LocalState(status)
    except ValueError:
        return None
    return state if state in SERVER_STATES else None
