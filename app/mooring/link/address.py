"""Where a data folder's engine listens, and who may talk to it.

The socket is ``engine.sock`` in the data folder, created with permissions 0600; each end
also checks the other's uid (``SO_PEERCRED``). A path longer than a Unix socket address holds
(about 107 bytes: deep test folders reach it) is reached through the folder's descriptor
(``/proc/self/fd/N/engine.sock``), the same file.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct

TYPE_CHECKING = False  # not typing's: a command's narrow client loads no typing
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

SOCKET_NAME = "engine.sock"
LOCK_NAME = "engine.lock"
_ADDRESS_MAX = 100
"""Bytes of a socket path used as it is (``sun_path`` holds 108 with its terminator)."""


def socket_path(data_dir: Path) -> Path:
    """The engine's socket for a data folder."""
    return data_dir / SOCKET_NAME


def lock_path(data_dir: Path) -> Path:
    """Held (``flock``) by the one engine of a data folder while it runs."""
    return data_dir / LOCK_NAME


@contextlib.contextmanager
def reachable(path: Path) -> Iterator[str]:
    """An address for ``path`` that fits a socket address, valid inside the block."""
    text = os.fsencode(path)
    if len(text) <= _ADDRESS_MAX:
        yield str(path)
        return
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def peer_uid(sock: Any) -> int | None:
    """The uid at the other end of a Unix socket, or asyncio's wrapper of one (``None``: not
    known)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def peer_pid(sock: Any) -> int | None:
    """The pid of the process at the other end of a Unix socket (``None`` if unknown)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    pid, _uid, _gid = struct.unpack("3i", creds)
    return int(pid)


def same_user(sock: Any) -> bool:
    """Whether the peer runs as this process's user (unknown counts as no)."""
    return peer_uid(sock) == os.getuid()
