"""Which Tasks protocol a server task belongs to: its own module, so the task record (and
the quick ``tasks list``) loads none of the call outcomes."""

from __future__ import annotations

from enum import StrEnum


class TaskWire(StrEnum):
    """Which Tasks protocol created a server task; its follow-up requests must use the same.

    ``EXTENSION`` is the 2026 ``io.modelcontextprotocol/tasks`` extension (``tasks/get`` carries
    the result, ``tasks/update`` the answers); ``LEGACY`` is the experimental 2025-11-25 core
    Tasks (``tasks/result`` carries the result and delivers the server's questions).
    """

    EXTENSION = "extension"
    LEGACY = "2025-11-25"
