"""A server nobody at Mooring wrote: FastMCP with the third-party ``fastmcp-tasks`` extension.

``fastmcp-tasks`` runs task tools on a Docket queue; its ``memory://`` backend (the default)
keeps the queue in this process, so no Redis is needed. ``python fastmcp_tasks_server.py``
serves stdio; ``... --http`` serves Streamable HTTP on a free 127.0.0.1 port at ``/mcp`` and
prints ``listening on URL`` once the socket is bound. ``--requests LOG`` appends every message
received to ``LOG`` as a JSON line (``method``, ``tool``, ``pid``), through FastMCP middleware.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError

server = FastMCP("fastmcp-tasks-peer")
server.add_extension(TasksExtension(url="memory://"))


@server.tool(task=True)
async def crunch(n: int) -> str:
    """Count to ``n`` slowly, as a background task."""
    for _ in range(n):
        await anyio.sleep(0.05)
    return f"crunched {n}"


@server.tool(task=True)
async def linger(seconds: float) -> str:
    """Wait ``seconds`` (long enough to be cancelled)."""
    await anyio.sleep(seconds)
    return "lingered"


@server.tool(task=True)
async def explode() -> str:
    """Fail with a tool error."""
    raise ToolError("the reactor exploded")


@server.tool(task=True)
async def malfunction() -> str:
    """Fail with a JSON-RPC error (a protocol-level failure, not a tool result)."""
    raise MCPError(code=-32603, message="the backend is down")


@server.tool(task=True)
async def confirm(ctx: Context, item: str) -> str | mcp_types.InputRequiredResult:
    """Ask for confirmation (the guard pattern: return the question, get re-run with answers)."""
    answers = ctx.input_responses or {}
    answer = answers.get("confirm")
    if answer is None:
        return mcp_types.InputRequiredResult(
            input_requests={
                "confirm": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": f"Really delete {item}?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"ok": {"type": "boolean"}},
                        },
                    },
                }
            }
        )
    data = answer.model_dump(by_alias=True) if hasattr(answer, "model_dump") else dict(answer)
    content = data.get("content") or {}
    return f"deleted {item}" if content.get("ok") else f"kept {item}"


@server.tool()
def echo(text: str) -> str:
    """Answer at once (not a task tool)."""
    return text


def serve_http() -> None:
    """Bind 127.0.0.1 on a free port first, say where, then serve (the caller waits on the line)."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.http_app(), log_level="warning", lifespan="on")
    sys.stdout.write(f"listening on http://127.0.0.1:{port}/mcp\n")
    sys.stdout.flush()
    anyio.run(uvicorn.Server(config).serve, [sock])


class RequestLog(Middleware):
    """Append every message received to a JSONL file (the tests count ``tools/call``)."""

    def __init__(self, log: Path) -> None:
        self.log = log

    async def on_message(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        params = getattr(context.message, "params", None)
        tool = getattr(params, "name", None) or getattr(context.message, "name", None)
        entry = {"method": context.method, "tool": tool, "pid": os.getpid()}
        with self.log.open("a") as out:
            out.write(json.dumps(entry) + "\n")
        return await call_next(context)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--requests", type=Path)
    options = parser.parse_args()
    if options.requests:
        server.add_middleware(RequestLog(options.requests))
    if options.http:
        serve_http()
    else:
        server.run(show_banner=False)
