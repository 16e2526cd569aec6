"""Test-side Tasks client pieces and process helpers for driving the demo server for real."""

from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import anyio
import httpx2
import mcp.types as types
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import StdioServerParameters
from mcp.client import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict

# The host's own typed tasks/* requests: the server is tested against the client wire it serves.
from mooring.mcp.tasks_ext import (
    CancelTaskRequest,
    GetTaskRequest,
    TaskIdParams,
    UpdateTaskParams,
    UpdateTaskRequest,
)

TASKS = "io.modelcontextprotocol/tasks"
PROTOCOL = "2026-07-28"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
SERVER_MODULE = "mooring.demo_server"
SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
BASE_FLAGS = ("--poll-interval-ms", "40", "--lease-ms", "1500", "--log-level", "WARNING")


# -- typed tasks/* requests for a plain mcp.Client ------------------------------------------------


class CreatedTask(types.Result):
    """``CreateTaskResult``."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    """A ``tasks/get`` result."""

    model_config = ConfigDict(extra="allow")

    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    @property
    def structured(self) -> dict[str, Any]:
        """The completed tool result's ``structuredContent``."""
        assert self.result is not None, self
        return cast(dict[str, Any], self.result["structuredContent"])


class Ack(types.Result):
    """An empty ``{resultType: "complete"}`` ack."""


class TasksDeclared(ClientExtension):
    """Declares the Tasks extension; ``session.call_tool(allow_claimed=True)`` returns tasks."""

    identifier = TASKS

    def claims(self) -> Sequence[ResultClaim[Any]]:
        """Claim ``resultType: "task"`` without resolving it: the tests poll by hand."""
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._resolve)]

    async def _resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        raise AssertionError("tests drive tasks by hand; use session.call_tool(allow_claimed=True)")


async def start_task(session: ClientSession, tool: str, arguments: dict[str, Any]) -> CreatedTask:
    """Call a tool and insist on a ``CreateTaskResult``."""
    result = await session.call_tool(tool, arguments, allow_claimed=True)
    assert isinstance(result, CreatedTask), result
    return result


async def get_task(session: ClientSession, task_id: str) -> DetailedTask:
    """``tasks/get``."""
    return await session.send_request(
        GetTaskRequest(params=TaskIdParams(task_id=task_id)), DetailedTask
    )


async def update_task(session: ClientSession, task_id: str, responses: dict[str, Any]) -> None:
    """``tasks/update``."""
    request = UpdateTaskRequest(params=UpdateTaskParams(task_id=task_id, input_responses=responses))
    await session.send_request(request, Ack)


async def cancel_task(session: ClientSession, task_id: str) -> None:
    """``tasks/cancel``."""
    await session.send_request(CancelTaskRequest(params=TaskIdParams(task_id=task_id)), Ack)


REPLY_WITHIN_S = 30
"""How long a raw request waits for its reply before the test fails."""


async def wait_task(
    session: ClientSession,
    task_id: str,
    until: Callable[[DetailedTask], bool] = lambda t: t.status in TERMINAL,
    within: float = 30,
) -> DetailedTask:
    """Poll ``tasks/get`` at the server's poll interval until ``until`` holds (bounded)."""
    with anyio.fail_after(within):
        while True:
            task = await get_task(session, task_id)
            if until(task):
                return task
            await anyio.sleep((task.poll_interval_ms or 50) / 1000)


async def get_until_error(session: ClientSession, task_id: str, within: float = 30) -> MCPError:
    """Poll ``tasks/get`` until it fails (the task expired or was forgotten); return the error."""
    with anyio.fail_after(within):
        while True:
            try:
                task = await get_task(session, task_id)
            except MCPError as error:
                return error
            await anyio.sleep((task.poll_interval_ms or 50) / 1000)


def rows_validated(task: DetailedTask) -> int:
    """How many rows an import reports as validated in its ``statusMessage`` (0 if none yet)."""
    match = re.search(r"validated ([0-9,]+) of", task.status_message or "")
    return int(match.group(1).replace(",", "")) if match else 0


def answer(column: str) -> dict[str, Any]:
    """An accepted elicitation answer naming a column."""
    return {"action": "accept", "content": {"column": column}}


# -- processes ----------------------------------------------------------------------------------


def free_port() -> int:
    """A free loopback port (bind port 0, read it, release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stdio_params(
    store: Path, *flags: str, env: dict[str, str] | None = None
) -> StdioServerParameters:
    """Spawn parameters for ``python -m mooring.demo_server`` over stdio."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", SERVER_MODULE, "--store", str(store), *BASE_FLAGS, *flags],
        env={**os.environ, **(env or {})},
    )


