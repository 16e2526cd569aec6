"""Real MCP servers for the wire tests: the bundled demo server and small peers, as processes.

Every process started here is stopped by its pid (SIGTERM, then SIGKILL) by its owner's
``stop_all``; HTTP servers bind 127.0.0.1 only, and port 0 lets the server pick a free port.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import anyio

from mooring.core.ids import new_id
from mooring.core.ports import ConnectionState, ConnectionStatus
from mooring.core.servers import ServerDefinition, Transport
from mooring.mcp.connection import McpConnection

PEERS = Path(__file__).parent / "peers"
T = TypeVar("T")

FAST_DEMO_FLAGS: tuple[str, ...] = (
    "--conformance-fixtures",
    "--poll-interval-ms",
    "50",
    "--lease-ms",
    "600",
)
"""Small intervals so tasks move quickly; ``--conformance-fixtures`` adds ``slow_compute``,
``greet``, ``confirm_delete``, ``protocol_error_job`` and friends."""


def stdio_definition(
    command: str, *args: str, alias: str = "server", env: dict[str, str] | None = None
) -> ServerDefinition:
    """A stdio server definition (random id)."""
    return ServerDefinition(
        id=new_id(),
        alias=alias,
        transport=Transport.STDIO,
        created_at=datetime.now(UTC),
        command=command,
        args=args,
        env=env or {},
    )


def http_definition(url: str, *, alias: str = "server") -> ServerDefinition:
    """A Streamable HTTP server definition (random id)."""
    return ServerDefinition(
        id=new_id(), alias=alias, transport=Transport.HTTP, created_at=datetime.now(UTC), url=url
    )


@dataclass
class RequestLog:
    """The demo server's ``--request-log``: one JSON line per received JSON-RPC request."""

    path: Path

    def entries(self) -> list[dict[str, Any]]:
        """Every request logged so far."""
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def methods(self) -> list[str]:
        """The JSON-RPC methods received, in order."""
        return [str(entry["method"]) for entry in self.entries()]

    def count(self, method: str) -> int:
        """How many ``method`` requests the server received."""
        return self.methods().count(method)

    def pids(self) -> set[int]:
        """The server processes that logged requests."""
        return {int(entry["pid"]) for entry in self.entries()}


@dataclass
class DemoServer:
    """Where one demo server keeps its state (shared by every instance started on it)."""

    root: Path
    flags: tuple[str, ...] = FAST_DEMO_FLAGS
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    port: int = 0

    @property
    def store(self) -> Path:
        return self.root / "demo-store.sqlite3"

    @property
    def log(self) -> RequestLog:
        return RequestLog(self.root / "requests.jsonl")

    def argv(self, *extra: str) -> list[str]:
        return [
            "-m",
            "mooring.demo_server",
            "--store",
            str(self.store),
            "--request-log",
            str(self.log.path),
            *self.flags,
            *extra,
        ]

    def stdio(self, *extra: str, alias: str = "demo") -> ServerDefinition:
        """A definition that starts this demo server over stdio (the connection spawns it)."""
        # The server runs the same sources as the code under test (a stdio server does not
        # inherit the environment, so a worktree's PYTHONPATH is passed on explicitly).
        env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
        return stdio_definition(sys.executable, *self.argv(*extra), alias=alias, env=env)

    def start_http(self, *extra: str) -> str:
        """Start an HTTP instance (on the same port as before, if any); its URL."""
        argv = [sys.executable, *self.argv("--http", "--port", str(self.port), *extra)]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.processes.append(process)
        line = read_line(process, timeout=30.0)
        url = line.rsplit(" ", 1)[-1]
        self.port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        return url

    def kill(self) -> None:
        """SIGKILL every running HTTP instance (a crash, not a shutdown)."""
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)

    def stop_all(self) -> None:
        """Stop every process this server started, by pid."""
        stop_processes(self.processes)


def stop_processes(processes: Iterable[subprocess.Popen[bytes]]) -> None:
    """SIGTERM, then SIGKILL whatever is left; reap everything."""
    for process in processes:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()


def read_line(process: subprocess.Popen[bytes], *, timeout: float) -> str:
    """The first stdout line of ``process``, within ``timeout`` (a bounded wait, no sleeping)."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while b"\n" not in buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (process.poll() is not None and not selector.select(0)):
                raise RuntimeError(f"server did not report its URL (exit {process.poll()})")
            if selector.select(remaining):
                chunk = os.read(process.stdout.fileno(), 4096)
                if not chunk:
                    raise RuntimeError(f"server exited before listening ({process.wait()})")
                buffer += chunk
    return buffer.split(b"\n", 1)[0].decode().strip()


def start_peer(
    script: Path, *args: str, python: str = sys.executable, timeout: float = 60
) -> tuple[subprocess.Popen[bytes], str]:
    """Start an HTTP peer script with ``--http`` (and ``args``) under ``python``; return it and
    the URL it reported."""
    process = subprocess.Popen(
        [python, str(script), "--http", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        line = read_line(process, timeout=timeout)
    except BaseException:
        stop_processes([process])
        raise
    return process, line.rsplit(" ", 1)[-1]


def free_port() -> int:
    """A port nothing listens on (bound to port 0, then released)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def eventually(
    probe: Callable[[], Any], accept: Callable[[Any], bool], *, within: float = 20.0
) -> Any:
    """Call ``probe`` (sync or async) until ``accept`` holds for its value, within ``within`` s.

    A condition wait for state that lives in another process (a task's status, a log file):
    there is no event to await there, so it re-asks at a short interval under a deadline.
    """
    with anyio.fail_after(within):
        while True:
            value = probe()
            if hasattr(value, "__await__"):
                value = await value
            if accept(value):
                return value
            await anyio.sleep(0.02)


async def settled(connection: McpConnection, *, within: float = 30.0) -> ConnectionStatus:
    """Wait (bounded) until the connection is ready or has failed."""
    with anyio.fail_after(within):
        return await connection.wait_for_status(
            lambda s: s.state in (ConnectionState.READY, ConnectionState.FAILED)
        )
