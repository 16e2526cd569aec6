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


LOOPBACK = PEERS / "loopback.cjs"


def start_everything_http(log: Path, timeout: float = 60) -> tuple[subprocess.Popen[bytes], str]:
    """The "everything" server over Streamable HTTP on a free 127.0.0.1 port (its own
    transport listens on every interface: ``loopback.cjs`` holds it to loopback), its HTTP
    DELETEs logged to ``log``; the process and its URL. Stop it with
    ``tests.mcp.servers.stop_processes``."""
    import os

    from tests.mcp.servers import read_line, stop_processes

    env = {**os.environ, "PORT": "0", "MOORING_PEER_LOG": str(log)}
    process = subprocess.Popen(
        [node(), "-r", str(LOOPBACK), str(everything_server()), "streamableHttp"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        line = read_line(process, timeout=timeout)
        while not line.startswith("listening on "):  # the server's own words come first
            line = read_line(process, timeout=timeout)
    except BaseException:
        stop_processes([process])
        raise
    return process, line.rsplit(" ", 1)[-1]
