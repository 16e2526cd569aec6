"""A server nobody at Mooring wrote: the official Python SDK 1.x (``mcp`` 1.30) low-level
``Server`` with its *experimental* Tasks support (the 2025-11-25 wire).

Its tasks live in this process's memory (``InMemoryTaskStore``), and their ids embed the
creating session (``<session scope>:<uuid>``): the SDK's handlers serve a task only to the
session that created it. Runs in ``tests/peers_py``'s interpreter (see
``tests/helpers/py_peers.py``). ``--requests LOG`` logs every request received (JSONL);
``--http`` serves Streamable HTTP on a free 127.0.0.1 port (or ``--port``) at ``/mcp`` and
prints ``listening on URL``; stdio otherwise.

Tools (all task-required): ``slow_job {seconds}`` (ends after ``seconds``), ``ask_job`` (asks
for a colour through the task's ``input_required`` side channel, then ends with it).
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from peer_request_log import logged_deletes, record_requests, serve_asgi

server: Server[Any, Any] = Server("sdk1-tasks-peer")
server.experimental.enable_tasks()

TASK = types.ToolExecution(taskSupport=types.TASK_REQUIRED)


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [
        types.Tool(
            name="slow_job",
            description="Work for `seconds`, as a task.",
            inputSchema={"type": "object", "properties": {"seconds": {"type": "number"}}},
            execution=TASK,
        ),
        types.Tool(
            name="ask_job",
            description="Ask for a colour, then end with it.",
            inputSchema={"type": "object", "properties": {}},
            execution=TASK,
        ),
    ]


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


@server.call_tool()
async def call_tool(name: str, arguments: dict[str, Any]) -> types.CreateTaskResult:
    ctx = server.request_context
    ctx.experimental.validate_task_mode(types.TASK_REQUIRED)

    async def slow(task: ServerTaskContext) -> types.CallToolResult:
        seconds = float(arguments.get("seconds", 1))
        await task.update_status(f"working for {seconds} s")
        await anyio.sleep(seconds)
        return text(f"slow_job finished after {seconds} s")

    async def ask(task: ServerTaskContext) -> types.CallToolResult:
        answer = await task.elicit(
            message="Which colour?",
            requestedSchema={
                "type": "object",
                "properties": {"colour": {"type": "string"}},
                "required": ["colour"],
            },
        )
        if answer.action != "accept" or not answer.content:
            return text(f"no colour ({answer.action})")
        return text(f"colour: {answer.content['colour']}")

    work = {"slow_job": slow, "ask_job": ask}[name]
    return await ctx.experimental.run_task(work)


def http_app() -> Any:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Mount

    manager = StreamableHTTPSessionManager(app=server)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--requests", type=Path)
    parser.add_argument("--port", type=int, default=0)
    options = parser.parse_args()
    if options.requests:
        record_requests(options.requests)
    if options.http:
        app = http_app()
        serve_asgi(logged_deletes(app, options.requests) if options.requests else app, options.port)
    else:
        anyio.run(serve_stdio)
