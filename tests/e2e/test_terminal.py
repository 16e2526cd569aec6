"""``mooring call`` with a person at a terminal (a real pseudo-terminal)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.conftest import SAMPLES, Cli, add_demo

AMBIGUOUS = str(SAMPLES / "suppliers_ambiguous_id.csv")


class Terminal:
    """A child process on a pseudo-terminal; reads are bounded waits for expected text."""

    def __init__(self, cli: Cli, *args: str) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "MOORING_DATA_DIR": str(cli.data_dir), "TERM": "dumb"}
        env.update({k: v for k, v in cli.env.items() if v is not None})
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mooring", *args],
            stdin=slave,
            stdout=slave,
            stderr=subprocess.PIPE,
            env=env,
        )
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, within: float = 60) -> str:
        """Read until ``text`` has appeared (or fail after ``within`` seconds)."""
        deadline = time.monotonic() + within
        while text not in self.seen:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{text!r} never appeared in {self.seen!r}"
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                assert chunk, f"{text!r} never appeared in {self.seen!r}"
                self.seen += chunk.decode("utf-8", "replace")
        return self.seen

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def finish(self, within: float = 60) -> int:
        """Read everything until the child exits; its exit code."""
        deadline = time.monotonic() + within
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, self.seen
            ready, _, _ = select.select([self.master], [], [], remaining)
            try:
                chunk = os.read(self.master, 4096) if ready else b""
            except OSError:
                chunk = b""
            if not chunk:
                break
            self.seen += chunk.decode("utf-8", "replace")
        code = self.process.wait(timeout=within)
        os.close(self.master)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return code


def test_an_answer_typed_at_the_prompt_is_reported_once(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path)
    term = Terminal(
        cli, "call", "demo", "import_suppliers", "--args", json.dumps({"path": AMBIGUOUS})
    )
    try:
        term.expect("Supplier identifier column")
        term.expect("] > ")  # the prompt itself (the form prints its choices first)
        term.type("vendor_code")
        code = term.finish()
    finally:
        if term.process.poll() is None:
            term.process.kill()
            term.process.wait(timeout=30)
    assert code == 0, term.seen
    assert term.seen.count("Delivered.") == 1, term.seen
    assert ": completed — Imported" in term.seen
