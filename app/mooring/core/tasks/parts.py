"""What a face needs to show a task, read together: the record and what it refers to."""

from __future__ import annotations

from dataclasses import dataclass

from mooring.core.conversation import ToolRound
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.record import TaskRecord


@dataclass(frozen=True, slots=True)
class TaskParts:
    """One task's record with its server's alias, its tool round and its input requests, as
    stored at one moment (one read, so the parts agree with each other)."""

    record: TaskRecord
    server_alias: str | None
    """``None`` when the server was removed or is unknown."""
    tool_round: ToolRound | None
    inputs: tuple[TaskInput, ...]
