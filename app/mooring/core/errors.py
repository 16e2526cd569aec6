"""Error classes that separate a user's environment problem from a bug.

A :class:`KnownError` is something the user can act on (a locked database, an unreachable
server, an expired token): it is shown as a message with a hint, never as a traceback.
Anything else that escapes is a bug and is reported loudly.
"""

from __future__ import annotations

from mooring.core.ids import short_id


class KnownError(Exception):
    """A problem in the user's environment, explained in words the user can act on."""

    def __init__(self, message: str, *, hint: str = "", code: str = "error") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip()


class RecordChanged(KnownError, ValueError):
    """A task record changed under us (another Mooring window or command wrote it first)."""

    def __init__(self, record_id: str, detail: str) -> None:
        super().__init__(
            f"Task {short_id(record_id)} was changed by another Mooring window or command "
            f"({detail}).",
            hint="Its current state is shown; nothing was lost.",
            code="record_changed",
        )
        self.record_id = record_id


class IllegalTransition(Exception):  # a domain rule violation, named for what it is
    """A task record was asked to move along an edge the transition table does not have.

    This is a programming error (the caller must consult the table), not a user problem.
    """


class NotFound(KnownError):  # reads better at call sites than NotFoundError
    """A record the user named does not exist."""

    def __init__(self, what: str, key: str) -> None:
        super().__init__(f"No {what} called {key!r}.", code="not_found")
        self.what = what
        self.key = key
