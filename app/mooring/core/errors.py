"""Error classes that separate a user's environment problem from a bug.

A :class:`KnownError` is something the user can act on (a locked database, an unreachable
server, an expired token): it is shown as a message with a hint, never as a traceback.
Anything else that escapes is a bug and is reported loudly.
"""

from __future__ import annotations

from enum import StrEnum

from mooring.core.ids import short_id


class Remedy(StrEnum):
    """What the user can do about a problem, said by each face in its own terms (the CLI
    names a command, the window a place in the window and offers the action): services raise
    the remedy, never a face's wording."""

    ADD_PROVIDER = "add_provider"
    """No model provider is configured: add one."""
    PROVIDER_KEY = "provider_key"
    """The provider (``subject``: its name) has no usable key, or its key was refused: give it
    one."""
    PROVIDER_MODEL = "provider_model"
    """The provider (``subject``: its name) does not know its model: choose another."""
    ADD_ACCOUNT = "add_account"
    """The server has no account of that name (``subject``: the server, the account)."""
    KEY_FROM_ENV = "key_from_env"
    """No keyring can keep the provider's API key: read it from an environment variable (or
    unlock a keyring)."""
    ENGINE_LOG = "engine_log"
    """Mooring's engine failed in a way its log file explains."""
    ENGINE_GONE = "engine_gone"
    """Mooring's engine stopped: it starts again when needed; its log says why it stopped."""
    ENGINE_STUCK = "engine_stuck"
    """Mooring's engine does not answer: end it, a new one starts."""
    OLD_ENGINE = "old_engine"
    """Another version's engine runs on the data folder (``subject``: its pid): end it."""
    UNLOCK_KEYRING = "unlock_keyring"
    """No keyring can keep a secret that has no other place (an HTTP header value)."""
    KEEP_SECRETS = "keep_secrets"
    """No keyring can keep secret values: say which are not secret, or read them from
    environment variables (or unlock a keyring)."""


class KnownError(Exception):
    """A problem in the user's environment, explained in words the user can act on.

    ``hint`` is advice every face may show as is; ``remedy`` (with its ``subject``: the names
    it is about) is advice each face words itself."""

    def __init__(
        self,
        message: str,
        *,
        hint: str = "",
        code: str = "error",
        remedy: Remedy | None = None,
        subject: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code
        self.remedy = remedy
        self.subject = subject

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
