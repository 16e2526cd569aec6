"""Who owns a piece of work in flight: this process, identified so others can tell it is alive.

An owner is ``host:pid:start`` where ``start`` is the process's start time (Linux ``/proc``;
empty elsewhere). A pid reused by another program after a crash has another start time, so it
does not look like the owner.
"""

from __future__ import annotations

import os
import socket
from functools import cache


def _start_ticks(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            stat = fh.read()
    except OSError:
        return ""
    # The command name (field 2) may contain spaces; fields after it are space-separated.
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


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
    return not start or _start_ticks(pid) == start
