"""What a CLI command is given: the host (every use case) and the terminal it talks through."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from mooring.cli.output import Terminal as Terminal  # re-exported
from mooring.core.chat import ProviderFactory
from mooring.core.clock import Clock
from mooring.core.events import EventBus
from mooring.core.ports import (
    AccountBook,
    Gateway,
    IssueBoard,
    PollerLock,
    ProviderBook,
    RuleBook,
    SecretStore,
    ServerCatalog,
    TaskLedger,
)
from mooring.services.chat import ChatService
from mooring.services.follower import DatabaseFollower
from mooring.services.host import Host
from mooring.services.notifier import Notifier
from mooring.services.task_monitor import TaskMonitor

if TYPE_CHECKING:
    from mooring.services.chat import ChatService


@dataclass(slots=True)
class CliContext:
    """Collaborators for one CLI invocation: the host's use cases, and the terminal."""

    host: Host
    as_json: bool = False
    poller_lock: PollerLock | None = None
    """One poller per data folder (``tasks watch``); ``None``: always poll."""
    follower: DatabaseFollower | None = None
    """Follows from the database while another process holds the poller lock."""
    notifier: Notifier | None = None
    """Private notifications (``tasks watch --notify``)."""
    terminal: Terminal = field(default_factory=Terminal)

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

    # -- the host's ports, for reading -----------------------------------------------------------

    @property
    def catalog(self) -> ServerCatalog:
        return self.host.catalog

    @property
    def ledger(self) -> TaskLedger:
        return self.host.ledger

    @property
    def issues(self) -> IssueBoard:
        return self.host.issue_board

    @property
    def rules(self) -> RuleBook:
        return self.host.rules

    @property
    def accounts(self) -> AccountBook:
        return self.host.accounts

    @property
    def secrets(self) -> SecretStore:
        return self.host.secrets

    @property
    def gateway(self) -> Gateway:
        return self.host.gateway

    @property
    def monitor(self) -> TaskMonitor:
        return self.host.monitor

    @property
    def events(self) -> EventBus:
        return self.host.events

    @property
    def clock(self) -> Clock:
        return self.host.clock

    @property
    def chat(self) -> ChatService | None:
        """Conversations with a model (``mooring chat``, ``mooring conversations``)."""
        return self.host.chat

    @property
    def providers(self) -> ProviderBook | None:
        return self.host.providers

    @property
    def provider_factory(self) -> ProviderFactory | None:
        return self.host.provider_factory
