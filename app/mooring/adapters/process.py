"""Who owns a piece of work in flight: this process, identified so others can tell it is alive.

An owner is ``host:pid:start`` where ``start`` is the process's start time (Linux ``/proc``;
empty elsewhere). A pid reused by another program after a crash has another start time, so it
does not look like the owner.
"""

from __future__ import annotations

import os
import socket
from functools import cache


def _stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (empty when unreadable)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            stat = fh.read()
    except OSError:
        return []
    # The command name (field 2) may contain spaces; fields after it are space-separated.
    return stat.rsplit(")", 1)[-1].split()


def _start_ticks(pid: int) -> str:
    fields = _stat_fields(pid)
    return fields[19] if len(fields) > 19 else ""


def _ended(pid: int) -> bool:
    """Whether ``pid`` has ended but is not reaped yet (a zombie: its parent, often an init
    that does not reap in a container, has not waited for it). It holds nothing any more."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] in ("Z", "X")


@cache
def current_owner() -> str:
    """This process's owner token."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid)}"


def owner_alive(owner: str) -> bool:
    """Whether the process named by ``owner`` still runs (on this host; others count as alive)."""
    host, _, rest = owner.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != socket.gethostname():
        return True  # cannot tell: be careful, do not take its work over
    try:
        pid = int(pid_text)
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    if _ended(pid):
        return False
    return not start or _start_ticks(pid) == start
