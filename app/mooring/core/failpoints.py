"""Failpoints: kill the process at a named step, to prove crash safety with real SIGKILLs.

Inert unless the environment variable ``MOORING_FAILPOINT`` names a point; then reaching that
point kills the process at once with SIGKILL (no cleanup, no flush: like a power cut).
``MOORING_FAILPOINT_SKIP=N`` lets the first N passes through the point go by.
"""

from __future__ import annotations

import os
import signal

ENV = "MOORING_FAILPOINT"
ENV_SKIP = "MOORING_FAILPOINT_SKIP"

POINTS = frozenset(
    {
        "call.after-intent",
        "call.after-send",
        "call.after-task-id",
        "poll.before-persist",
        "answer.before-update",
        "cancel.before-send",
    }
)

_passes: dict[str, int] = {}


def failpoint(name: str) -> None:
    """Die here if ``MOORING_FAILPOINT`` names this point (after the skips)."""
    if name not in POINTS:
        raise ValueError(f"unknown failpoint {name!r}")
    if os.environ.get(ENV) != name:
        return
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] <= int(os.environ.get(ENV_SKIP, "0")):
        return
    os.kill(os.getpid(), signal.SIGKILL)