@dataclass
class HttpServer:
    """A demo server subprocess serving Streamable HTTP on loopback."""

    url: str
    process: subprocess.Popen[bytes]
    store: Path
    stderr: Path

    def kill(self) -> None:
        """SIGKILL, and reap (so its pid reads as dead at once)."""
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it lingers."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()


@dataclass
class Servers:
    """Starts demo servers and stops every one of them, by pid, at teardown."""

    tmp_path: Path
    started: list[HttpServer] = field(default_factory=list)

    def http(self, *flags: str, store: Path | None = None) -> HttpServer:
        """Start an HTTP server and wait (bounded) until it reports its URL."""
        store = store or self.tmp_path / "store.sqlite3"
        stderr = self.tmp_path / f"server-{len(self.started)}.log"
        port = free_port()
        with stderr.open("wb") as err:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    SERVER_MODULE,
                    "--http",
                    "--port",
                    str(port),
                    "--store",
                    str(store),
                    *BASE_FLAGS,
                    *flags,
                ],
                stdout=subprocess.PIPE,
                stderr=err,
            )
        server = HttpServer(f"http://127.0.0.1:{port}/mcp", process, store, stderr)
        self.started.append(server)
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 30)
        line = process.stdout.readline().decode() if ready else ""
        if server.url not in line:
            server.stop()
            raise AssertionError(f"server did not start: {line!r}\n{stderr.read_text()}")
        return server

    def stop_all(self) -> None:
        """Stop every server this fixture started."""
        for server in self.started:
            server.stop()


def envelope(*, tasks: bool = True) -> dict[str, Any]:
    """The per-request ``_meta`` a 2026-07-28 client sends."""
    capabilities: dict[str, Any] = {"extensions": {TASKS: {}}} if tasks else {}
    return {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


def frame(
    request_id: int, method: str, params: dict[str, Any] | None = None, *, tasks: bool = True
) -> dict[str, Any]:
    """A raw JSON-RPC request with the envelope."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**(params or {}), "_meta": envelope(tasks=tasks)},
    }


def http_headers(method: str, name: str | None = None, token: str | None = None) -> dict[str, str]:
    """The headers a conforming Streamable HTTP client sends."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


async def raw_post(
    client: httpx2.AsyncClient,
    url: str,
    request_id: int,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    name: str | None = None,
    token: str | None = None,
    tasks: bool = True,
) -> tuple[int, dict[str, Any]]:
    """POST one raw JSON-RPC request; returns (HTTP status, decoded JSON-RPC reply)."""
    body = frame(request_id, method, params, tasks=tasks)
    if name is None:
        p = params or {}
        name = p.get("taskId") if method.startswith("tasks/") else p.get("name")
    response = await client.post(url, json=body, headers=http_headers(method, name, token))
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        events = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
        reply = next(e for e in events if e.get("id") == request_id)
        return response.status_code, reply
    return response.status_code, json.loads(text) if text else {}


class RawStdio:
    """Newline-delimited JSON-RPC over a server's stdio, no SDK in between."""

    def __init__(self, process: Process) -> None:
        self.process = process
        assert process.stdout is not None
        self._reader = BufferedByteReceiveStream(process.stdout)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one frame."""
        assert self.process.stdin is not None
        await self.process.stdin.send((json.dumps(message) + "\n").encode())

    async def receive(self) -> dict[str, Any]:
        """Read one frame."""
        line = await self._reader.receive_until(b"\n", 1 << 24)
        return cast(dict[str, Any], json.loads(line))

    async def request(
        self, request_id: int, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Send a request and return its reply (other frames in between are discarded)."""
        await self.send(frame(request_id, method, params))
        with anyio.fail_after(REPLY_WITHIN_S):  # a server that never answers fails the test
            while True:
                message = await self.receive()
                if message.get("id") == request_id and "method" not in message:
                    return message

    async def close(self) -> None:
        """Close stdin (the server exits on EOF), then make sure the process is gone."""
        assert self.process.stdin is not None
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self.process.stdin.aclose()
        with anyio.move_on_after(10):
            await self.process.wait()
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


def raw_stdio_command(store: Path, *flags: str) -> list[str]:
    """The command line for a stdio server driven by :class:`RawStdio`."""
    return [sys.executable, "-m", SERVER_MODULE, "--store", str(store), *BASE_FLAGS, *flags]


def write_large_csv(path: Path, rows: int) -> Path:
    """A generated supplier file (same generator as the 200,000-row sample)."""
    from mooring.demo_server.samples import write_large

    return write_large(path, rows)
