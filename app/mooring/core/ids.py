"""Identities Mooring owns (never the server's)."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

# ``uuid`` and ``hashlib`` load on first use: a quick read-only command never makes an id.


def new_id() -> str:
    """A new random identity (UUID4 as 32 hex digits): stable, opaque, unguessable."""
    import uuid

    return uuid.uuid4().hex


ID_LENGTH = 32


def is_whole_id(key: str) -> bool:
    """Whether ``key`` has the form of a whole id from :func:`new_id` (not a prefix of one)."""
    return len(key) == ID_LENGTH and all(c in "0123456789abcdef" for c in key)


def argument_digest(arguments: dict[str, Any] | None) -> str:
    """A stable SHA-256 digest of tool arguments (canonical JSON), safe to store and log.

    The digest lets us tell two calls apart without keeping the arguments themselves.
    """
    import hashlib

    canonical = json.dumps(
        arguments or {}, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


SHORT_ID_LENGTH = 8


def short_id(identity: str) -> str:
    """The short form of one of Mooring's ids that people see and type (a unique prefix)."""
    return identity[:SHORT_ID_LENGTH]
