"""What a CLI command is given: the host (every use case) and the terminal it talks through.

The host is the engine's, reached over the link (see ``docs/architecture.md``), or, for a
command that needs no live connection while no engine runs, one built in this process: a
command cannot tell them apart, and reaches nothing but the host's views and actions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from mooring.cli.output import Terminal as Terminal  # re-exported
from mooring.core.clock import Clock, SystemClock
from mooring.core.events import EventBus

if TYPE_CHECKING:
    from mooring.core.host_api import ChatApi, HostApi


@dataclass(slots=True)
class CliContext:
    """Collaborators for one CLI invocation: the host's use cases, and the terminal."""

    host: HostApi
    as_json: bool = False
    terminal: Terminal = field(default_factory=Terminal)
    clock: Clock = field(default_factory=SystemClock)

    # -- the terminal --------------------------------------------------------------------------

    @property
    def out(self) -> TextIO:
        return self.terminal.out

    @property
    def err(self) -> TextIO:
        return self.terminal.err

    @property
    def stdin(self) -> TextIO:
        return self.terminal.stdin

    def say(self, text: str) -> None:
        """Write a line for the user (stdout): neutralised, or exact with ``--json``."""
        self.terminal.say(text, exact=self.as_json)

    def write(self, text: str) -> None:
        """Write a prompt (no newline), neutralised."""
        self.terminal.write(text)

    def warn(self, text: str) -> None:
        """Write a line to stderr."""
        self.terminal.warn(text)

    @property
    def interactive(self) -> bool:
        """Whether a person is at a terminal to answer questions."""
        return self.terminal.interactive

    # -- the host ------------------------------------------------------------------------------

    @property
    def events(self) -> EventBus:
        """The host's events (the engine's, told in this process)."""
        return self.host.events

    @property
    def chat(self) -> ChatApi | None:
        """Conversations with a model (``mooring chat``, ``mooring conversations``)."""
        return self.host.chat
