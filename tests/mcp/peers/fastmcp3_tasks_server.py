"""A server nobody at Mooring wrote: FastMCP 3.4 (``fastmcp`` 3.4.11) with its own Tasks
support (``task=True`` tools run on an in-process Docket, ``memory://``).

Runs in ``tests/peers_py``'s interpreter (see ``tests/helpers/py_peers.py``). ``--requests LOG``
logs every request received (JSONL); ``--http`` serves Streamable HTTP on a free 127.0.0.1 port
at ``/mcp`` and prints ``listening on URL``; stdio otherwise.

Tools: ``slow_job {seconds}`` and ``ask_job`` (asks for a colour with ``ctx.elicit``: FastMCP
3.4 says ``input_required`` in a status notification, then sends a plain
``elicitation/create``, without the related-task ``_meta``), both tasks; ``ask_now`` asks the
same during a plain call.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import anyio
from fastmcp import Context, FastMCP
from peer_request_log import record_requests, serve_asgi

server = FastMCP("fastmcp3-tasks-peer")


@dataclass
class Colour:
    colour: str


@server.tool(task=True)
async def slow_job(seconds: float = 1) -> str:
    """Work for ``seconds``, as a task."""
    await anyio.sleep(seconds)
    return f"slow_job finished after {seconds} s"


@server.tool(task=True)
async def ask_job(ctx: Context) -> str:
    """Ask for a colour, then end with it."""
    answer = await ctx.elicit("Which colour?", response_type=Colour)
    if answer.action != "accept":
        return f"no colour ({answer.action})"
    return f"colour: {answer.data.colour}"


@server.tool()
async def ask_now(ctx: Context) -> str:
    """Ask for a colour during a plain call (not a task)."""
    answer = await ctx.elicit("Which colour, now?", response_type=Colour)
    if answer.action != "accept":
        return f"no colour ({answer.action})"
    return f"colour: {answer.data.colour}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--requests", type=Path)
    options = parser.parse_args()
    if options.requests:
        record_requests(options.requests)
    if options.http:
        serve_asgi(server.http_app())
    else:
        server.run(show_banner=False)
