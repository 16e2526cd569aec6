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
    RuleBook,
    SecretStore,
    ServerCatalog,
    TaskLedger,
)
from mooring.core.text import neutralize
from mooring.services.approvals import ApprovalBroker
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
    as_json: bool = False
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)

    def say(self, text: str) -> None:
        """Write a line for the user (stdout).

        Every human line is neutralised (control and bidi characters made visible), since it
        may quote a server; with ``--json`` the line is printed exactly (JSON escapes them).
        """
        self.out.write((text if self.as_json else neutralize(text)) + "\n")
        self.out.flush()

    def write(self, text: str) -> None:
        """Write ``text`` for the user without a newline (a prompt), neutralised."""
        self.out.write(neutralize(text))
        self.out.flush()

    def warn(self, text: str) -> None:
        """Write a neutralised line to stderr (always for people, even with ``--json``)."""
        self.err.write(neutralize(text) + "\n")
        self.err.flush()

    @property
    def interactive(self) -> bool:
        """Whether a person is at a terminal to answer questions."""
        return self.stdin.isatty() and self.out.isatty()
