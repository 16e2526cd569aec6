"""What the window probes share: the task rows' state words, noted each time they change."""

from __future__ import annotations

from collections.abc import Callable

from mooring.ui.models.tasks import TaskListModel, TaskRole


def changed_row_states(model: TaskListModel, seen: list[list[str]]) -> list[str] | None:
    """The rows' state words, appended to ``seen``; ``None`` when they are as last seen."""
    states = [
        str(model.index(row, 0).data(TaskRole.STATE_WORDS)) for row in range(model.rowCount())
    ]
    if seen and seen[-1] == states:
        return None
    seen.append(states)
    return states


def on_rows_change(model: TaskListModel, check: Callable[..., None]) -> None:
    """Call ``check`` whenever the rows change, and once now."""
    model.dataChanged.connect(check)
    model.rowsInserted.connect(check)
    model.modelReset.connect(check)
    check()
