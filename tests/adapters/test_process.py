"""Owner tokens: a piece of work in flight is another process's only while that process runs."""

from __future__ import annotations

import os
import subprocess
import sys

from mooring.adapters.process import current_owner, owner_alive


def _owner_of(pid: int) -> str:
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        start = fh.read().rsplit(")", 1)[-1].split()[19]
    host = current_owner().split(":", 1)[0]
    return f"{host}:{pid}:{start}"


def test_a_running_process_owns_its_work_and_a_reused_pid_does_not() -> None:
    assert owner_alive(current_owner())
    mine = current_owner()
    host, pid, start = mine.split(":")
    assert not owner_alive(f"{host}:{pid}:{int(start) + 1}")  # same pid, another start: reused


def test_a_process_that_ended_unreaped_owns_nothing() -> None:
    # A zombie: ended, but its parent (here this test; in a container often an init that
    # never reaps) has not waited for it yet. It still answers kill(0).
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    owner = _owner_of(child.pid)
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, left unreaped
    try:
        os.kill(child.pid, 0)  # still there as a zombie
        assert not owner_alive(owner)
    finally:
        child.wait()
    assert not owner_alive(owner)
