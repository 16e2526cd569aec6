"""The streams one CLI invocation reads and writes (kept light: quick commands use it too)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from mooring.core.text import neutralize

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import TextIO


@dataclass(slots=True)
class Terminal:
    """The streams one CLI invocation reads and writes."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)

    def say(self, text: str, *, exact: bool = False) -> None:
        """Write a line for the user (stdout).

        Every human line is neutralised (control and bidi characters made visible), since it
        may quote a server; ``exact`` lines (``--json`` output) are printed as they are (JSON
        escapes them).
        """
        self.out.write((text if exact else neutralize(text)) + "\n")
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
