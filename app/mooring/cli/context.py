"""What a CLI command is given: the services and ports, built by the composition root."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from mooring.core.clock import Clock
from mooring.core.events import EventBus
from mooring.core.ports import (
    AccountBook,
    Gateway,
    IssueBoard,
    PollerLock,
    RuleBook,
    SecretStore,
    ServerCatalog,
    TaskLedger,
)
from mooring.services.approvals import ApprovalBroker
from mooring.services.follower import DatabaseFollower
from mooring.services.notifier import Notifier
from mooring.services.reconciler import Reconciler, UnknownOutcomes
from mooring.services.task_monitor import TaskMonitor
from mooring.services.tool_runner import ToolRunner

if TYPE_CHECKING:
    from mooring.cli.accounts import SignInActions


@dataclass(slots=True)
class CliContext:
    """Collaborators for one CLI invocation."""

    catalog: ServerCatalog
    ledger: TaskLedger
    issues: IssueBoard
    rules: RuleBook
    accounts: AccountBook
    secrets: SecretStore
    gateway: Gateway
    monitor: TaskMonitor
    runner: ToolRunner
    broker: ApprovalBroker
    reconciler: Reconciler
    unknown: UnknownOutcomes
    events: EventBus
    clock: Clock
    sign_in: SignInActions | None = None
    poller_lock: PollerLock | None = None
    """One poller per data folder (``tasks watch``); ``None``: always poll."""
    follower: DatabaseFollower | None = None
    """Follows from the database while another process holds the poller lock."""
    notifier: Notifier | None = None
    """Private notifications (``tasks watch --notify``)."""
    as_json: bool = False
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)

    def say(self, text: str) -> None:
        """Write a line for the user (stdout)."""
        self.out.write(text + "\n")
        self.out.flush()

    def warn(self, text: str) -> None:
        """Write a line to stderr."""
        self.err.write(text + "\n")
        self.err.flush()

    @property
    def interactive(self) -> bool:
        """Whether a person is at a terminal to answer questions."""
        return self.stdin.isatty() and self.out.isatty()
