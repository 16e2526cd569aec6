"""Whether a server can be started or reached as typed: one check for the window's dialog,
``mooring servers add`` and the host (kept out of ``core/servers.py``, which the quick
listing loads)."""

from __future__ import annotations

import os
import shutil
from urllib.parse import urlsplit

from mooring.core.errors import KnownError


def check_target(url: str | None, command: str | None, cwd: str | None) -> None:
    """Refuse a URL that is not http(s) with a host, a program that cannot be found (as the
    server would be started: on ``PATH``, or a path relative to its working folder) or a working
    folder that does not exist (``KnownError`` with code ``usage``). The window's dialog and
    ``mooring servers add`` refuse alike; nothing is stored."""
    if url is not None:
        parts = urlsplit(url.strip())
        if parts.scheme.lower() not in ("http", "https"):
            raise KnownError(
                f"The URL {url!r} is not an http:// or https:// address.",
                hint="Mooring speaks Streamable HTTP; other schemes cannot work.",
                code="usage",
            )
        if not parts.hostname:
            raise KnownError(f"The URL {url!r} names no host.", code="usage")
        return
    if cwd is not None and not os.path.isdir(os.path.expanduser(cwd)):
        raise KnownError(f"The working folder {cwd!r} is not an existing folder.", code="usage")
    if command is not None and not _findable(command, cwd):
        raise KnownError(
            f"The command {command!r} was not found"
            + (" on PATH." if os.sep not in command else " (or is not executable)."),
            hint="Give the full path of the program, or install it first.",
            code="usage",
        )


def _findable(program: str, cwd: str | None) -> bool:
    if os.sep in program:
        path = os.path.expanduser(program)
        if not os.path.isabs(path) and cwd is not None:
            path = os.path.join(os.path.expanduser(cwd), path)
        return os.path.isfile(path) and os.access(path, os.X_OK)
    return shutil.which(program) is not None
