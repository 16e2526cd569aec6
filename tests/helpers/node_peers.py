"""MCP servers from npm that the suite runs as real processes (``tests/peers_node``).

The versions are pinned in ``tests/peers_node/package-lock.json``; the first test that needs
them runs ``npm ci`` there (under a file lock: several pytest workers may ask at once). Node.js
and npm come from ``packaging/system-deps.sh``.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

PEERS = Path(__file__).resolve().parents[1] / "peers_node"
EVERYTHING = (
    PEERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)


SEQUENTIAL_THINKING = (
    PEERS
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-sequential-thinking"
    / "dist"
    / "index.js"
)


def everything_server() -> Path:
    """The reference "everything" server's entry point (installed on first use)."""
    return _installed(EVERYTHING)


def sequential_thinking_server() -> Path:
    """The reference "sequential thinking" server's entry point (installed on first use): a
    stdio server that keeps the thoughts it is sent in memory, as long as its process lives."""
    return _installed(SEQUENTIAL_THINKING)


def _installed(entry: Path) -> Path:
    """``entry``, once the pinned peers are installed (``npm ci``, once for all workers)."""
    if entry.exists():
        return entry
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise RuntimeError("Node.js and npm are needed: run `bash packaging/system-deps.sh`")
    with (PEERS / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not entry.exists():
            subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=PEERS,
                check=True,
                timeout=600,
                stdout=subprocess.DEVNULL,
            )
    return entry


def node() -> str:
    """The ``node`` executable."""
    found = shutil.which("node")
    if found is None:
        raise RuntimeError("Node.js is needed: run `bash packaging/system-deps.sh`")
    return found
