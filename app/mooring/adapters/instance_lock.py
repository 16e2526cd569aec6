"""The engine lock: one engine per data folder (an ``fcntl`` lock file).

The lock file holds the owner (host, pid) for messages; the lock itself is the kernel's, so
it is released when the process ends, however it ends — a crashed engine never blocks the
next one.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from pathlib import Path

log = logging.getLogger("mooring.lock")


class InstanceLock:
    """An exclusive, non-blocking ``flock`` on ``path``, held until :meth:`release` or exit."""

    def __init__(self, path: Path, owner: str) -> None:
        self._path = path
        self._owner = owner
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this process holds the lock."""
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if free; write who holds it. Never waits."""
        if self._fd is not None:
            return True
        self._path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{self._owner}\n".encode())
        self._fd = fd
        log.info("holding the engine lock %s", self._path)
        return True

    def release(self) -> None:
        """Let another process take it."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def holder(self) -> str | None:
        """``host pid N`` of the holder, or ``None`` when nobody holds the lock."""
        if self._fd is not None:
            return _describe(self._owner)
        if not self._path.exists():
            return None
        try:
            fd = os.open(self._path, os.O_RDONLY)
        except OSError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return _describe(self._path.read_text(encoding="utf-8").strip())
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None  # we could take it: nobody holds it
        finally:
            os.close(fd)


def _describe(owner: str) -> str:
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    return f"{host} pid {pid}" if pid else owner or "another process"
