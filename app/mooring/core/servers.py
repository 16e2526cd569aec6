"""MCP server definitions and the accounts (credential profiles) used with them."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum


class Transport(StrEnum):
    """How Mooring reaches a server."""

    STDIO = "stdio"
    HTTP = "http"
    """Streamable HTTP."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerDefinition:
    """A user-configured MCP server. Secret header and environment values live in the keyring
    (stored here as empty strings); a non-empty ``env`` value is plain configuration the user
    said is not secret; ``env_refs`` names variables read at connect time."""

    id: str
    alias: str
    transport: Transport
    created_at: datetime
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    trusted: bool = False
    enabled: bool = True
    builtin: bool = False
    """Configured by Mooring itself (the bundled demo server), not by the user."""
    allowed_tools: tuple[str, ...] | None = None
    """When set, only these tools (names or patterns) may be called."""
    hidden_tools: tuple[str, ...] = ()
    """Tools (names or patterns) the model never sees and that never run ("Never")."""
    env_refs: dict[str, str] = field(default_factory=dict)
    """Environment values read from Mooring's own environment when the server starts: the
    server's variable → the variable it is read from (only names are stored)."""

    def __post_init__(self) -> None:
        if self.transport is Transport.STDIO and not self.command:
            raise ValueError("a stdio server needs a command")
        if self.transport is Transport.HTTP and not self.url:
            raise ValueError("a Streamable HTTP server needs a URL")

    def hides(self, tool: str) -> bool:
        """Whether ``tool`` is one of its hidden tools (by name or pattern): never shown to the
        model nor offered to run."""
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.hidden_tools)

    @property
    def identity(self) -> str:
        """What the server *is* (command line or URL), independent of the alias.

        Trust and approval rules bind to this, so a renamed or re-pointed server does not
        inherit them.
        """
        if self.transport is Transport.STDIO:
            return "stdio:" + "\x1f".join((self.command or "", *self.args))
        return "http:" + (self.url or "")

    @property
    def target(self) -> str:
        """A one-line human description of where the server is."""
        if self.transport is Transport.STDIO:
            return " ".join((self.command or "", *self.args))
        return self.url or ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CredentialProfile:
    """One account on one server. Its secrets are in the OS keyring under its id."""

    id: str
    server_id: str
    label: str
    created_at: datetime
