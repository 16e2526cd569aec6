"""Input requests a task asked for (``input_required``) and the user's answers to them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mooring.core.elicitation import ELICITATION_METHOD


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskInput:
    """One input request, by its key; keys are unique for the life of a task.

    The answer is saved before ``tasks/update`` is sent; ``acknowledged_at`` is set once the
    server acknowledged it, so an unacknowledged answer can be resent after a restart.
    """

    record_id: str
    key: str
    method: str
    params: dict[str, Any]
    created_at: datetime
    answer: dict[str, Any] | None = None
    answered_at: datetime | None = None
    acknowledged_at: datetime | None = None
    outcome: str | None = None
    """What became of the answer when it could not be delivered ("task already finished")."""

    @property
    def awaiting_answer(self) -> bool:
        """The user has not answered yet."""
        return self.answer is None

    @property
    def awaiting_delivery(self) -> bool:
        """Answered, but the server has not acknowledged it yet."""
        return self.answer is not None and self.acknowledged_at is None and self.outcome is None


def is_form(item: TaskInput) -> bool:
    """Whether an input request is a form the user fills in (an elicitation)."""
    return item.method == ELICITATION_METHOD
