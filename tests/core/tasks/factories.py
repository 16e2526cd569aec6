"""Building task records for tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def make_record(state: LocalState = LocalState.WORKING, **changes: Any) -> TaskRecord:
    """A plausible record; a task id is set unless the state predates one."""
    has_task = state not in (
        LocalState.AWAITING_APPROVAL,
        LocalState.DENIED,
        LocalState.CREATING,
        LocalState.UNKNOWN_OUTCOME,
        LocalState.ABANDONED,
    )
    values: dict[str, Any] = {
        "id": "op-1",
        "server_id": "srv-1",
        "tool": "import_suppliers",
        "argument_digest": "sha256:00",
        "state": state,
        "created_at": T0,
        "updated_at": T0,
        "task_id": "task-1" if has_task else None,
        "server_created_at": T0 if has_task else None,
    }
    values.update(changes)
    return TaskRecord(**values)
