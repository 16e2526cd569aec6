"""The plain words for where a task stands: one function that every face uses.

The CLI's summaries, the window's task cards and the notifications all describe a record through
:func:`state_words`, so a state never reads differently in two places, and a flag never hides
behind another (sign-in needed is not "status unavailable"; cancel requested is not cancelled).

The ``detail`` may carry text from a server (its status message, an error message): it is
hostile until a face neutralises it for display.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState, TaskFlag

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class Tone(StrEnum):
    """How a face may colour or order a state."""

    BUSY = "busy"
    """Work is going on; nothing to do."""
    ATTENTION = "attention"
    """The user is needed: an answer, an approval, a sign-in, a decision."""
    DONE = "done"
    PROBLEM = "problem"
    """It ended badly, or Mooring cannot currently tell."""
    QUIET = "quiet"
    """Ended by the user's own choice (denied, cancelled, abandoned)."""


LABELS: dict[LocalState, str] = {
    LocalState.AWAITING_APPROVAL: "waiting for your approval",
    LocalState.CREATING: "starting",
    LocalState.WORKING: "working",
    LocalState.INPUT_REQUIRED: "needs your input",
    LocalState.COMPLETED: "completed",
    LocalState.FAILED: "failed",
    LocalState.CANCELLED: "cancelled",
    LocalState.EXPIRED: "expired",
    LocalState.DENIED: "not run — denied",
    LocalState.UNKNOWN_OUTCOME: "outcome unknown",
    LocalState.ABANDONED: "abandoned",
}
"""The label of each state on its own (flags and the cancel request may change it)."""

_TONES: dict[LocalState, Tone] = {
    LocalState.AWAITING_APPROVAL: Tone.ATTENTION,
    LocalState.CREATING: Tone.BUSY,
    LocalState.WORKING: Tone.BUSY,
    LocalState.INPUT_REQUIRED: Tone.ATTENTION,
    LocalState.COMPLETED: Tone.DONE,
    LocalState.FAILED: Tone.PROBLEM,
    LocalState.CANCELLED: Tone.QUIET,
    LocalState.EXPIRED: Tone.PROBLEM,
    LocalState.DENIED: Tone.QUIET,
    LocalState.UNKNOWN_OUTCOME: Tone.ATTENTION,
    LocalState.ABANDONED: Tone.QUIET,
}


@dataclass(frozen=True, slots=True)
class StateWords:
    """A record's state for people: a short label, optional detail, and a tone."""

    label: str
    detail: str = ""
    tone: Tone = Tone.BUSY

    def __str__(self) -> str:
        return f"{self.label} — {self.detail}" if self.detail else self.label


def tool_error_text(result: dict[str, Any] | None) -> str | None:
    """The error a tool reported in a result with ``isError: true`` (its text), else ``None``."""
    if not result or not result.get("isError"):
        return None
    texts = [
        str(block.get("text", ""))
        for block in result.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return " ".join(t.strip() for t in texts if t.strip())


def state_words(record: TaskRecord, result: dict[str, Any] | None = None) -> StateWords:
    """Where ``record`` stands, in the words every face shows.

    ``result`` (the tool round's ``CallToolResult``, when there is one) lets a completed call
    whose tool reported an error say so instead of a plain "completed".
    """
    state = record.state
    label = LABELS[state]
    tone = _TONES[state]
    details: list[str] = []
    if not record.is_terminal:
        if record.cancel_requested and state is not LocalState.UNKNOWN_OUTCOME:
            label, tone = "cancel requested", Tone.BUSY
        if TaskFlag.AUTH_REQUIRED in record.flags:
            label, tone = f"sign-in needed — last known: {label}", Tone.ATTENTION
        elif TaskFlag.STATUS_UNAVAILABLE in record.flags:
            label, tone = f"status temporarily unavailable — last known: {label}", Tone.PROBLEM
        if TaskFlag.MONITORING_STOPPED in record.flags:
            label = f"not watched — last known: {label}"
        if record.status_message:
            details.append(record.status_message)
    else:
        error = tool_error_text(result) if state is LocalState.COMPLETED else None
        if error is not None:
            label, tone = "completed — the tool reported an error", Tone.PROBLEM
            if error:
                details.append(error)
        elif state is LocalState.COMPLETED and record.cancel_requested:
            label = "completed — the cancel arrived too late"
        if record.status_message and error is None:
            details.append(record.status_message)  # the server's last word ("Imported 12 …")
    if record.reason and (record.is_terminal or state is LocalState.UNKNOWN_OUTCOME):
        details.append(record.reason)
    return StateWords(label, " — ".join(details), tone)


def needs_user(record: TaskRecord) -> bool:
    """Whether the user is the one who can move this record on."""
    return state_words(record).tone is Tone.ATTENTION
